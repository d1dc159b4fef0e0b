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
  /**
   * Candle requests (GET .../instruments/{i}/candles) only: every one is answered with this HTTP
   * status (500, 502, 503 or 504) and a v20 error body while set. For testing a live run's fallback.
   */
  candleFailStatus?: number;
  /**
   * Candle requests only: answered after this many real ms. A list gives the delays of successive
   * candle requests, its last entry repeating (e.g. [1500, 0]: the first is slow, the rest not).
   */
  candleDelayMs?: number | number[];
  /**
   * Candles whose close is less than this many ms (sandbox time) before the sandbox's now are
   * served with `complete: false`, as v20 may right after a period ends.
   */
  candleCompleteLagMs?: number;
  /**
   * The simulator's slippage from now on, as `fill.slippage` names it: "none", "fixed:<pips>",
   * "spread:<fraction>" (src/adapters/sim/slippage.ts). Market orders, stops, stop losses and
   * trailing stops fill that much worse; limits, take profits and guaranteed stops never slip.
   * Absent: the sandbox's own (`SandboxOptions.fill`, default none).
   */
  slippage?: string;
  /**
   * The simulator's latency from now on, as `fill.latency` names it: "none", "fixed:<ms>",
   * "file:<path of recorded ms>" (src/adapters/sim/latency.ts). An order decided at sandbox time T
   * reaches the simulator at T + delay; a market order (or a close) fills at the price of that time,
   * and its HTTP answer waits for the sandbox clock to get there (docs/sandbox.md). Absent: the
   * sandbox's own (`SandboxOptions.fill`, default none).
   */
  latency?: string;
}

/** A fault option that cannot work; the control endpoint answers it with 400. */
export class FaultError extends Error {
  readonly code = 'SANDBOX_FAULT' as const;
  constructor(message: string) {
    super(message);
    this.name = 'FaultError';
  }
}

const nonNegative = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Checks the candle faults (the others are read as given). Throws a `FaultError` naming the field. */
export function checkCandleFaults(f: FaultOptions): void {
  const s = f.candleFailStatus;
  if (s !== undefined && !(s === 500 || s === 502 || s === 503 || s === 504)) {
    throw new FaultError(
      `faults.candleFailStatus must be 500, 502, 503 or 504 (got ${JSON.stringify(s)}); leave it out to serve candles`,
    );
  }
  const d = f.candleDelayMs;
  if (d !== undefined && !(nonNegative(d) || (Array.isArray(d) && d.length > 0 && d.every(nonNegative)))) {
    throw new FaultError(
      `faults.candleDelayMs must be milliseconds >= 0, or a non-empty list of them (got ${JSON.stringify(d)})`,
    );
  }
  if (f.candleCompleteLagMs !== undefined && !nonNegative(f.candleCompleteLagMs)) {
    throw new FaultError(
      `faults.candleCompleteLagMs must be milliseconds >= 0 (got ${JSON.stringify(f.candleCompleteLagMs)})`,
    );
  }
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
  /** Streams closed because their reader stopped reading (the slow-consumer bound). */
  slowStreamsClosed: number;
}

/**
 * How long a stream may stay unwritable before it is closed, as a server treats a consumer that
 * stops reading: bytes queued in the process beyond what the socket took, or real ms since a write
 * was last refused and no drain came. Whichever comes first.
 */
export interface StreamLimits {
  /** Default 512 KiB. */
  maxQueuedBytes: number;
  /** Default 10,000. */
  maxBlockedMs: number;
}
export const DEFAULT_STREAM_LIMITS: StreamLimits = { maxQueuedBytes: 512 * 1024, maxBlockedMs: 10_000 };

/**
 * The fault state of a running sandbox: which REST requests fail and how stream lines are written.
 * Replaced as a whole by `setFaults`.
 */
export class Faults {
  opts: FaultOptions = {};
  #random: () => number = seededRandom(1);
  #burst = 0;
  #dropsLeft = Infinity;
  #candleRequests = 0;

  constructor(f: FaultOptions | undefined) {
    this.set(f ?? {});
  }

  set(f: FaultOptions): void {
    checkCandleFaults(f);
    this.opts = { ...f };
    this.#candleRequests = 0;
    this.#random = seededRandom(f.seed ?? 1);
    this.#burst = f.rateLimitBurst ?? 0;
    this.#dropsLeft = f.dropStreams ?? Infinity;
  }

