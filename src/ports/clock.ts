import type { UnixMs } from '../domain/time.ts';

/**
 * The engine's notion of now. In backtests it is virtual and moves with the events
 * (`advance`); live it is the wall clock and `advance` only records the last event time.
 * Strategies read it through `ctx.now`, never `Date.now()`.
 */
export interface Clock {
  now(): UnixMs;
  advance(to: UnixMs): void;
}

/** A clock that moves only when told: the backtest clock. */
export class VirtualClock implements Clock {
  #now: UnixMs;
  constructor(start: UnixMs = 0) {
    this.#now = start;
  }
  now(): UnixMs {
    return this.#now;
  }
  advance(to: UnixMs): void {
    if (to > this.#now) this.#now = to;
  }
}

/** The wall clock, for paper and live runs. */
export class WallClock implements Clock {
  now(): UnixMs {
    return Date.now();
  }
  advance(): void {}
}
