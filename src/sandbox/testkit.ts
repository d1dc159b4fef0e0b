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
export async function call<T = Record<string, any>>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
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
        if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}; lines so far: ${r.lines.slice(-5).join(' | ')}`);
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
