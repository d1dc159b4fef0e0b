import type { ServerResponse } from 'node:http';

/** Faults the sandbox injects, for testing clients' recovery (see `SandboxOptions.faults`). */
export interface FaultOptions {
  /** Close each stream connection after N lines written (0/undefined = never). */
  dropStreamAfterLines?: number;
  /** How many connections to drop that way in total (default Infinity). */
  dropStreams?: number;
  /** Stop writing heartbeats (and prices) on streams while true. */
  stallHeartbeats?: boolean;
  /** Share 0..1 of REST requests answered 500/503 with a v20 error body. */
  errorRate?: number;
  /** The next N REST requests get 429 (with Retry-After: 1). */
  rateLimitBurst?: number;
  /** Write stream lines in pieces (each byte, or N-byte chunks), flushing between. */
  splitLines?: 'byte' | number;
  /** Share 0..1 of stream lines preceded by a malformed line. */
  corruptLineRate?: number;
  /** Deterministic fault choice. */
  seed?: number;
}

/** Seeded uniform [0, 1) generator (mulberry32): the same seed gives the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Counters shared with `Sandbox.stats()`. */
export interface FaultCounters {
  linesWritten: number;
  droppedStreams: number;
}

/**
 * The fault state of a running sandbox: which REST requests fail and how stream lines are written.
 * Replaced as a whole by `setFaults`.
 */
export class Faults {
  opts: FaultOptions = {};
  #random: () => number = seededRandom(1);
  #burst = 0;
  #dropsLeft = Infinity;

  constructor(f: FaultOptions | undefined) {
    this.set(f ?? {});
  }

  set(f: FaultOptions): void {
    this.opts = { ...f };
    this.#random = seededRandom(f.seed ?? 1);
    this.#burst = f.rateLimitBurst ?? 0;
    this.#dropsLeft = f.dropStreams ?? Infinity;
  }

  /** The fault for a REST request: 429, 500/503, or undefined to serve it. */
  rest(): { status: number; body: { errorMessage: string; errorCode?: string }; headers?: Record<string, string> } | undefined {
    if (this.#burst > 0) {
      this.#burst--;
      return { status: 429, body: { errorMessage: 'Rate limit violation. Allowed rate: 100 requests per second (sandbox fault injection).', errorCode: 'RATE_LIMIT' }, headers: { 'Retry-After': '1' } };
    }
    const rate = this.opts.errorRate ?? 0;
    if (rate > 0 && this.#random() < rate) {
      const status = this.#random() < 0.5 ? 500 : 503;
      return { status, body: { errorMessage: status === 500 ? 'Internal server error (sandbox fault injection).' : 'Service unavailable (sandbox fault injection).' } };
    }
    return undefined;
  }

  get stalled(): boolean {
    return this.opts.stallHeartbeats === true;
  }

  /**
   * Writes one line (text ending in \n) to a stream under the current faults. Returns false when the
   * connection was dropped (the caller forgets it). Split lines are written piece by piece, yielding
   * to the event loop between pieces so each leaves as its own chunk; a per-connection chain keeps
   * the lines in order.
   */
  writeLine(conn: StreamConn, line: string, counters: FaultCounters): boolean {
    const corrupt = this.opts.corruptLineRate ?? 0;
    if (corrupt > 0 && this.#random() < corrupt) this.#write(conn, '{"type":"PRICE","instrument":\n');
    this.#write(conn, line);
    conn.lines++;
    counters.linesWritten++;
    const after = this.opts.dropStreamAfterLines ?? 0;
    if (after > 0 && conn.lines >= after && this.#dropsLeft > 0) {
      this.#dropsLeft--;
      counters.droppedStreams++;
      conn.chain = conn.chain.then(() => {
        // End the socket (its queued bytes still go out) without the HTTP terminating chunk: the
        // client sees the connection cut mid-stream, as when a network path drops.
        const socket = conn.res.socket;
        if (!socket) {
          conn.res.destroy();
          return;
        }
        socket.end();
        setTimeout(() => socket.destroy(), 1000).unref();
      });
      return false;
    }
    return true;
  }

  #write(conn: StreamConn, text: string): void {
    const split = this.opts.splitLines;
    if (split === undefined) {
      conn.chain = conn.chain.then(() => {
        if (!conn.res.destroyed && !conn.res.writableEnded) conn.res.write(text);
      });
      return;
    }
    const buf = Buffer.from(text, 'utf8');
    const n = split === 'byte' ? 1 : Math.max(1, Math.floor(split));
    conn.chain = conn.chain.then(async () => {
      for (let i = 0; i < buf.length; i += n) {
        if (conn.res.destroyed || conn.res.writableEnded) return;
        conn.res.write(buf.subarray(i, i + n));
        await new Promise<void>((r) => setImmediate(r));
      }
    });
  }
}

/** One open stream connection. */
export interface StreamConn {
  readonly res: ServerResponse;
  lines: number;
  chain: Promise<void>;
}
