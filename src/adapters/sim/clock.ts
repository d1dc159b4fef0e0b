import { nextRollover } from '../../domain/new-york.ts';
import type { UnixMs } from '../../domain/time.ts';
import { cancelOrder } from './cancels.ts';
import { dailyFinancing } from './financing.ts';
import type { SimOrder } from './orders.ts';
import type { SimState } from './state.ts';

/**
 * What happens as time passes: the 17:00 New York rollovers (DAILY_FINANCING, financing.ts) and the
 * expiry of GTD/GFD orders (TIME_IN_FORCE_EXPIRED), in the order of their times whatever the step
 * (one step over a day gives the transactions of many small steps, byte for byte), each stamped
 * with its own time, then the clock moves on. A rollover and an expiry at the same instant (a GFD
 * order at 17:00 New York): the rollover first.
 */

/** Moves the simulator's clock to `t`: the rollovers and expiries up to it first, earliest first. */
export function advance(s: SimState, t: UnixMs): void {
  for (;;) {
    const r = s.nextRollover;
    const e = s.nextExpiry;
    if (r <= t && r <= e) {
      s.nextRollover = nextRollover(r);
      rollover(s, r);
    } else if (e <= t) {
      expire(s, e);
    } else break;
  }
  if (t > s.now) s.now = t;
}

/**
 * Cancels the orders due at `at`, the earliest expiry (TIME_IN_FORCE_EXPIRED, stamped then, or at
 * the clock when it is already past), and finds the next expiry. No allocation: the ledger's
 * pending orders are walked in place (a cancel removes its own entry, which a Map walk allows).
 */
function expire(s: SimState, at: UnixMs): void {
  let next = Infinity;
  if (at > s.now) s.now = at;
  for (const p of s.ledger.pendingOrders.values()) {
    const o = p as SimOrder;
    if (o.live !== true) continue;
    if (o.expiresAt <= at) {
      s.tx.begin();
      cancelOrder(s, o, 'TIME_IN_FORCE_EXPIRED');
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
