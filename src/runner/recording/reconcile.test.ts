import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../domain/v20/index.ts';
import { formatTime } from '../../domain/time.ts';
import {
  attribute,
  compareDecisions,
  describeAttempts,
  pairDecisions,
  QuoteTrack,
  type AttributionContext,
  type Decision,
} from './reconcile.ts';
import type { Divergence } from './shadow.ts';

const T0 = Date.UTC(2024, 0, 2, 10);
const r5 = (x: number): number => Math.round(x * 1e5) / 1e5;

/** A recorded path of quotes one second apart, and a decision on quote `k`. */
function setup(
  bids: readonly number[],
  spread: number,
  k: number,
  buy: boolean,
  live: { price: number; at: number; fullBid?: number; fullAsk?: number },
  replay: { price: number; at: number },
  fill: 'current' | 'next' = 'current',
) {
  const track = new QuoteTrack();
  bids.forEach((b, i) => track.add(T0 + i * 1000, b, r5(b + spread)));
  const decided = T0 + k * 1000;
  const tx = {
    id: '10',
    type: 'ORDER_FILL',
    time: formatTime(live.at),
    orderID: '9',
    instrument: 'EUR_USD',
    units: buy ? '1000' : '-1000',
    price: live.price.toFixed(5),
    fullPrice: {
      bids: [{ price: (live.fullBid ?? bids[k]!).toFixed(5) }],
      asks: [{ price: (live.fullAsk ?? r5(bids[k]! + spread)).toFixed(5) }],
    },
  } as unknown as Transaction;
  const ctx: AttributionContext = {
    quotes: new Map([['EUR_USD', track]]),
    decidedAt: new Map([['c1', decided]]),
    fill,
    toleranceMs: 1000,
    restarts: [],
    liveFills: new Map([['c1', tx]]),
  };
  const d: Divergence = {
    clientID: 'c1',
    live: { outcome: 'FILLED', price: live.price.toFixed(5), time: formatTime(live.at) },
    sim: { outcome: 'FILLED', price: replay.price.toFixed(5), time: formatTime(replay.at) },
    differs: [
      ...(live.price.toFixed(5) !== replay.price.toFixed(5) ? ['price'] : []),
      ...(Math.abs(live.at - replay.at) > 1000 ? ['time'] : []),
    ],
    priceDiff: live.price - replay.price,
    timeDiffMs: live.at - replay.at,
  };
  return { d, ctx, decided, track };
}

const bidsArb = fc.array(
  fc.integer({ min: 109_000, max: 111_000 }).map((x) => x / 1e5),
  { minLength: 8, maxLength: 20 },
);

