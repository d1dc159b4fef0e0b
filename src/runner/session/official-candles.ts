import type { Logger } from 'pino';
import { toCandle } from '../../adapters/v20/download.ts';
import { V20Error } from '../../adapters/v20/errors.ts';
import type { Candle } from '../../domain/candle.ts';
import type { Granularity } from '../../domain/granularity.ts';
import { formatTime, parseTime } from '../../domain/time.ts';
import type { Candlestick } from '../../domain/v20/index.ts';

/**
 * Where a live run's candles come from. 'endpoint': when a bucket ends, the candles endpoint's
 * own candle for it (what a backtest's catalog was downloaded from). 'ticks': the candle built from
 * the pricing stream's ticks (throttled by OANDA, so its high/low can miss the real extremes).
 */
export type LiveCandleSource = 'endpoint' | 'ticks';

/** Checks a candle source given by a user (`--candles`, the runner option). */
export function liveCandleSourceOf(v: unknown, field = '--candles'): LiveCandleSource {
  if (v === 'endpoint' || v === 'ticks') return v;
  throw new RangeError(
    `${field} must be 'endpoint' (the candles endpoint's official candle for each period, the default) or 'ticks' (candles built from the pricing stream); got ${JSON.stringify(v)}`,
  );
}

/** Candle counts of a run, for its status line and report. */
export interface CandleCounts {
  readonly source: LiveCandleSource;
  /** Delivered as the candles endpoint served them. */
  official: number;
  /** Delivered as built from ticks: the 'ticks' source, or the endpoint's fallback. */
  fromTicks: number;
  /** Completed, waiting for their official candle (or for an earlier one of their instrument). */
  pending: number;
  /** Never delivered: the run stopped while they waited. */
  dropped: number;
}

/**
 * What the feed gives each attempt of a fetch: pass both on to the request (`V20Rest.candles`
 * takes them as they are). `signal` aborts when the attempt's share of the wait runs out or the
 * feed closes; `retry: false` because the feed retries itself, within its wait.
 */
export interface CandleFetchOptions {
  readonly signal: AbortSignal;
  readonly retry: false;
}

/**
 * Fetches the candles endpoint's candles from `from` (a period's open, epoch ms) on. The runner's:
 * `(instrument, granularity, from, o) => rest.candles(instrument, { granularity, price: 'BA', from, count: 1 }, o)`;
 * bid and ask are needed. A fetch that ignores `o` still works (the feed stops waiting for it at
 * the same moments) but is not cancelled: it then runs on in the background, its answer ignored,
 * and the transport's own retries add requests the feed does not see.
 */
export type CandleFetch = (
  instrument: string,
  granularity: Granularity,
  from: number,
  o: CandleFetchOptions,
) => Promise<{ readonly candles: readonly Candlestick[] }>;

/** Options of `LiveCandleFeed`. */
export interface LiveCandleFeedOptions {
  readonly source: LiveCandleSource;
  /** Hands a candle to the engine. Called in order per instrument, never re-entered by the feed. */
  /** `official`: the candles endpoint's candle; false: built from ticks (the 'ticks' source, or the fallback). */
  readonly deliver: (c: Candle, official: boolean) => void;
  /** Needed with the 'endpoint' source. */
  readonly fetch?: CandleFetch;
  readonly log: Logger;
  /** Longest wait for one official candle, retries included (default 10 s); then the tick-built one. */
  readonly waitMs?: number;
  /** First pause between attempts (default 250 ms); doubles up to 2 s, never past the wait. */
  readonly retryMs?: number;
}

/** One completed period of one series, waiting for its delivery. */
interface Slot {
  readonly built: Candle;
  out: Candle | undefined;
}

const NEVER = Symbol('timeout');

