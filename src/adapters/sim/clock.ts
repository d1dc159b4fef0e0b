import { nextRollover } from '../../domain/new-york.ts';
import type { UnixMs } from '../../domain/time.ts';
import { cancelOrder } from './cancels.ts';
import { dailyFinancing } from './financing.ts';
import type { SimState } from './state.ts';

/**
 * What happens as time passes: the 17:00 New York rollovers (DAILY_FINANCING, financing.ts) and the
 * expiry of GTD/GFD orders (TIME_IN_FORCE_EXPIRED), each stamped with its own time, then the clock
 * moves on.
 */

/** Moves the simulator's clock to `t`: the rollovers and expiries up to it first. */
export function advance(s: SimState, t: UnixMs): void {
  // Rollovers and expiries are stamped with their own time, then the clock moves on to t.
  while (t >= s.nextRollover) {
    const at = s.nextRollover;
    s.nextRollover = nextRollover(at);
    rollover(s, at);
  }
  if (t >= s.nextExpiry) expire(s, t);
  if (t > s.now) s.now = t;
}

/** Cancels every order expired at `t` (TIME_IN_FORCE_EXPIRED, stamped at its expiry) and finds the next expiry. */
function expire(s: SimState, t: UnixMs): void {
  let next = Infinity;
  for (const o of s.liveOrders()) {
    if (o.expiresAt <= t) {
      const saved = s.now;
      s.now = Math.max(saved, o.expiresAt);
      s.tx.begin();
      cancelOrder(s, o, 'TIME_IN_FORCE_EXPIRED');
      s.now = saved;
    } else if (o.expiresAt < next) next = o.expiresAt;
  }
  s.nextExpiry = next;
}

/** DAILY_FINANCING for the trades held at a 17:00 New York rollover (financing.ts). */
function rollover(s: SimState, at: UnixMs): void {
  const draft = dailyFinancing(s.ledger, at, s.instruments, s.quotes, s.conversion, s.opts.financingRates);
  if (draft === undefined) return;
  const saved = s.now;
  s.now = at;
  s.tx.begin();
  s.tx.emit(draft);
  s.now = Math.max(saved, at);
}