describe('reconciliation: each fill difference gets its cause', () => {
  it('a live fill worse than the quote at its decision, on time: slippage, with the pips (fast-check)', () => {
    fc.assert(
      fc.property(bidsArb, fc.boolean(), fc.integer({ min: 1, max: 30 }), (bids, buy, tenths) => {
        const k = 2;
        const q = buy ? r5(bids[k]! + 0.00015) : bids[k]!;
        const slipped = r5(q + (buy ? 1 : -1) * tenths * 0.00001);
        const { d, ctx } = setup(
          bids,
          0.00015,
          k,
          buy,
          { price: slipped, at: T0 + k * 1000 },
          { price: q, at: T0 + k * 1000 },
        );
        const f = attribute(d, 'c1', ctx);
        expect(f.cause).toBe('slippage');
        expect(f.causes).toEqual(['slippage']);
        expect(f.parts!.slippage).toBeCloseTo(tenths * 0.00001, 9);
        expect(f.explanation).toContain(
          `slippage +${(tenths / 10).toFixed(1)} pips (filled at ${slipped.toFixed(5)} against the ${buy ? 'ask' : 'bid'} ${q}`,
        );
      }),
    );
  });

  it('a live fill later than the tolerance after its decision: latency, whatever its price (fast-check)', () => {
    fc.assert(
      fc.property(bidsArb, fc.boolean(), fc.integer({ min: 1001, max: 5000 }), (bids, buy, delay) => {
        const k = 1;
        const at = T0 + k * 1000 + delay;
        const track = new QuoteTrack();
        bids.forEach((b, i) => track.add(T0 + i * 1000, b, r5(b + 0.00015)));
        const later = track.atOrBefore(at)!;
        // The account's quote at the fill is the later one, and it filled there.
        const { d, ctx } = setup(
          bids,
          0.00015,
          k,
          buy,
          { price: buy ? later.a : later.b, at, fullBid: later.b, fullAsk: later.a },
          { price: buy ? r5(bids[k]! + 0.00015) : bids[k]!, at: T0 + k * 1000 },
        );
        const f = attribute(d, 'c1', ctx);
        expect(f.cause).toBe('latency');
        expect(f.causes).toEqual(['latency']);
        // The amount is the market's move between the decision and the fill, worse for the account positive.
        expect(f.parts!.latency).toBeCloseTo((buy ? 1 : -1) * (later.b - bids[k]!), 9);
        expect(f.explanation).toContain(`, ${delay} ms later)`);
      }),
    );
  });

  it('--fill next: OANDA at the quote of the decision, the simulator at the next: next-price; another spread at OANDA: spread', () => {
    const bids = [1.1, 1.1002, 1.1004, 1.1001];
    const a = setup(
      bids,
      0.00015,
      1,
      true,
      { price: r5(1.1002 + 0.00015), at: T0 + 1000 },
      { price: r5(1.1004 + 0.00015), at: T0 + 2000 },
      'next',
    );
    expect(attribute(a.d, 'c1', a.ctx).cause).toBe('next-price');
    // OANDA's own quote 3 pips wide, the fill at its ask; the recorded quote 1.5 pips wide.
    const b = setup(
      bids,
      0.00015,
      1,
      true,
      { price: r5(1.1002 + 0.0003), at: T0 + 1000, fullAsk: r5(1.1002 + 0.0003) },
      { price: r5(1.1002 + 0.00015), at: T0 + 1000 },
    );
    const f = attribute(b.d, 'c1', b.ctx);
    expect(f.cause).toBe('spread');
    expect(f.parts).toEqual({ latency: 0, spread: 0.00015, slippage: 0, nextPrice: 0 });
    expect(f.explanation).toContain('is 3.0 pips wide, the recorded one at the decision 1.5');
  });

  it('rejections on one side only, and a missing outcome', () => {
    const { ctx } = setup(
      [1.1, 1.1],
      0.00015,
      0,
      true,
      { price: 1.10015, at: T0 },
      { price: 1.10015, at: T0 },
    );
    const base = { clientID: 'c1', differs: ['outcome'] };
    expect(
      attribute(
        {
          ...base,
          live: { outcome: 'REJECTED', reason: 'INSUFFICIENT_MARGIN' },
          sim: { outcome: 'FILLED', price: '1.10015' },
        },
        'c1',
        ctx,
      ).cause,
    ).toBe('rejection-live-only');
    expect(
      attribute(
        {
          ...base,
          live: { outcome: 'FILLED', price: '1.10015' },
          sim: { outcome: 'CANCELLED', reason: 'MARKET_HALTED' },
        },
        'c1',
        ctx,
      ).cause,
    ).toBe('rejection-replay-only');
    expect(
      attribute(
        { ...base, live: { outcome: 'PENDING' }, sim: { outcome: 'FILLED', price: '1.10015' } },
        'c1',
        ctx,
      ).cause,
    ).toBe('missed-or-late-event');
    expect(
      attribute(
        { ...base, live: { outcome: 'PENDING' }, sim: { outcome: 'FILLED', price: '1.10015' } },
        'c1',
        { ...ctx, restarts: [T0 + 500] },
      ).cause,
    ).toBe('restart');
  });
});

describe('reconciliation: decisions', () => {
  it('the first parting is the first pair that differs, by content or by the event it followed; client IDs do not count', () => {
    const d = (id: string, units: string, after: number): Decision => ({
      intent: {
        kind: 'order',
        id,
        request: { type: 'MARKET', instrument: 'EUR_USD', units, clientExtensions: { id } } as never,
      },
      after,
      at: 0,
    });
    const ref = (seq: number) => ({ seq, kind: 'tick', time: '', where: `f line ${seq}` });
    expect(
      compareDecisions(
        [d('a-1', '1000', 3), d('a-2', '-1000', 6)],
        [d('b-1', '1000', 3), d('b-2', '-1000', 6)],
        ref,
      ).diffs,
    ).toEqual([]);
    const c = compareDecisions(
      [d('a-1', '1000', 3), d('a-2', '-1000', 6), d('a-3', '1000', 9)],
      [d('b-1', '1000', 3), d('b-2', '-1000', 7)],
      ref,
    );
    expect(c.first).toMatchObject({
      index: 1,
      what: 'event',
      live: { after: { where: 'f line 6' } },
      replay: { after: { where: 'f line 7' } },
    });
    expect(c.diffs.map((x) => x.what)).toEqual(['event', 'live-only']);
    expect(compareDecisions([d('a-1', '1000', 3)], [d('b-1', '2000', 3)], ref).first?.what).toBe('content');
  });
});

