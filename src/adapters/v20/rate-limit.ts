/**
 * Pacing for v20: a token bucket that also never grants more than `perSecond` in any 1-second
 * window, and the jittered exponential backoff used between retries and reconnects.
 *
 * OANDA's published budget is about 100 requests per second on a connection and 2 new
 * connections per second. A plain token bucket of capacity B refilled at r/s lets B + r requests
 * through a 1-second window (a full bucket, then the refill); the window cap closes that gap, so a
 * full burst is allowed but never more than `perSecond` in any window of 1000 ms.
 */

export interface RateLimitOptions {
  /** Grants per second, sustained, and the most in any 1000 ms window. */
  readonly perSecond: number;
  /** Bucket capacity: how many may go at once after a quiet spell (≤ perSecond is sensible). */
  readonly burst: number;
  /** Milliseconds; injected in tests so that no test sleeps. Default `Date.now`. */
  readonly now?: () => number;
}

/** The length of the window that `perSecond` caps. */
export const WINDOW_MS = 1000;

/**
 * Use one per budget: one for requests on a host, one for new connections.
 * `tryAcquire()` is the synchronous core (testable with a fake clock); `acquire()` waits.
 */
export class RateLimiter {
  readonly perSecond: number;
  readonly burst: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;
  /** Ring of the last `perSecond` grant times; #ring[#head] is the oldest. */
  readonly #ring: Float64Array;
  #head = 0;
  #tail: Promise<void> = Promise.resolve();

  constructor(o: RateLimitOptions) {
    if (!(o.perSecond >= 1) || !Number.isInteger(o.perSecond))
      throw new RangeError(`rate.perSecond must be an integer ≥ 1, got ${o.perSecond}`);
    if (!(o.burst >= 1) || !Number.isInteger(o.burst))
      throw new RangeError(`rate.burst must be an integer ≥ 1, got ${o.burst}`);
    this.perSecond = o.perSecond;
    this.burst = o.burst;
    this.#now = o.now ?? Date.now;
    this.#tokens = o.burst;
    this.#last = this.#now();
    this.#ring = new Float64Array(o.perSecond).fill(-Infinity);
  }

  /**
   * Takes a grant now if the budget allows and returns 0; otherwise takes nothing and returns
   * how many milliseconds to wait before trying again (> 0).
   */
  tryAcquire(): number {
    const t = this.#now();
    if (t > this.#last) {
      this.#tokens = Math.min(this.burst, this.#tokens + ((t - this.#last) * this.perSecond) / WINDOW_MS);
      this.#last = t;
    }
    const oldest = this.#ring[this.#head]!;
    const windowWait = oldest + WINDOW_MS - t;
    const tokenWait = this.#tokens >= 1 ? 0 : ((1 - this.#tokens) * WINDOW_MS) / this.perSecond;
    const wait = Math.max(windowWait, tokenWait);
    if (wait > 0) return Math.max(1, Math.ceil(wait));
    this.#tokens -= 1;
    this.#ring[this.#head] = t;
    this.#head = (this.#head + 1) % this.perSecond;
    return 0;
  }

  /** Waits (first come, first served) until a grant is possible, then takes it. */
  acquire(signal?: AbortSignal): Promise<void> {
    const mine = this.#tail.then(() => this.#waitGrant(signal));
    this.#tail = mine.catch(() => undefined);
    return mine;
  }

  async #waitGrant(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const wait = this.tryAcquire();
      if (wait === 0) return;
      await sleep(wait, signal);
    }
  }
}

/**
 * Full-jitter exponential backoff: a uniform delay in [0, min(cap, base·2^attempt)], at least
 * `base / 2` so that a reconnect storm still spreads out. `attempt` starts at 0.
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.max(baseMs / 2, random() * ceiling);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