  /** The fault for a REST request: 429, 500/503, or undefined to serve it. */
  rest():
    | { status: number; body: { errorMessage: string; errorCode?: string }; headers?: Record<string, string> }
    | undefined {
    if (this.#burst > 0) {
      this.#burst--;
      return {
        status: 429,
        body: {
          errorMessage:
            'Rate limit violation. Allowed rate: 100 requests per second (sandbox fault injection).',
          errorCode: 'RATE_LIMIT',
        },
        headers: { 'Retry-After': '1' },
      };
    }
    const rate = this.opts.errorRate ?? 0;
    if (rate > 0 && this.#random() < rate) {
      const status = this.#random() < 0.5 ? 500 : 503;
      return {
        status,
        body: {
          errorMessage:
            status === 500
              ? 'Internal server error (sandbox fault injection).'
              : 'Service unavailable (sandbox fault injection).',
        },
      };
    }
    return undefined;
  }

  /**
   * The fault for a candle request, once its delay (if any) has passed: an error reply, or
   * undefined to serve it. Call once per candle request (it counts them for the delay list).
   */
  async candles(): Promise<{ status: number; body: { errorMessage: string } } | undefined> {
    const d = this.opts.candleDelayMs;
    const n = this.#candleRequests++;
    const ms = d === undefined ? 0 : typeof d === 'number' ? d : d[Math.min(n, d.length - 1)]!;
    if (ms > 0) await new Promise<void>((r) => setTimeout(r, ms));
    const status = this.opts.candleFailStatus;
    if (status === undefined) return undefined;
    return {
      status,
      body: {
        errorMessage: `Candles are unavailable (sandbox fault injection: candleFailStatus ${status}).`,
      },
    };
  }

  /** How long after its close a candle is still served incomplete (sandbox ms). */
  get candleCompleteLagMs(): number {
    return this.opts.candleCompleteLagMs ?? 0;
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
    if (conn.res.destroyed) return false;
    if (this.#slow(conn)) {
      // A reader that stopped reading: closed, as a real server drops a slow consumer, so its
      // queue stops growing (memory stays bounded whatever the readers do).
      counters.slowStreamsClosed++;
      conn.res.destroy();
      return false;
    }
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

  /** Whether the stream's reader is past the slow-consumer bound (bytes queued, or blocked too long). */
  #slow(conn: StreamConn): boolean {
    const res = conn.res;
    if (res.writableLength + conn.held.length > conn.limits.maxQueuedBytes) return true;
    if (!res.writableNeedDrain) {
      conn.blockedSince = undefined;
      return false;
    }
    const now = Date.now();
    conn.blockedSince ??= now;
    return now - conn.blockedSince > conn.limits.maxBlockedMs;
  }

  #write(conn: StreamConn, text: string): void {
    const split = this.opts.splitLines;
    if (split === undefined) {
      // Written at once when no split write is on its way (no promise per line); else after it.
      if (conn.busy === 0) {
        if (conn.res.writableEnded) return;
        if (conn.res.writableNeedDrain || conn.held !== '') {
          // The socket is full: the line waits in one string until it drains (not as a write of
          // its own each: thousands of small queued writes cost memory, and their callbacks time
          // when the stream is closed).
          conn.held += text;
          if (!conn.drainHooked) {
            conn.drainHooked = true;
            conn.res.once('drain', () => flushHeld(conn));
          }
          return;
        }
        conn.res.write(text);
        return;
      }
      conn.busy++;
      conn.chain = conn.chain.then(() => {
        conn.busy--;
        if (conn.held !== '') flushHeld(conn);
        if (!conn.res.destroyed && !conn.res.writableEnded) conn.res.write(text);
      });
      return;
    }
    const buf = Buffer.from(text, 'utf8');
    const n = split === 'byte' ? 1 : Math.max(1, Math.floor(split));
    conn.busy++;
    conn.chain = conn.chain.then(async () => {
      try {
        if (conn.held !== '') flushHeld(conn);
        for (let i = 0; i < buf.length; i += n) {
          if (conn.res.destroyed || conn.res.writableEnded) return;
          conn.res.write(buf.subarray(i, i + n));
          await new Promise<void>((r) => setImmediate(r));
        }
      } finally {
        conn.busy--;
      }
    });
  }
}

/** Writes what waited for the socket to drain (lines arriving meanwhile wait again if it fills). */
function flushHeld(conn: StreamConn): void {
  conn.drainHooked = false;
  const text = conn.held;
  conn.held = '';
  if (text !== '' && !conn.res.destroyed && !conn.res.writableEnded) conn.res.write(text);
}

/** One open stream connection. */
export interface StreamConn {
  readonly res: ServerResponse;
  lines: number;
  chain: Promise<void>;
  /** Writes waiting in `chain` (split lines, and the lines after them): while any, new lines queue behind. */
  busy: number;
  /** Lines waiting for the socket to drain, and whether a drain listener is set. */
  held: string;
  drainHooked: boolean;
  /** When a write was first refused with no drain since (real ms), or undefined. */
  blockedSince: number | undefined;
  readonly limits: StreamLimits;
}