/**
 * Delivers a live run's completed candles: as built from ticks, or (the 'endpoint' source) as the
 * candles endpoint serves them, fetched when the tick-built bucket completes.
 *
 * Endpoint source: each completed bucket gets its official candle by `from = bucket open, count = 1`,
 * retried with a doubling pause while the endpoint says `complete: false` or has no candle for it
 * yet, or fails (5xx, network); at most `waitMs` in all. A candle the endpoint will not give (the
 * wait passed, a 4xx, a later candle served in its place) is replaced by the tick-built one, with a
 * warning naming instrument, granularity, period and reason, and is counted in `fromTicks`.
 * Each attempt is one request (the transport's retries off: `retry: false`) with a signal that
 * aborts at what is left of the wait, or when the feed closes: a request still running then is
 * cancelled and its connection closed, so `waitMs` bounds both the time and the requests spent on
 * one candle, and nothing runs on after the fallback or the stop.
 *
 * Order: one queue per instrument, in completion order. A candle is delivered once every candle of
 * its instrument completed before it has been; so the candles of one series arrive in time order,
 * and candles of one instrument closing at the same instant arrive in subscription order (as built
 * from ticks, and as a backtest's merge puts them). Fetches run concurrently; only delivery waits.
 * Ticks never wait: the engine keeps getting them while a fetch runs, so a candle usually reaches
 * the engine after the first tick at or after its close, and possibly after later ticks. Its `at`
 * stays its close (as in backtests and warm-up): the engine's clock never moves back, a handler's
 * `ctx.now` is the candle's close.
 */
