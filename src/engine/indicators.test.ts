import fc from 'fast-check';
import ti from 'technicalindicators';
import { describe, expect, it } from 'vitest';
import { Ema, INDICATORS, IndicatorError, Sma, TiIndicator } from './indicators.ts';

const prices = fc.array(fc.double({ min: 0.5, max: 200, noNaN: true }), { minLength: 1, maxLength: 400 });

describe('Sma', () => {
  it('matches technicalindicators SMA on every prefix (property)', () => {
    fc.assert(
      fc.property(prices, fc.integer({ min: 1, max: 50 }), (xs, period) => {
        const sma = new Sma(period);
        const ref = ti.SMA.calculate({ period, values: xs });
        const got: number[] = [];
        for (const x of xs) {
          sma.update(x);
          if (sma.value !== undefined) got.push(sma.value);
        }
        expect(got.length).toBe(ref.length);
        got.forEach((g, i) => expect(g).toBeCloseTo(ref[i]!, 9));
      }),
    );
  });

  it('stays exact over long runs (the running sum is re-anchored)', () => {
    const sma = new Sma(30);
    const window: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      const x = 1.1 + Math.sin(i / 7) * 0.01 + (i % 13) * 1e-5;
      sma.update(x);
      window.push(x);
      if (window.length > 30) window.shift();
    }
    const exact = window.reduce((a, b) => a + b, 0) / 30;
    expect(Math.abs(sma.value! - exact)).toBeLessThan(1e-12);
  });

  it('rejects a period that is not a positive integer', () => {
    expect(() => new Sma(0)).toThrow(/positive integer/);
    expect(() => new Sma(2.5)).toThrow(/positive integer/);
  });
});

describe('Ema', () => {
  it('matches technicalindicators EMA (SMA seed) on every prefix (property)', () => {
    fc.assert(
      fc.property(prices, fc.integer({ min: 1, max: 40 }), (xs, period) => {
        const ema = new Ema(period);
        const ref = ti.EMA.calculate({ period, values: xs });
        const got: number[] = [];
        for (const x of xs) {
          ema.update(x);
          if (ema.value !== undefined) got.push(ema.value);
        }
        expect(got.length).toBe(ref.length);
        got.forEach((g, i) => expect(g).toBeCloseTo(ref[i]!, 8));
      }),
    );
  });
});

describe('TiIndicator', () => {
  it('drives a value indicator (RSI) through nextValue like the batch calculation', () => {
    const xs = Array.from({ length: 200 }, (_, i) => 1 + Math.sin(i / 5) / 10 + i / 1000);
    const rsi = new TiIndicator<number>('RSI', { period: 14 });
    for (const x of xs) rsi.update(x, x, x, x, 0);
    const ref = ti.RSI.calculate({ period: 14, values: xs });
    expect(rsi.value).toBeCloseTo(ref[ref.length - 1]!, 6);
  });

  it('drives a bar indicator (ATR) with high/low/close', () => {
    const n = 100;
    const close = Array.from({ length: n }, (_, i) => 1 + Math.sin(i / 3) / 50);
    const high = close.map((c) => c + 0.002);
    const low = close.map((c) => c - 0.003);
    const atr = new TiIndicator<number>('ATR', { period: 14 });
    for (let i = 0; i < n; i++) atr.update(close[i]!, high[i]!, low[i]!, close[i]!, 0);
    const ref = ti.ATR.calculate({ period: 14, high, low, close });
    expect(atr.value).toBeCloseTo(ref[ref.length - 1]!, 9);
  });

  it('names the unknown indicator and lists known ones', () => {
    expect(() => new TiIndicator('NoSuchThing', {})).toThrow(/unknown indicator 'NoSuchThing'.*RSI/s);
    expect(() => new TiIndicator('CrossUp', {})).toThrow(/CrossUp is not available: it compares two lines/);
  });

  // Reported: ctx.indicator('RSI', {}) returned 0 for ever (period undefined); a typo went unnoticed.
  it('refuses missing, unknown and ill-typed options, naming the valid ones', () => {
    expect(() => new TiIndicator('RSI', {})).toThrow(IndicatorError);
    expect(() => new TiIndicator('RSI', {})).toThrow(
      "indicator 'RSI': option 'period' is missing; its options are { period: number }",
    );
    expect(() => new TiIndicator('RSI', { period: 14, perod: 3 })).toThrow(
      "unknown option 'perod'; its options are { period: number }",
    );
    expect(() => new TiIndicator('RSI', { period: '14' })).toThrow(
      'option \'period\' must be a number > 0 (got "14")',
    );
    expect(
      () => new TiIndicator('KeltnerChannels', { maPeriod: 20, atrPeriod: 10, useSMA: 1, multiplier: 2 }),
    ).toThrow("option 'useSMA' must be true or false");
    expect(() => new TiIndicator('MACD', { fastPeriod: 12, slowPeriod: 26 })).toThrow(
      /option 'signalPeriod' is missing; its options are \{ fastPeriod: number, slowPeriod: number, signalPeriod: number, SimpleMAOscillator\?: boolean, SimpleMASignal\?: boolean \}/,
    );
  });
});

