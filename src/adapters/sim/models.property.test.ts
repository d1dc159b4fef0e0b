import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { Decimal } from '../../domain/decimal.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import { parseTime } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { SimBrokerOptions } from './broker.ts';
import { OANDA_CORE_PER_MILLION, oandaCoreCommission, parseCommission } from './commission.ts';
import { fixedLatency, parseLatency, recordedLatency, type LatencyModel } from './latency.ts';
import { fixedSlippage, NO_SLIPPAGE, parseSlippage, spreadSlippage, type SlippageModel } from './slippage.ts';
import { MINUTE, T0, candle, harness, instruments } from './testkit.ts';

const EU = 'EUR_USD';

/** A random walk of valid two-sided M1 candles (bid OHLC consistent, ask = bid + spread). */
const candlesArb = (instrument = EU, base = 110000, scale = 1e5): fc.Arbitrary<Candle[]> =>
  fc
    .array(
      fc.record({
        move: fc.integer({ min: -30, max: 30 }),
        up: fc.integer({ min: 0, max: 20 }),
        down: fc.integer({ min: 0, max: 20 }),
        close: fc.integer({ min: 0, max: 100 }),
        spread: fc.integer({ min: 0, max: 5 }),
      }),
      { minLength: 5, maxLength: 40 },
    )
    .map((steps) => {
      let px = base;
      return steps.map((s, i) => {
        const open = px + s.move;
        const high = open + s.up;
        const low = open - s.down;
        const close = low + Math.round(((high - low) * s.close) / 100);
        px = close;
        return candle(
          instrument,
          T0 + i * MINUTE,
          [open / scale, high / scale, low / scale, close / scale],
          s.spread / scale,
        );
      });
    });

/** Entries that can slip (market, stop, their stop losses and trailing stops) and those that cannot (limit, take profit). */
type Action = {
  kind: 'market' | 'limit' | 'stop';
  units: number;
  offset: number;
  tp?: number;
  sl?: number;
  trail?: number;
};
const actionArb: fc.Arbitrary<Action> = fc.record({
  kind: fc.constantFrom('market' as const, 'limit' as const, 'stop' as const),
  units: fc.integer({ min: -5000, max: 5000 }).filter((u) => u !== 0),
  offset: fc.integer({ min: 1, max: 30 }),
  tp: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
  sl: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
  trail: fc.option(fc.integer({ min: 50, max: 120 }), { nil: undefined }),
});
const actionsArb = fc.array(fc.option(actionArb, { freq: 2, nil: undefined }), {
  minLength: 40,
  maxLength: 40,
});

function intentFor(a: Action, last: Candle, n: number): OrderIntent {
  const mid = (last.bc + last.ac) / 2;
  const p = (x: number): string => x.toFixed(5);
  const dir = a.units > 0 ? 1 : -1;
  const ref = a.kind === 'market' ? mid : mid + ((a.kind === 'limit' ? -dir : dir) * a.offset) / 1e5;
  // Exits by price (never by distance from the fill): a slipped entry leaves its exits where they were.
  const extra: Record<string, unknown> = { clientExtensions: { id: `c-${n}` } };
  if (a.tp !== undefined) extra.takeProfitOnFill = { price: p(ref + (dir * a.tp) / 1e5) };
  if (a.sl !== undefined) extra.stopLossOnFill = { price: p(ref - (dir * a.sl) / 1e5) };
  if (a.trail !== undefined) extra.trailingStopLossOnFill = { distance: p(a.trail / 1e5) };
  const request =
    a.kind === 'market'
      ? { type: 'MARKET', instrument: EU, units: String(a.units), ...extra }
      : { type: a.kind.toUpperCase(), instrument: EU, units: String(a.units), price: p(ref), ...extra };
  return { kind: 'order', id: `p-${n}`, request: request as never };
}

/** Runs the scenario; `decided` gets each client order's decision time and the delay its order took. */
function run(
  candles: readonly Candle[],
  actions: readonly (Action | undefined)[],
  opts: Partial<SimBrokerOptions>,
  decided?: Map<string, { at: number; delay: number }>,
  last?: { delay: number },
): Transaction[] {
  const h = harness(opts, T0 - MINUTE);
  let n = 0;
  for (const [i, c] of candles.entries()) {
    h.feed(c);
    const a = actions[i];
    if (a === undefined) continue;
    const intent = intentFor(a, c, n++);
    if (last) last.delay = Number.NaN;
    const at = h.sim.now;
    h.submit(intent);
    if (decided && last && !Number.isNaN(last.delay)) decided.set(`c-${n - 1}`, { at, delay: last.delay });
  }
  return h.txs;
}

