/**
 * Helpers for tests that talk to a running sandbox over real HTTP: JSON calls and a line collector
 * for streams. Use them in `src/sandbox/*.test.ts` (and contract tests); nothing here is mocked.
 */

/** A JSON call: status, headers and parsed body. */
export interface Answer<T = Record<string, unknown>> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

/** Sends a JSON request and parses the JSON answer. */
export async function call<T = Record<string, any>>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === '' ? {} : JSON.parse(text)) as T };
}

/** A stream being read: every complete line so far, raw chunk count, and whether it ended. */
export interface LineReader {
  readonly lines: string[];
  readonly chunks: Uint8Array[];
  readonly status: number;
  readonly headers: Headers;
  ended: boolean;
  /** Resolves when `pred` holds (polled), rejects after `timeoutMs`. */
  until(pred: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): void;
}

/** Opens a stream and collects its lines in the background. */
export async function readLines(url: string, headers: Record<string, string> = {}): Promise<LineReader> {
  const ac = new AbortController();
  const res = await fetch(url, { headers, signal: ac.signal });
  const r: LineReader = {
    lines: [],
    chunks: [],
    status: res.status,
    headers: res.headers,
    ended: false,
    async until(pred, timeoutMs = 3000, what = 'condition') {
      const t0 = Date.now();
      while (!pred()) {
        if (Date.now() - t0 > timeoutMs)
          throw new Error(`timed out waiting for ${what}; lines so far: ${r.lines.slice(-5).join(' | ')}`);
        await new Promise((done) => setTimeout(done, 10));
      }
    },
    close() {
      ac.abort();
    },
  };
  void (async () => {
    const decoder = new TextDecoder();
    let rest = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        r.chunks.push(chunk);
        rest += decoder.decode(chunk, { stream: true });
        let i: number;
        while ((i = rest.indexOf('\n')) >= 0) {
          r.lines.push(rest.slice(0, i));
          rest = rest.slice(i + 1);
        }
      }
    } catch {
      // Aborted or dropped: `ended` tells the test.
    }
    r.ended = true;
  })();
  return r;
}

/** Parses the lines that are valid JSON (a malformed line is skipped, as clients must do). */
export function jsonLines(lines: readonly string[]): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  for (const l of lines) {
    try {
      out.push(JSON.parse(l) as Record<string, any>);
    } catch {
      // skipped
    }
  }
  return out;
}

/** A raw HTTP answer: status, lower-cased headers and the body text. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Sends bytes as they are over a TCP socket (no HTTP client to fix them up: malformed request lines,
 * oversized bodies) and reads the answer until the server closes the connection. Send
 * `Connection: close` in well-formed requests. Rejects when the connection is reset or closed
 * without an answer.
 */
export async function rawHttp(url: string, request: string | Buffer): Promise<RawAnswer> {
  const { connect } = await import('node:net');
  const u = new URL(url);
  return new Promise((done, fail) => {
    const socket = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', fail);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const head = text.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m || head < 0) {
        fail(
          new Error(
            `no HTTP answer (the connection closed after ${text.length} bytes: ${JSON.stringify(text.slice(0, 80))})`,
          ),
        );
        return;
      }
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, head).split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = text.slice(head + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let out = '';
        for (let rest = body; ;) {
          const nl = rest.indexOf('\r\n');
          const n = parseInt(rest.slice(0, nl), 16);
          if (!(n > 0)) break;
          out += rest.slice(nl + 2, nl + 2 + n);
          rest = rest.slice(nl + 2 + n + 2);
        }
        body = out;
      }
      done({ status: Number(m[1]), headers, body });
    });
    socket.write(request);
  });
}
