import type { Candle } from '../../domain/candle.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { SimOrder } from './orders.ts';

/**
 * Fill pricing: the path a candle's prices are assumed to take (the path models), and the price a
 * resting order fills at when a point of that path triggers it. Slippage (slippage.ts) is applied on
 * top by execute.ts `execute`, for the fills that can slip.
 */

/** The path models: the order of a candle's extremes. */
export type PathModel = 'adaptive' | 'worst' | 'exact';

/**
 * Whether the candle's high comes before its low. adaptive: the extreme nearer to the open first
 * (decided on mid). worst: the extreme adverse to the open position first (`net`: the instrument's
 * net units; flat falls back to adaptive). exact is decided by ticks, before this is asked.
 */
export function highFirst(c: Candle, path: PathModel | undefined, net: number): boolean {
  const mo = c.bo + c.ao;
  let high = c.bh + c.ah - mo <= mo - c.bl - c.al;
  if (path === 'worst') {
    if (net > 0) high = false;
    else if (net < 0) high = true;
  }
  return high;
}

/** One point of a candle's path, written into a reused object (nothing allocated per point). */
export interface PathPoint {
  bid: number;
  ask: number;
  t: UnixMs;
}

/**
 * Point `p` (0..3) of candle `c`'s path: open, first extreme, second extreme, close. The points are
 * spread evenly over the candle's span (the close at its end), so an order that arrives during the
 * candle (latency) meets the first point at or after its arrival.
 */
export function pathPoint(c: Candle, p: number, high: boolean, out: PathPoint): void {
  if (p === 0) {
    out.bid = c.bo;
    out.ask = c.ao;
  } else if (p === 3) {
    out.bid = c.bc;
    out.ask = c.ac;
  } else if ((p === 1) === high) {
    out.bid = c.bh;
    out.ask = c.ah;
  } else {
    out.bid = c.bl;
    out.ask = c.al;
  }
  out.t = p === 3 ? c.at : c.time + Math.floor(((c.at - c.time) * p) / 3);
}

/**
 * The price a triggered resting order fills at, before slippage: a guaranteed stop at its level, gap
 * or not (that is what its premium pays for); at a gap (the first point of a candle, or a tick) at
 * its own side's price; crossed inside a candle at its level, shifted by the spread when the trigger
 * reads another side. NaN when a limit-like order would fill worse than its price (it then waits
 * until its own side reaches the level).
 */
export function restingFillPrice(o: SimOrder, bid: number, ask: number, gap: boolean): number {
  const own = o.side === 1 ? ask : bid;
  let px: number;
  if (o.type === 'GUARANTEED_STOP_LOSS') px = o.level;
  else if (gap) px = own;
  else {
    const trig = o.trigger === 'BID' ? bid : o.trigger === 'ASK' ? ask : (bid + ask) / 2;
    px = o.level + (own - trig);
  }
  if (!o.limitLike || (o.side === 1 ? px <= o.level : px >= o.level)) return px;
  return Number.NaN;
}

/**
 * Ratchets a trailing stop at a price point, only in the trade's favour: a sell stop (long trade)
 * follows the bid up, a buy stop the ask down. Only a raw level past the current one is snapped
 * (snap is monotonic and leaves a snapped level where it is).
 */
export function ratchet(o: SimOrder, bid: number, ask: number): void {
  const raw = o.side === -1 ? bid - o.distance : ask + o.distance;
  if (o.side === -1 ? raw > o.level : raw < o.level) {
    const next = o.inst.snap(raw);
    if (o.side === -1 ? next > o.level : next < o.level) o.level = next;
  }
}

/**
 * Whether no order of `orders` can trigger anywhere in candle `c`, whatever the path: each order's
 * trigger price stays on its untriggered side over the candle's range. Trailing stops are judged at
 * the level they would ratchet to at the candle's best price (a conservative bound: a candle whose
 * range exceeds the distance walks the path). When true, the trailing stops are moved to that level,
 * which is exactly where walking the path would leave them. `scratch` holds those levels (grown by
 * the caller to at least `orders.length`).
 */
export function untouched(orders: readonly SimOrder[], c: Candle, scratch: Float64Array): boolean {
  for (let i = 0; i < orders.length; i++) {
    const o = orders[i]!;
    if (o.activeFrom > c.time || o.immediate) return false;
    let lo: number, hi: number;
    if (o.trigger === 'BID') {
      lo = c.bl;
      hi = c.bh;
    } else if (o.trigger === 'ASK') {
      lo = c.al;
      hi = c.ah;
    } else {
      lo = (c.bl + c.al) / 2;
      hi = (c.bh + c.ah) / 2;
    }
    let level = o.level;
    if (o.type === 'TRAILING_STOP_LOSS') {
      // The ratchet's level snapped as `Instrument.snap` does, written out here: this runs on every
      // candle while a trailing stop rests, and the call (which V8 does not inline at this depth)
      // cost a new heap number per candle, about a fifth of a backtest's allocation with exits.
      if (o.side === -1) {
        const raw = c.bh - o.distance;
        if (raw > level) {
          const scale = o.inst.priceScale;
          const sc = raw * scale; // snap(raw)
          const ab = Math.abs(sc);
          const next = (Math.sign(sc) * Math.round(ab + 1e-12 * Math.max(1, ab))) / scale;
          if (next > level) level = next;
        }
      } else {
        const raw = c.al + o.distance;
        if (raw < level) {
          const scale = o.inst.priceScale;
          const sc = raw * scale; // snap(raw)
          const ab = Math.abs(sc);
          const next = (Math.sign(sc) * Math.round(ab + 1e-12 * Math.max(1, ab))) / scale;
          if (next < level) level = next;
        }
      }
    }
    scratch[i] = level;
    // Limit-like buys and stop-like sells trigger at or below the level; the others at or above.
    const below = o.limitLike === (o.side === 1);
    if (below ? lo <= level : hi >= level) return false;
  }
  for (let i = 0; i < orders.length; i++) {
    const o = orders[i]!;
    if (o.type === 'TRAILING_STOP_LOSS') o.level = scratch[i]!;
  }
  return true;
}
