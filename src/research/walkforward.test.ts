import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSpan, windows, WalkForwardError } from './walkforward.ts';

const d = (s: string): number => Date.parse(`${s}T00:00:00Z`);
const day = (t: number): string => new Date(t).toISOString().slice(0, 10);

describe('walk-forward windows', () => {
  it('rolling: 6-month training, 1-month tests, 1-month steps over 2024 give 6 windows with back-to-back tests', () => {
    const ws = windows(d('2024-01-01'), d('2025-01-01'), parseSpan('train', '6mo'), parseSpan('test', '1mo'), parseSpan('step', '1mo'), false);
    expect(ws.map((w) => [day(w.trainFrom), day(w.trainTo), day(w.testTo)])).toEqual([
      ['2024-01-01', '2024-07-01', '2024-08-01'],
      ['2024-02-01', '2024-08-01', '2024-09-01'],
      ['2024-03-01', '2024-09-01', '2024-10-01'],
      ['2024-04-01', '2024-10-01', '2024-11-01'],
      ['2024-05-01', '2024-11-01', '2024-12-01'],
      ['2024-06-01', '2024-12-01', '2025-01-01'],
    ]);
  });

  it('anchored: every training period starts at the start', () => {
    const ws = windows(d('2024-01-01'), d('2024-07-01'), parseSpan('train', '3mo'), parseSpan('test', '1mo'), parseSpan('step', '1mo'), true);
    expect(ws.map((w) => [day(w.trainFrom), day(w.trainTo), day(w.testTo)])).toEqual([
      ['2024-01-01', '2024-04-01', '2024-05-01'],
      ['2024-01-01', '2024-05-01', '2024-06-01'],
      ['2024-01-01', '2024-06-01', '2024-07-01'],
    ]);
  });

  it('for any lengths: tests start where training ends, end inside the period, and never overlap when step = test', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 6 }), fc.boolean(), (train, test, anchored) => {
        const ws = windows(d('2020-01-01'), d('2023-01-01'), { months: train }, { months: test }, { months: test }, anchored);
        for (const w of ws) {
          expect(w.testFrom).toBe(w.trainTo);
          expect(w.testTo).toBeLessThanOrEqual(d('2023-01-01'));
          expect(w.trainFrom).toBeLessThan(w.trainTo);
        }
        for (let i = 1; i < ws.length; i++) expect(ws[i]!.testFrom).toBe(ws[i - 1]!.testTo);
      }),
    );
  });

  it('spans: 6mo, 1y, 2w, 30d; anything else is a clear error', () => {
    expect(parseSpan('train', '6mo')).toEqual({ months: 6 });
    expect(parseSpan('train', '1y')).toEqual({ months: 12 });
    expect(parseSpan('test', '2w')).toEqual({ days: 14 });
    expect(parseSpan('test', '30d')).toEqual({ days: 30 });
    expect(() => parseSpan('train', '6 months')).toThrow(WalkForwardError);
    expect(() => parseSpan('train', '0mo')).toThrow("--train '0mo' must be a length such as 6mo, 1mo, 2w, 30d or 1y");
  });
});