describe('reconciliation: fills are paired decision by decision, never by position', () => {
  const dec = (id: string, after: number, units: string): Decision => ({
    intent: { kind: 'market', id, instrument: 'EUR_USD', units } as unknown as Decision['intent'],
    after,
    at: T0 + after,
  });
  it('a replay with one decision more: each live order is paired with the same order after the same record, and the extra one with none', () => {
    const live = [dec('r-1', 5, '1000'), dec('r-2', 9, '-2000'), dec('r-3', 14, '1000')];
    // The replay decided once more after record 3 (its client IDs shift by one from there).
    const replay = [
      dec('r-1', 3, '-1000'),
      dec('r-2', 5, '1000'),
      dec('r-3', 9, '-2000'),
      dec('r-4', 14, '1000'),
    ];
    expect(pairDecisions(live, replay)).toEqual([
      ['r-1', 'r-2'],
      ['r-2', 'r-3'],
      ['r-3', 'r-4'],
    ]);
  });
  it('(fast-check) whatever the replay adds or drops, a pair is always the same order after the same record', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.constantFrom('1000', '-1000', '2000')), {
          maxLength: 12,
        }),
        fc.array(fc.boolean(), { maxLength: 12 }),
        (steps, keep) => {
          const sorted = [...steps].sort((a, b) => a[0] - b[0]);
          const live = sorted.map(([after, units], k) => dec(`c-${k}`, after, units));
          const replay = sorted
            .filter((_, k) => keep[k] ?? true)
            .map(([after, units], k) => dec(`c-${k}`, after, units));
          const byId = (list: Decision[]) => new Map(list.map((d) => [d.intent.id, d]));
          const l = byId(live);
          const r = byId(replay);
          const pairs = pairDecisions(live, replay);
          for (const [li, ri] of pairs) {
            expect(r.get(ri)!.after).toBe(l.get(li)!.after);
            expect((r.get(ri)!.intent as { units: string }).units).toBe(
              (l.get(li)!.intent as { units: string }).units,
            );
          }
          expect(new Set(pairs.map((p) => p[1])).size).toBe(pairs.length);
          expect(pairs.length).toBe(replay.length);
        },
      ),
    );
  });
});

describe('reconciliation: the order path behind a fill, in words', () => {
  it('names each failed send, each look-up and each resend with its delay', () => {
    const t = 1_700_000_000_000;
    expect(
      describeAttempts([
        { n: 0, what: 'sent', rt: t },
        { n: 0, what: 'timeout', rt: t + 400 },
        { n: 0, what: 'not found', rt: t + 1100 },
        { n: 1, what: 'sent', rt: t + 1200 },
        { n: 1, what: '503', rt: t + 1230 },
        { n: 1, what: 'not found', rt: t + 1800 },
        { n: 2, what: 'sent', rt: t + 1900 },
        { n: 2, what: 'answered', rt: t + 1925 },
      ]),
    ).toBe(
      'the first send timed out, looked up (not found), resent after 1.2 s, 503 on the second send, looked up (not found), resent after 0.7 s, answered on the third send',
    );
    expect(
      describeAttempts([
        { n: 0, what: 'sent', rt: t },
        { n: 0, what: 'answered', rt: t + 35 },
      ]),
    ).toBe('answered 35 ms after the send');
    expect(
      describeAttempts([
        { n: 0, what: 'sent', rt: t },
        { n: 0, what: 'network error', rt: t + 5 },
        { n: 0, what: 'found', rt: t + 700 },
      ]),
    ).toBe('the first send got no answer (network error), looked up (found)');
  });
});