export class LiveCandleFeed {
  readonly counts: CandleCounts;
  readonly #o: LiveCandleFeedOptions;
  readonly #waitMs: number;
  readonly #retryMs: number;
  readonly #queues = new Map<string, Slot[]>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  constructor(o: LiveCandleFeedOptions) {
    liveCandleSourceOf(o.source, 'the runner option candles');
    if (o.source === 'endpoint' && o.fetch === undefined)
      throw new TypeError('LiveCandleFeed: the endpoint source needs a fetch function');
    const wait = o.waitMs ?? 10_000;
    if (!(wait >= 0 && Number.isFinite(wait)))
      throw new RangeError(`candle wait must be a number of milliseconds >= 0 (got ${wait})`);
    this.#o = o;
    this.#waitMs = wait;
    this.#retryMs = Math.max(1, o.retryMs ?? 250);
    this.counts = { source: o.source, official: 0, fromTicks: 0, pending: 0, dropped: 0 };
  }

  /** A tick-built candle completed (undefined: nothing completed). */
  add(built: Candle | undefined): void {
    if (built === undefined) return;
    if (this.#stop.signal.aborted) {
      this.counts.dropped++;
      return;
    }
    if (this.#o.source === 'ticks') {
      this.counts.fromTicks++;
      this.#o.deliver(built, false);
      return;
    }
    let q = this.#queues.get(built.instrument);
    if (q === undefined) this.#queues.set(built.instrument, (q = []));
    const slot: Slot = { built, out: undefined };
    q.push(slot);
    this.counts.pending++;
    const queue = q;
    const p = this.#official(built)
      .catch((e: unknown) => {
        // #official handles every failure of a fetch; this is a bug, but the candle still goes out.
        this.#o.log.error(
          { err: e, instrument: built.instrument, granularity: built.granularity },
          'official candle: unexpected failure; the candle built from ticks is delivered instead',
        );
        return built;
      })
      .then((c) => {
        slot.out = c;
        this.#flush(queue);
      });
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  /** Resolves when every candle completed so far has been delivered (or given up): at most about `waitMs`. */
  async drain(): Promise<void> {
    await Promise.all([...this.#inFlight]);
  }

  /** Stops: waiting candles are dropped (counted), pauses end and fetches in flight are aborted at once. Idempotent. */
  close(): void {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    let n = 0;
    for (const q of this.#queues.values()) {
      n += q.length;
      q.length = 0;
    }
    this.counts.pending -= n;
    this.counts.dropped += n;
    if (n > 0)
      this.#o.log.info(
        { dropped: n },
        'run stopped with candles waiting for the candles endpoint; not delivered',
      );
  }

  /** Delivers the head of an instrument's queue while it is resolved. */
  #flush(q: Slot[]): void {
    while (q.length > 0) {
      const head = q[0]!;
      const c = head.out;
      if (c === undefined) return;
      q.shift();
      this.counts.pending--;
      const official = c !== head.built;
      if (official) this.counts.official++;
      else this.counts.fromTicks++;
      try {
        this.#o.deliver(c, official);
      } catch (e) {
        // The next candles must not stall behind one the engine could not take.
        this.#o.log.error(
          { err: e, instrument: c.instrument, granularity: c.granularity },
          'delivering a candle failed',
        );
      }
    }
  }

  /** The official candle of a completed bucket, or the bucket itself when the endpoint will not give it in time. */
  async #official(built: Candle): Promise<Candle> {
    const fetch = this.#o.fetch!;
    const { instrument, granularity, time } = built;
    const t0 = Date.now();
    const deadline = t0 + this.#waitMs;
    let pause = this.#retryMs;
    let attempts = 0;
    let reason = `no attempt within ${this.#waitMs} ms`;
    for (;;) {
      if (this.#stop.signal.aborted) return built;
      const left = deadline - Date.now();
      if (left <= 0 && attempts > 0) break;
      attempts++;
      let final = false;
      try {
        const attempt = new AbortController();
        const res = await this.#within(
          fetch(instrument, granularity, time, { signal: attempt.signal, retry: false }),
          Math.max(left, 1),
          attempt,
        );
        if (res === NEVER) {
          reason = `no answer within the ${this.#waitMs} ms wait${attempts > 1 ? ` (the attempt before: ${reason})` : ''}`;
          break;
        }
        let later = false;
        let found: Candlestick | undefined;
        for (const c of res.candles) {
          const t = parseTime(c.time);
          if (t === time) found = c;
          else if (t > time && c.complete) later = true;
        }
        if (found !== undefined && found.complete) {
          const c = toCandle(found, instrument, granularity, 'BA');
          if (attempts > 1)
            this.#o.log.debug(
              { instrument, granularity, candleTime: formatTime(time), attempts, ms: Date.now() - t0 },
              'official candle after retries',
            );
          return c;
        }
        if (found !== undefined) reason = 'the endpoint still marks the candle incomplete (complete: false)';
        else if (later) {
          reason = 'the endpoint has no candle for this period (it serves a later one)';
          final = true;
        } else reason = 'the endpoint has no candle for this period yet';
      } catch (e) {
        const err = e as Error;
        reason = err.message; // a V20Error's names the request and the HTTP status
        // A 4xx, a body that is not v20, a candle without bid/ask: waiting does not help.
        final = !(err instanceof V20Error && err.retryable);
      }
      if (final) break;
      const wait = Math.min(pause, deadline - Date.now());
      if (wait <= 0) break;
      await this.#pause(wait);
      pause = Math.min(pause * 2, 2000);
    }
    if (this.#stop.signal.aborted) return built;
    this.#o.log.warn(
      { instrument, granularity, candleTime: formatTime(time), reason, attempts, waitedMs: Date.now() - t0 },
      'official candle unavailable; the candle built from ticks is delivered instead',
    );
    return built;
  }

  /**
   * The promise's value, or NEVER once `ms` passed or the feed closed; then `attempt` is aborted
   * (after NEVER is settled, so the fetch's abort rejection is ignored) and the request it carries
   * is cancelled.
   */
  #within<T>(p: Promise<T>, ms: number, attempt: AbortController): Promise<T | typeof NEVER> {
    const signal = this.#stop.signal;
    return new Promise<T | typeof NEVER>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', closed);
      };
      const giveUp = (why: string): void => {
        done();
        resolve(NEVER);
        attempt.abort(new Error(why));
      };
      const expired = (): void => giveUp(`the ${this.#waitMs} ms candle wait passed`);
      const closed = (): void => giveUp('the run stopped');
      const timer = setTimeout(expired, ms);
      signal.addEventListener('abort', closed, { once: true });
      p.then(
        (v) => {
          done();
          resolve(v);
        },
        (e: unknown) => {
          done();
          reject(e);
        },
      );
    });
  }

  #pause(ms: number): Promise<void> {
    const signal = this.#stop.signal;
    return new Promise<void>((resolve) => {
      const stop = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', stop);
        resolve();
      }, ms);
      signal.addEventListener('abort', stop, { once: true });
    });
  }
}
