// Where HTTP/1.1 messages begin and end in a byte stream, for the fault proxy (test/fault-proxy.ts):
// it must know which reply belongs to which request on a keep-alive connection, and hand bytes on
// unchanged. Handles Content-Length, chunked transfer coding (with trailers) and bodies that run to
// the connection's close; enough for undici and the sandbox, not a general HTTP implementation.

/** A message's start line and headers (names lower-cased). */
export interface HttpHead {
  /** `GET /v3/accounts HTTP/1.1` or `HTTP/1.1 200 OK`. */
  readonly startLine: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** What the framer reports, in byte order. `bytes` are the message's own bytes, framing included. */
export interface FramerSink {
  head(head: HttpHead, bytes: Buffer): void;
  /** `payload`: the bytes are the body's content, not chunk framing. */
  body(bytes: Buffer, payload: boolean): void;
  end(): void;
}

type BodyMode = { kind: 'none' } | { kind: 'length'; left: number } | { kind: 'chunked' } | { kind: 'close' };

/**
 * Splits one direction of a connection into messages. `bodyless(head)` says whether a message has
 * no body whatever its headers (a reply to HEAD, 1xx, 204, 304); requests without length have none.
 */
export class HttpFramer {
  #buf: Buffer = Buffer.alloc(0);
  #mode: BodyMode | undefined; // undefined: reading a head
  #chunk: 'size' | 'data' | 'data-crlf' | 'trailer' = 'size';
  #chunkLeft = 0;
  readonly #kind: 'request' | 'response';
  readonly #sink: FramerSink;
  readonly #bodyless: (head: HttpHead) => boolean;

  constructor(
    kind: 'request' | 'response',
    sink: FramerSink,
    bodyless: (head: HttpHead) => boolean = () => false,
  ) {
    this.#kind = kind;
    this.#sink = sink;
    this.#bodyless = bodyless;
  }

  feed(b: Buffer): void {
    this.#buf = this.#buf.length === 0 ? b : Buffer.concat([this.#buf, b]);
    while (this.#step());
  }

  /** One parsing step; false when more bytes are needed. */
  #step(): boolean {
    const buf = this.#buf;
    if (buf.length === 0) return false;
    const mode = this.#mode;
    if (mode === undefined) {
      const at = buf.indexOf('\r\n\r\n');
      if (at < 0) {
        if (buf.length > 1 << 20) throw new Error(`http framing: a ${this.#kind} head longer than 1 MiB`);
        return false;
      }
      const raw = buf.subarray(0, at + 4);
      const head = parseHead(raw.toString('latin1'));
      this.#buf = buf.subarray(at + 4);
      this.#mode = this.#bodyMode(head);
      this.#chunk = 'size';
      this.#sink.head(head, raw);
      if (this.#mode.kind === 'none' || (this.#mode.kind === 'length' && this.#mode.left === 0))
        this.#finish();
      return true;
    }
    switch (mode.kind) {
      case 'close':
        this.#take(buf.length, true);
        return false;
      case 'length': {
        const n = Math.min(mode.left, buf.length);
        mode.left -= n;
        this.#take(n, true);
        if (mode.left === 0) this.#finish();
        return true;
      }
      case 'chunked':
        return this.#chunkStep(buf);
      case 'none':
        this.#finish();
        return true;
    }
  }

  #chunkStep(buf: Buffer): boolean {
    if (this.#chunk === 'data') {
      const n = Math.min(this.#chunkLeft, buf.length);
      this.#chunkLeft -= n;
      this.#take(n, true);
      if (this.#chunkLeft === 0) this.#chunk = 'data-crlf';
      return n > 0;
    }
    const eol = buf.indexOf('\r\n');
    if (eol < 0) return false;
    const line = buf.subarray(0, eol).toString('latin1');
    this.#take(eol + 2, false);
    if (this.#chunk === 'data-crlf') {
      this.#chunk = 'size';
      return true;
    }
    if (this.#chunk === 'size') {
      const size = Number.parseInt(line.split(';')[0]!.trim(), 16);
      if (!Number.isFinite(size))
        throw new Error(`http framing: bad chunk size line ${JSON.stringify(line)}`);
      if (size === 0) this.#chunk = 'trailer';
      else {
        this.#chunk = 'data';
        this.#chunkLeft = size;
      }
      return true;
    }
    // Trailer lines end with an empty line, which ends the message.
    if (line === '') this.#finish();
    return true;
  }

  #take(n: number, payload: boolean): void {
    if (n === 0) return;
    const part = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(n);
    this.#sink.body(part, payload);
  }

  #finish(): void {
    this.#mode = undefined;
    this.#sink.end();
  }

  #bodyMode(head: HttpHead): BodyMode {
    if (this.#bodyless(head)) return { kind: 'none' };
    if ((head.headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked'))
      return { kind: 'chunked' };
    const length = head.headers['content-length'];
    if (length !== undefined) return { kind: 'length', left: Number(length) };
    return this.#kind === 'request' ? { kind: 'none' } : { kind: 'close' };
  }
}

function parseHead(text: string): HttpHead {
  const lines = text.slice(0, -4).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const c = l.indexOf(':');
    if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
  }
  return { startLine: lines[0] ?? '', headers };
}

/** Whether a reply has no body whatever its headers (RFC 9112 §6.3). */
export function replyIsBodyless(requestMethod: string, head: HttpHead): boolean {
  const status = Number(head.startLine.split(' ')[1]);
  return requestMethod === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 304;
}