const rec = (t: Transaction): Record<string, unknown> => t as unknown as Record<string, unknown>;

const slippageArb: fc.Arbitrary<SlippageModel> = fc.oneof(
  fc.integer({ min: 0, max: 30 }).map((tenths) => fixedSlippage(tenths / 10)),
  fc.integer({ min: 0, max: 20 }).map((tenths) => spreadSlippage(tenths / 10)),
);

describe('slippage models (slippage.ts)', () => {
  it('a slippage never improves a fill, and never touches a limit, take profit or guaranteed stop (property: the same run without slippage, fill by fill)', () => {
    fc.assert(
      fc.property(candlesArb(), actionsArb, slippageArb, (candles, actions, model) => {
        const plain = run(candles, actions, { slippage: NO_SLIPPAGE });
        const slipped = run(candles, actions, { slippage: model });
        // The two runs are the same transaction for transaction until a slipped price changes an
        // outcome (a take profit on fill now at a loss, a margin check): compared up to there.
        for (let i = 0; i < Math.min(plain.length, slipped.length); i++) {
          const a = rec(plain[i]!);
          const b = rec(slipped[i]!);
          if (a.type !== b.type || a.orderID !== b.orderID || a.reason !== b.reason || a.units !== b.units)
            break;
          if (a.type !== 'ORDER_FILL') continue;
          const buy = Number(a.units) > 0;
          const p0 = Number(a.price);
          const p1 = Number(b.price);
          switch (a.reason) {
            case 'LIMIT_ORDER':
            case 'TAKE_PROFIT_ORDER':
            case 'MARKET_IF_TOUCHED_ORDER':
            case 'GUARANTEED_STOP_LOSS_ORDER':
              expect(p1).toBe(p0);
              break;
            default:
              expect(buy ? p1 >= p0 : p1 <= p0).toBe(true);
          }
        }
      }),
      { numRuns: 120 },
    );
  });

  it('fixed pips move a market fill by exactly that distance against the trader', () => {
    const h = harness({ slippage: fixedSlippage(0.5) });
    h.submit({ kind: 'order', id: 'm', request: { type: 'MARKET', instrument: EU, units: '1000' } as never });
    const fill = h.feed(candle(EU, T0, [1.1, 1.101, 1.099, 1.1005])).find((t) => t.type === 'ORDER_FILL');
    // The ask at the open is 1.1002; half a pip (0.00005) higher.
    expect(rec(fill!).price).toBe('1.10025');
    h.submit({
      kind: 'order',
      id: 's',
      request: { type: 'MARKET', instrument: EU, units: '-1000' } as never,
    });
    const sell = h
      .feed(candle(EU, T0 + MINUTE, [1.1, 1.101, 1.099, 1.1005]))
      .find((t) => t.type === 'ORDER_FILL');
    expect(rec(sell!).price).toBe('1.09995');
  });

  it('parses its names and says what is expected otherwise', () => {
    expect(parseSlippage('none').name).toBe('none');
    expect(parseSlippage('fixed:0.5').name).toBe('fixed:0.5');
    expect(parseSlippage('spread:0.25').name).toBe('spread:0.25');
    expect(() => parseSlippage('fixed')).toThrow(
      /none, fixed:<pips> \(e.g. fixed:0.5\) or spread:<fraction>/,
    );
    expect(() => parseSlippage('spread:-1')).toThrow(/got "spread:-1"/);
  });
});

