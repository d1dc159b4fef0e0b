import fc from 'fast-check';
import ti from 'technicalindicators';
import { describe, expect, it } from 'vitest';
import { Ema, Sma, TiIndicator } from './indicators.ts';

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
  });
});
