import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../domain/v20/index.ts';
import { formatTime } from '../domain/time.ts';
import { attribute, compareDecisions, QuoteTrack, type AttributionContext, type Decision } from './reconcile.ts';
import type { Divergence } from './shadow.ts';

const T0 = Date.UTC(2024, 0, 2, 10);
const r5 = (x: number): number => Math.round(x * 1e5) / 1e5;

/** A recorded path of quotes one second apart, and a decision on quote `k`. */
function setup(bids: readonly number[], spread: number, k: number, buy: boolean, live: { price: number; at: number; fullBid?: number; fullAsk?: number }, replay: { price: number; at: number }, fill: 'current' | 'next' = 'current') {
  const track = new QuoteTrack();
  bids.forEach((b, i) => track.add(T0 + i * 1000, b, r5(b + spread)));
  const decided = T0 + k * 1000;
  const tx = { id: '10', type: 'ORDER_FILL', time: formatTime(live.at), orderID: '9', instrument: 'EUR_USD', units: buy ? '1000' : '-1000', price: live.price.toFixed(5), fullPrice: { bids: [{ price: (live.fullBid ?? bids[k]!).toFixed(5) }], asks: [{ price: (live.fullAsk ?? r5(bids[k]! + spread)).toFixed(5) }] } } as unknown as Transaction;
  const ctx: AttributionContext = { quotes: new Map([['EUR_USD', track]]), decidedAt: new Map([['c1', decided]]), fill, toleranceMs: 1000, restarts: [], liveFills: new Map([['c1', tx]]) };
  const d: Divergence = {
    clientID: 'c1', live: { outcome: 'FILLED', price: live.price.toFixed(5), time: formatTime(live.at) }, sim: { outcome: 'FILLED', price: replay.price.toFixed(5), time: formatTime(replay.at) },
    differs: [...(live.price.toFixed(5) !== replay.price.toFixed(5) ? ['price'] : []), ...(Math.abs(live.at - replay.at) > 1000 ? ['time'] : [])],
    priceDiff: live.price - replay.price, timeDiffMs: live.at - replay.at,
  };
  return { d, ctx, decided, track };
}

const bidsArb = fc.array(fc.integer({ min: 109_000, max: 111_000 }).map((x) => x / 1e5), { minLength: 8, maxLength: 20 });

describe('reconciliation: each fill difference gets its cause', () => {
  it('a live fill worse than the quote at its decision, on time: slippage, with the pips (fast-check)', () => {
    fc.assert(fc.property(bidsArb, fc.boolean(), fc.integer({ min: 1, max: 30 }), (bids, buy, tenths) => {
      const k = 2;
      const q = buy ? r5(bids[k]! + 0.00015) : bids[k]!;
      const slipped = r5(q + (buy ? 1 : -1) * tenths * 0.00001);
      const { d, ctx } = setup(bids, 0.00015, k, buy, { price: slipped, at: T0 + k * 1000 }, { price: q, at: T0 + k * 1000 });
      const f = attribute(d, 'c1', ctx);
      expect(f.cause).toBe('slippage');
      expect(f.explanation).toContain(`${(tenths / 10).toFixed(1)} pips worse than the quote when it arrived`);
    }));
  });

  it('a live fill later than the tolerance after its decision: latency, whatever its price (fast-check)', () => {
    fc.assert(fc.property(bidsArb, fc.boolean(), fc.integer({ min: 1001, max: 5000 }), (bids, buy, delay) => {
      const k = 1;
      const at = T0 + k * 1000 + delay;
      const track = new QuoteTrack();
      bids.forEach((b, i) => track.add(T0 + i * 1000, b, r5(b + 0.00015)));
      const later = track.atOrBefore(at)!;
      const { d, ctx } = setup(bids, 0.00015, k, buy, { price: buy ? later.a : later.b, at }, { price: buy ? r5(bids[k]! + 0.00015) : bids[k]!, at: T0 + k * 1000 });
      const f = attribute(d, 'c1', ctx);
      expect(f.cause).toBe('latency');
      expect(f.explanation).toContain(`filled it ${delay} ms after the decision (a late fill)`);
    }));
  });

  it('--fill next: OANDA at the quote of the decision, the simulator at the next: next-price; another spread at OANDA: spread', () => {
    const bids = [1.1, 1.1002, 1.1004, 1.1001];
    const a = setup(bids, 0.00015, 1, true, { price: r5(1.1002 + 0.00015), at: T0 + 1000 }, { price: r5(1.1004 + 0.00015), at: T0 + 2000 }, 'next');
    expect(attribute(a.d, 'c1', a.ctx).cause).toBe('next-price');
    // OANDA's own quote 3 pips wide, the fill at its ask; the recorded quote 1.5 pips wide.
    const b = setup(bids, 0.00015, 1, true, { price: r5(1.1002 + 0.0003), at: T0 + 1000, fullAsk: r5(1.1002 + 0.0003) }, { price: r5(1.1002 + 0.00015), at: T0 + 1000 });
    const f = attribute(b.d, 'c1', b.ctx);
    expect(f.cause).toBe('spread');
    expect(f.explanation).toContain('a spread of 3.0 pips');
  });

  it('rejections on one side only, and a missing outcome', () => {
    const { ctx } = setup([1.1, 1.1], 0.00015, 0, true, { price: 1.10015, at: T0 }, { price: 1.10015, at: T0 });
    const base = { clientID: 'c1', differs: ['outcome'] };
    expect(attribute({ ...base, live: { outcome: 'REJECTED', reason: 'INSUFFICIENT_MARGIN' }, sim: { outcome: 'FILLED', price: '1.10015' } }, 'c1', ctx).cause).toBe('rejection-live-only');
    expect(attribute({ ...base, live: { outcome: 'FILLED', price: '1.10015' }, sim: { outcome: 'CANCELLED', reason: 'MARKET_HALTED' } }, 'c1', ctx).cause).toBe('rejection-replay-only');
    expect(attribute({ ...base, live: { outcome: 'PENDING' }, sim: { outcome: 'FILLED', price: '1.10015' } }, 'c1', ctx).cause).toBe('missed-or-late-event');
    expect(attribute({ ...base, live: { outcome: 'PENDING' }, sim: { outcome: 'FILLED', price: '1.10015' } }, 'c1', { ...ctx, restarts: [T0 + 500] }).cause).toBe('restart');
  });
});

describe('reconciliation: decisions', () => {
  it('the first parting is the first pair that differs, by content or by the event it followed; client IDs do not count', () => {
    const d = (id: string, units: string, after: number): Decision => ({ intent: { kind: 'order', id, request: { type: 'MARKET', instrument: 'EUR_USD', units, clientExtensions: { id } } as never }, after, at: 0 });
    const ref = (seq: number) => ({ seq, kind: 'tick', time: '', where: `f line ${seq}` });
    expect(compareDecisions([d('a-1', '1000', 3), d('a-2', '-1000', 6)], [d('b-1', '1000', 3), d('b-2', '-1000', 6)], ref).diffs).toEqual([]);
    const c = compareDecisions([d('a-1', '1000', 3), d('a-2', '-1000', 6), d('a-3', '1000', 9)], [d('b-1', '1000', 3), d('b-2', '-1000', 7)], ref);
    expect(c.first).toMatchObject({ index: 1, what: 'event', live: { after: { where: 'f line 6' } }, replay: { after: { where: 'f line 7' } } });
    expect(c.diffs.map((x) => x.what)).toEqual(['event', 'live-only']);
    expect(compareDecisions([d('a-1', '1000', 3)], [d('b-1', '2000', 3)], ref).first?.what).toBe('content');
  });
});