describe('latency models (latency.ts)', () => {
  const latencyArb: fc.Arbitrary<LatencyModel> = fc.oneof(
    fc.integer({ min: 0, max: 3 * MINUTE }).map((ms) => fixedLatency(ms)),
    fc
      .array(fc.integer({ min: 0, max: 3 * MINUTE }), { minLength: 1, maxLength: 5 })
      .map((values) => recordedLatency(values, 'file:recorded')),
  );

  it('an order never sees a price from before its decision plus its delay (property: every client fill, fixed and recorded delays)', () => {
    fc.assert(
      fc.property(candlesArb(), actionsArb, latencyArb, (candles, actions, model) => {
        const last = { delay: Number.NaN };
        const spy: LatencyModel = {
          name: model.name,
          next: () => {
            last.delay = model.next();
            return last.delay;
          },
        };
        const decided = new Map<string, { at: number; delay: number }>();
        const txs = run(candles, actions, { latency: spy }, decided, last);
        for (const t of txs) {
          const x = rec(t);
          if (t.type !== 'ORDER_FILL' || x.clientOrderID === undefined) continue;
          const d = decided.get(x.clientOrderID as string);
          expect(d).toBeDefined();
          const seen = parseTime((x.fullPrice as { timestamp: string }).timestamp);
          expect(seen).toBeGreaterThanOrEqual(d!.at + d!.delay);
        }
      }),
      { numRuns: 120 },
    );
  });

  it('a market order waits for the first price at or after its arrival, and fills at that price', () => {
    const h = harness({ latency: fixedLatency(30_000) });
    h.feed(candle(EU, T0, [1.1, 1.101, 1.099, 1.1005]));
    h.submit({ kind: 'order', id: 'm', request: { type: 'MARKET', instrument: EU, units: '1000' } as never });
    // Decided at T0 + 1 min, arrives 30 s later: not the next candle's open (T0 + 1 min) but its
    // first extreme (T0 + 1 min + 20 s is still before; the second extreme at + 40 s is the first after).
    const fill = rec(
      h.feed(candle(EU, T0 + MINUTE, [1.2, 1.21, 1.19, 1.205])).find((t) => t.type === 'ORDER_FILL')!,
    );
    expect(parseTime((fill.fullPrice as { timestamp: string }).timestamp)).toBe(T0 + MINUTE + 40_000);
  });

  it('reads recorded delays from a file, naming the file and the line of a bad value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-latency-'));
    const good = join(dir, 'ok.txt');
    writeFileSync(good, '# ms\n120\n80, 95\n');
    const m = parseLatency(`file:${good}`);
    expect([m.next(), m.next(), m.next(), m.next()]).toEqual([120, 80, 95, 120]);
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, '120\nfast\n');
    expect(() => parseLatency(`file:${bad}`)).toThrow(
      `latency file ${bad} line 2: "fast" is not a delay in ms >= 0`,
    );
    expect(() => parseLatency('fixed:-3')).toThrow(/none, fixed:<ms>/);
  });
});

describe('commission models (commission.ts)', () => {
  it("oanda-core charges the schedule's rate per million on every currency fill and nothing on metals and CFDs (property)", () => {
    const cases = [
      { instrument: 'EUR_USD', currency: 'USD', base: 110000, scale: 1e5 },
      { instrument: 'EUR_USD', currency: 'EUR', base: 110000, scale: 1e5 },
      { instrument: 'XAU_USD', currency: 'USD', base: 200000, scale: 1e2 },
      { instrument: 'SPX500_USD', currency: 'USD', base: 500000, scale: 1e2 },
    ];
    fc.assert(
      fc.property(
        fc
          .constantFrom(...cases)
          .chain((k) => fc.tuple(fc.constant(k), candlesArb(k.instrument, k.base, k.scale))),
        fc.array(
          fc.integer({ min: -3000, max: 3000 }).filter((u) => u !== 0),
          { minLength: 1, maxLength: 10 },
        ),
        ([k, candles], units) => {
          const h = harness({
            currency: k.currency,
            initialBalance: '10000000',
            commission: oandaCoreCommission(k.currency),
            marketHours: false,
          });
          for (const [i, c] of candles.entries()) {
            h.feed(c);
            const u = units[i % units.length]!;
            if (i < units.length)
              h.submit({
                kind: 'order',
                id: `o${i}`,
                request: { type: 'MARKET', instrument: k.instrument, units: String(u) } as never,
              });
          }
          const currency = instruments().get(k.instrument).type === 'CURRENCY';
          let fills = 0;
          for (const t of h.txs) {
            if (t.type !== 'ORDER_FILL') continue;
            fills++;
            const x = rec(t);
            const want = currency
              ? new Decimal(x.units as string)
                  .abs()
                  .times(OANDA_CORE_PER_MILLION[k.currency]!)
                  .div(1_000_000)
                  .toFixed(4)
              : '0.0000';
            expect(x.commission).toBe(want);
          }
          expect(fills).toBeGreaterThan(0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('parses a rate per million or oanda-core, and says what is expected otherwise', () => {
    expect(parseCommission('0', 'USD').name).toBe('none');
    expect(parseCommission('50', 'USD').name).toBe('per-million:50');
    expect(parseCommission('oanda-core', 'GBP').name).toBe('oanda-core');
    expect(() => parseCommission('oanda-core', 'NOK')).toThrow(/no schedule for an account in NOK/);
    expect(() => parseCommission('cheap', 'USD')).toThrow(/rate per million units .* or "oanda-core"/);
  });
});
