import type { Subscription } from 'rxjs';
import type { TickWriter } from '../../adapters/catalog/tick-store.ts';
import type { V20Http } from '../../adapters/v20/http.ts';
import {
  newStreamStats,
  pricingStream,
  type PricingStreamOptions,
  type StreamStats,
} from '../../adapters/v20/stream.ts';
import { formatTime, parseTime, type UnixMs } from '../../domain/time.ts';
import type { ClientPrice, PricingHeartbeat } from '../../domain/v20/index.ts';

export interface PriceRecorderOptions {
  readonly http: V20Http;
  readonly accountID: string;
  readonly instruments: readonly string[];
  readonly writer: TickWriter;
  /** Flush when this many ticks wait (default 1000): memory stays bounded whatever the stream's rate. */
  readonly flushTicks?: number;
  /** Flush at least this often while ticks wait (default 5000 ms): what a kill -9 can lose. */
  readonly flushMs?: number;
  /** The receive time (knownAt) of a tick (default Date.now). */
  readonly now?: () => UnixMs;
  /** Called after each flush that wrote ticks. */
  readonly onFlush?: (written: number) => void;
  /** Called when the stream ends with an error it does not reconnect from (401, 403, 404). */
  readonly onError?: (e: Error) => void;
  readonly stream?: Omit<PricingStreamOptions, 'stats'>;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * Records an account's pricing stream into the catalog (tick-store.ts): every PRICE line of the
 * instruments asked for (heartbeats are not ticks), with its own time and the time it was
 * received. The stream reconnects by itself with backoff (stream.ts); a reconnect's snapshot
 * repeats the last price, which the writer does not record twice.
 */
export class PriceRecorder {
  readonly stats = { ticks: 0, heartbeats: 0, flushes: 0, malformed: 0 };
  readonly streamStats: StreamStats = newStreamStats();
  readonly #o: PriceRecorderOptions;
  readonly #wanted: Set<string>;
  #sub: Subscription | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failed = false;

  constructor(o: PriceRecorderOptions) {
    this.#o = o;
    this.#wanted = new Set(o.instruments);
  }

  start(): void {
    const flushMs = this.#o.flushMs ?? 5000;
    this.#timer = setInterval(() => this.#safeFlush(), flushMs);
    this.#timer.unref();
    this.#sub = pricingStream(this.#o.http, this.#o.accountID, this.#o.instruments, {
      ...this.#o.stream,
      stats: this.streamStats,
    }).subscribe({
      next: (v) => this.#onLine(v),
      error: (e: unknown) => this.#o.onError?.(e instanceof Error ? e : new Error(String(e))),
    });
  }

  #onLine(v: ClientPrice | PricingHeartbeat): void {
    if (v.type === 'HEARTBEAT') {
      this.stats.heartbeats++;
      return;
    }
    const p = v as ClientPrice;
    const now = (this.#o.now ?? Date.now)();
    const instrument = p.instrument;
    const bid = p.bids[0]?.price ?? p.closeoutBid;
    const ask = p.asks[0]?.price ?? p.closeoutAsk;
    const at = p.time !== undefined ? parseTime(p.time) : Number.NaN;
    if (
      instrument === undefined ||
      !this.#wanted.has(instrument) ||
      Number.isNaN(at) ||
      bid === undefined ||
      ask === undefined
    ) {
      this.stats.malformed++;
      return;
    }
    const time = RFC3339.test(p.time!) ? p.time! : formatTime(at);
    if (this.#o.writer.add(instrument, { time, at, bid, ask, knownAt: now })) this.stats.ticks++;
    if (this.#o.writer.buffered >= (this.#o.flushTicks ?? 1000)) this.#safeFlush();
  }

  /** A flush that cannot write (a full disk, a folder gone) stops the recorder through `onError`, never as an uncaught exception. */
  #safeFlush(): void {
    if (this.#failed) return;
    try {
      this.flush();
    } catch (e) {
      this.#failed = true;
      this.#sub?.unsubscribe();
      if (this.#timer) clearInterval(this.#timer);
      this.#o.onError?.(new Error(`cannot write ticks to ${this.#o.writer.root}: ${(e as Error).message}`));
    }
  }

  /** Writes the ticks that wait; returns how many. */
  flush(): number {
    if (this.#o.writer.buffered === 0) return 0;
    const n = this.#o.writer.flush();
    this.stats.flushes++;
    this.#o.onFlush?.(n);
    return n;
  }

  /** Stops the stream and writes what waits (nothing after a failed write: the writer's state is unknown). */
  stop(): void {
    this.#sub?.unsubscribe();
    this.#sub = undefined;
    if (this.#timer) clearInterval(this.#timer);
    this.#safeFlush();
  }
}
