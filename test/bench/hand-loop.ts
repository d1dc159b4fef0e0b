/**
 * The bench's hand-written loop (`npm run bench`, `npm run bench:guard`): the engine's trading with
 * plain numbers and no framework, the floor the engine is compared with.
 */
import type { Candle } from '../../src/domain/candle.ts';
import { weekendClosure } from '../../src/domain/new-york.ts';

/** The exits of the bench's second variant, in price units (as sma-cross-exits.ts's params). */
export const HAND_LOOP_EXITS = { tp: 0.0015, sl: 0.001, trailing: 0.0008 };

/**
 * The hand-written loop: the same decisions and fills with plain numbers and no framework.
 * SMAs on mid closes; on a change of sign, a market order for the difference to the target
 * position, filled at the next candle's open on the ask (buy) or bid (sell); P/L in USD. Like
 * v20 (and the simulator), an order decided in the weekend closure is not filled (MARKET_HALTED).
 *
 * With `exits`, every entry carries a take profit, a stop loss and a trailing stop, checked in that
 * order at each point of the candle's path: the open (a gap fills there, at the market), the
 * extreme nearer to the open, the other extreme, the close; crossed inside the candle, an exit
 * fills at its level; an untouched trailing stop ratchets in the trade's favour.
 */
export function handLoop(
  batches: Iterable<readonly Candle[]>,
  exits: boolean,
): { count: number; fills: number; balance: number } {
  const EXITS = HAND_LOOP_EXITS;
  const fastN = 10,
    slowN = 30,
    size = 10000;
  const snap = (x: number): number => Math.round(x * 1e5) / 1e5;
  const fb = new Float64Array(fastN),
    sb = new Float64Array(slowN);
  let fi = 0,
    si = 0,
    fc = 0,
    sc = 0,
    fs = 0,
    ss = 0;
  let signal = 0,
    pending = 0,
    balance = 100000,
    fills = 0,
    count = 0;
  // The one open trade (the target is always ±size or flat): signed units, open price, exit levels.
  let units = 0,
    open = 0,
    tp = 0,
    sl = 0,
    ts = 0;
  let closure = { from: -Infinity, to: -Infinity };
  const realize = (px: number): void => {
    balance += Math.round((px - open) * units * 1e4) / 1e4;
    units = 0;
  };
  const exitAt = (bid: number, ask: number, gap: boolean): void => {
    if (units === 0) return;
    const long = units > 0;
    const own = long ? bid : ask; // exits of a long sell at the bid, of a short buy at the ask
    if (long ? bid >= tp : ask <= tp) {
      realize(gap ? own : tp);
      fills++;
    } else if (long ? bid <= sl : ask >= sl) {
      realize(gap ? own : sl);
      fills++;
    } else if (long ? bid <= ts : ask >= ts) {
      realize(gap ? own : ts);
      fills++;
    } else {
      const next = snap(long ? bid - EXITS.trailing : ask + EXITS.trailing);
      if (long ? next > ts : next < ts) ts = next;
    }
  };
  for (const batch of batches) {
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      count++;
      if (pending !== 0) {
        const px = pending > 0 ? c.ao : c.bo;
        let rest = pending;
        // Reduce first (the whole trade: sizes are equal), then open the rest (netting).
        if (units !== 0 && units > 0 !== pending > 0) {
          rest += units;
          realize(px);
        }
        if (rest !== 0) {
          if (units === 0) {
            units = rest;
            open = px;
          } else {
            open = (open * units + px * rest) / (units + rest);
            units += rest;
          }
          if (exits) {
            const dir = rest > 0 ? 1 : -1;
            tp = snap(px + dir * EXITS.tp);
            sl = snap(px - dir * EXITS.sl);
            ts = snap((dir > 0 ? c.bo : c.ao) - dir * EXITS.trailing);
          }
        }
        fills++;
        pending = 0;
      }
      if (exits && units !== 0) {
        exitAt(c.bo, c.ao, true);
        const mo = c.bo + c.ao;
        if (c.bh + c.ah - mo <= mo - c.bl - c.al) {
          exitAt(c.bh, c.ah, false);
          exitAt(c.bl, c.al, false);
        } else {
          exitAt(c.bl, c.al, false);
          exitAt(c.bh, c.ah, false);
        }
        exitAt(c.bc, c.ac, false);
      }
      const mid = (c.bc + c.ac) / 2;
      fs += mid - fb[fi]!;
      fb[fi] = mid;
      fi = fi + 1 === fastN ? 0 : fi + 1;
      if (fc < fastN) fc++;
      ss += mid - sb[si]!;
      sb[si] = mid;
      si = si + 1 === slowN ? 0 : si + 1;
      if (sc < slowN) sc++;
      if ((count & 4095) === 0) {
        // Running sums drift: re-add the windows now and then (the engine's SMA does the same).
        fs = 0;
        for (let k = 0; k < fastN; k++) fs += fb[k]!;
        ss = 0;
        for (let k = 0; k < slowN; k++) ss += sb[k]!;
      }
      if (sc < slowN) continue;
      const f = fs / fastN,
        s = ss / slowN;
      const sig = f > s ? 1 : f < s ? -1 : signal;
      if (sig !== signal) {
        signal = sig;
        if (c.at >= closure.to) closure = weekendClosure(c.at);
        if (c.at < closure.from) pending = sig * size - units; // else: halted, nothing fills
      }
    }
  }
  return { count, fills, balance };
}
