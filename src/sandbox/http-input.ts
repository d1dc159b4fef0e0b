import { STATUS_CODES, type IncomingMessage } from 'node:http';

/**
 * The sandbox's defences against hostile HTTP input: request targets that are not URLs, oversized
 * URLs and bodies, JSON nested too deep to process, and request lines or headers Node's parser
 * refuses. Each becomes a v20-shaped 4xx answer (`{"errorMessage": ...}`); none may take the
 * server down or reach a handler.
 */

/** Longest request target (path and query) served; a longer one is a 414. */
export const MAX_URL_LENGTH = 8192;
/** Largest request body read (1 MiB: a v20 order request is well under 10 KiB). */
export const MAX_BODY_BYTES = 1 << 20;
/** A body up to this size past the limit is read and dropped so the client sees the 413; larger ones are cut. */
export const MAX_DRAIN_BYTES = 64 << 20;
/** Deepest JSON nesting accepted in a body (v20 requests nest 4 levels). */
export const MAX_JSON_DEPTH = 64;

/** An input the sandbox refuses before any handler runs: status, message, optional v20 errorCode. */
export class InputError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode?: string,
  ) {
    super(message);
    this.name = 'InputError';
  }
}

/**
 * The URL of a request target. Origin form (`/v3/...`) is always read as a path, even when it starts
 * with `//` (which `new URL(target, base)` would read as a host); absolute form (`http://host/...`)
 * is accepted as HTTP/1.1 requires. Anything else, or a target that is not a URL, is a 400.
 */
export function requestTarget(raw: string, base: string): URL {
  if (raw.length > MAX_URL_LENGTH)
    throw new InputError(414, `Request URL too long (${raw.length} characters; at most ${MAX_URL_LENGTH})`);
  try {
    if (raw.startsWith('/')) return new URL(`${base}${raw}`);
    if (/^https?:\/\//i.test(raw)) {
      const u = new URL(raw);
      return new URL(`${base}${u.pathname}${u.search}`);
    }
  } catch {
    // reported below
  }
  throw new InputError(
    400,
    `Invalid request URL ${JSON.stringify(raw.slice(0, 200))}: give a path such as /v3/accounts`,
  );
}

/** A path segment, percent-decoded; a malformed escape is a 400 naming the segment. */
export function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new InputError(400, `Invalid percent-encoding in the URL path segment '${s.slice(0, 200)}'`);
  }
}

/**
 * Reads a request body as UTF-8, at most `MAX_BODY_BYTES`. A larger body is a 413 once it has
 * been read and dropped (up to `MAX_DRAIN_BYTES`), so the client gets the answer instead of a reset
 * connection; beyond that the connection is cut.
 */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const declared = Number(req.headers['content-length']);
    const tooLarge = (): InputError =>
      new InputError(
        413,
        `Request body too large (${Number.isFinite(declared) ? `${declared} bytes` : 'over the limit'}; at most ${MAX_BODY_BYTES} bytes, 1 MiB)`,
      );
    if (Number.isFinite(declared) && declared > MAX_DRAIN_BYTES) {
      fail(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        over = true;
        chunks.length = 0;
        if (size > MAX_DRAIN_BYTES) {
          fail(tooLarge());
          req.destroy();
        }
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => (over ? fail(tooLarge()) : done(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', fail);
  });
}

/**
 * Parses a JSON request body. Nesting deeper than `MAX_JSON_DEPTH` and `__proto__` keys are refused
 * with a 400 before anything walks the value (deep nesting overflows the stack of recursive
 * checks; `__proto__` is not a v20 field and trips lookups in plain-object tables).
 */
export function parseJsonBody(text: string): unknown {
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH)
    throw new InputError(
      400,
      `Invalid JSON in the request body: nested ${depth} levels deep (at most ${MAX_JSON_DEPTH})`,
    );
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new InputError(400, `Invalid JSON in the request body: ${(e as Error).message}`);
  }
  if (text.includes('__proto__')) {
    const at = protoPath(v, '');
    if (at !== undefined)
      throw new InputError(
        400,
        `Invalid request body: '__proto__' (at ${at || 'the top'}) is not a v20 field`,
      );
  }
  return v;
}

/** The deepest nesting of arrays and objects in JSON text (brackets inside strings ignored). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

function protoPath(v: unknown, at: string): string | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  for (const k of Object.keys(v)) {
    const here = at ? `${at}.${k}` : k;
    if (k === '__proto__') return here;
    const inner = protoPath((v as Record<string, unknown>)[k], here);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/**
 * The raw HTTP/1.1 answer to a request Node's parser refused (the `clientError` event): a v20 body,
 * `Connection: close`. A request line or header block over the limit is a 414 when the request line
 * alone is too long, else a 431; a method Node does not know is a 405; anything else a 400.
 */
export function clientErrorResponse(
  err: Error & { code?: string; rawPacket?: Buffer },
  requestID: string,
): string {
  let status = 400;
  let message = `Malformed HTTP request (${err.code ?? 'parse error'}): the sandbox speaks HTTP/1.1 with JSON bodies`;
  if (err.code === 'HPE_HEADER_OVERFLOW' || err.code === 'HPE_URI_TOO_LONG') {
    const packet = err.rawPacket;
    const lineEnd = packet ? packet.indexOf('\r\n') : -1;
    if (err.code === 'HPE_URI_TOO_LONG' || lineEnd < 0 || lineEnd > MAX_URL_LENGTH) {
      status = 414;
      message = `Request URL too long (at most ${MAX_URL_LENGTH} characters)`;
    } else {
      status = 431;
      message = 'Request header fields too large';
    }
  } else if (err.code === 'HPE_INVALID_METHOD') {
    status = 405;
    message = 'Method not allowed: the sandbox serves GET, POST, PUT and PATCH';
  }
  const body = JSON.stringify({ errorMessage: message });
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRequestID: ${requestID}\r\nConnection: close\r\n\r\n${body}`;
}