/** Random options for an indicator, in the ranges its definition makes sense for. */
function optionsOf(name: string): fc.Arbitrary<Record<string, unknown>> {
  const spec = INDICATORS[name]!;
  const int = fc.integer({ min: 1, max: 12 });
  const special: Record<string, fc.Arbitrary<unknown>> = {
    step: fc.double({ min: 0.01, max: 0.1, noNaN: true }),
    max: fc.double({ min: 0.1, max: 0.5, noNaN: true }),
    stdDev: fc.double({ min: 0.5, max: 3, noNaN: true }),
    multiplier: fc.double({ min: 0.5, max: 4, noNaN: true }),
  };
  const rec: Record<string, fc.Arbitrary<unknown>> = {};
  for (const o of [...spec.required, ...(spec.optional ?? [])]) {
    if (o.startsWith('b:')) rec[o.slice(2)] = fc.boolean();
    else rec[o] = special[o] ?? int;
  }
  let arb = fc.record(rec) as fc.Arbitrary<Record<string, unknown>>;
  // MACD's fast average must be the faster one.
  if (name === 'MACD')
    arb = arb.map((o) => ({ ...o, slowPeriod: (o.fastPeriod as number) + (o.slowPeriod as number) }));
  return arb;
}

function columnsToRows(cols: Record<string, number[]>): Record<string, number>[] {
  const n = cols.close?.length ?? 0;
  return Array.from({ length: n }, (_, i) =>
    Object.fromEntries(
      Object.entries(cols)
        .filter(([, v]) => v.length === n)
        .map(([k, v]) => [k, v[i]!]),
    ),
  );
}

/** Random candles: open, high ≥ max(open, close), low ≤ min(open, close), volume > 0. */
const bars = fc.array(
  fc.record({
    o: fc.double({ min: 0.5, max: 2, noNaN: true }),
    c: fc.double({ min: 0.5, max: 2, noNaN: true }),
    up: fc.double({ min: 0, max: 0.05, noNaN: true }),
    down: fc.double({ min: 0, max: 0.05, noNaN: true }),
    v: fc.integer({ min: 1, max: 5000 }),
  }),
  { minLength: 0, maxLength: 120 },
);

describe('every indicator ctx.indicator wraps', () => {
  // Reported: StochasticRSI always gave 0 and KST always null (they were fed bars, not values),
  // while technicalindicators called directly gives real values.
  for (const name of Object.keys(INDICATORS)) {
    it(`${name}: streaming values equal technicalindicators' own calculate over random series (property)`, () => {
      fc.assert(
        fc.property(optionsOf(name), bars, (options, raw) => {
          const open = raw.map((b) => b.o);
          const close = raw.map((b) => b.c);
          const high = raw.map((b) => Math.max(b.o, b.c) + b.up);
          const low = raw.map((b) => Math.min(b.o, b.c) - b.down);
          const volume = raw.map((b) => b.v);
          const Ctor = (
            ti as unknown as Record<string, { calculate(input: Record<string, unknown>): unknown[] }>
          )[name]!;
          const out = Ctor.calculate({
            ...options,
            values: [...close],
            open: [...open],
            high: [...high],
            low: [...low],
            close: [...close],
            volume: [...volume],
          });
          // HeikinAshi's calculate gives columns (a CandleList); its nextValue gives one candle.
          const ref = Array.isArray(out) ? out : columnsToRows(out as unknown as Record<string, number[]>);
          const ind = new TiIndicator(name, options);
          const got: unknown[] = [];
          for (let i = 0; i < raw.length; i++) {
            ind.update(close[i]!, high[i]!, low[i]!, open[i]!, volume[i]!);
            if (ind.last !== undefined) got.push(ind.last);
            // `value` is the last value given so far.
            expect(ind.value).toEqual(got.at(-1));
          }
          // The batch result is every value the streaming indicator gave, in order.
          expect(got).toEqual(ref);
        }),
        { numRuns: Number(process.env.FC_RUNS ?? 60) },
      );
    });
  }

  it('StochasticRSI and KST give real values on a real-looking series', () => {
    const xs = Array.from({ length: 300 }, (_, i) => 1.1 + Math.sin(i / 9) / 50 + Math.sin(i / 2.3) / 200);
    const srsi = new TiIndicator<{ stochRSI: number; k: number; d: number }>('StochasticRSI', {
      rsiPeriod: 14,
      stochasticPeriod: 14,
      kPeriod: 3,
      dPeriod: 3,
    });
    const kst = new TiIndicator<{ kst: number; signal?: number }>('KST', {
      ROCPer1: 10,
      ROCPer2: 15,
      ROCPer3: 20,
      ROCPer4: 30,
      SMAROCPer1: 10,
      SMAROCPer2: 10,
      SMAROCPer3: 10,
      SMAROCPer4: 15,
      signalPeriod: 9,
    });
    const seen = new Set<number>();
    for (const x of xs) {
      srsi.update(x, x, x, x, 1);
      kst.update(x, x, x, x, 1);
      if (srsi.value) seen.add(srsi.value.stochRSI);
    }
    expect(seen.size).toBeGreaterThan(10);
    expect(kst.value).toEqual(
      ti.KST.calculate({
        values: xs,
        ROCPer1: 10,
        ROCPer2: 15,
        ROCPer3: 20,
        ROCPer4: 30,
        SMAROCPer1: 10,
        SMAROCPer2: 10,
        SMAROCPer3: 10,
        SMAROCPer4: 15,
        signalPeriod: 9,
      }).at(-1),
    );
    expect(Number.isFinite(kst.value!.kst)).toBe(true);
  });
});
