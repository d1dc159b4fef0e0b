import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSpan, stitchOos, walkForwardEfficiency, windows, WalkForwardError } from './walkforward.ts';

const d = (s: string): number => Date.parse(`${s}T00:00:00Z`);
const day = (t: number): string => new Date(t).toISOString().slice(0, 10);

describe('walk-forward windows', () => {
  it('rolling: 6-month training, 1-month tests, 1-month steps over 2024 give 6 windows with back-to-back tests', () => {
    const ws = windows(
      d('2024-01-01'),
      d('2025-01-01'),
      parseSpan('train', '6mo'),
      parseSpan('test', '1mo'),
      parseSpan('step', '1mo'),
      false,
    );
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
    const ws = windows(
      d('2024-01-01'),
      d('2024-07-01'),
      parseSpan('train', '3mo'),
      parseSpan('test', '1mo'),
      parseSpan('step', '1mo'),
      true,
    );
    expect(ws.map((w) => [day(w.trainFrom), day(w.trainTo), day(w.testTo)])).toEqual([
      ['2024-01-01', '2024-04-01', '2024-05-01'],
      ['2024-01-01', '2024-05-01', '2024-06-01'],
      ['2024-01-01', '2024-06-01', '2024-07-01'],
    ]);
  });

  it('for any lengths: tests start where training ends, end inside the period, and never overlap when step = test', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 6 }),
        fc.boolean(),
        (train, test, anchored) => {
          const ws = windows(
            d('2020-01-01'),
            d('2023-01-01'),
            { months: train },
            { months: test },
            { months: test },
            anchored,
          );
          for (const w of ws) {
            expect(w.testFrom).toBe(w.trainTo);
            expect(w.testTo).toBeLessThanOrEqual(d('2023-01-01'));
            expect(w.trainFrom).toBeLessThan(w.trainTo);
          }
          for (let i = 1; i < ws.length; i++) expect(ws[i]!.testFrom).toBe(ws[i - 1]!.testTo);
        },
      ),
    );
  });

  it('spans: 6mo, 1y, 2w, 30d; anything else is a clear error', () => {
    expect(parseSpan('train', '6mo')).toEqual({ months: 6 });
    expect(parseSpan('train', '1y')).toEqual({ months: 12 });
    expect(parseSpan('test', '2w')).toEqual({ days: 14 });
    expect(parseSpan('test', '30d')).toEqual({ days: 30 });
    expect(() => parseSpan('train', '6 months')).toThrow(WalkForwardError);
    expect(() => parseSpan('train', '0mo')).toThrow(
      "--train '0mo' must be a length such as 6mo, 1mo, 2w, 30d or 1y",
    );
  });
});

describe('stitched out-of-sample equity, by date', () => {
  const DAY = 86_400_000;
  it('two back-to-back test windows: one point per marked day, at its RFC 3339 time, NAV compounded from 1', () => {
    const t0 = d('2024-03-01');
    const r = stitchOos([
      { window: 1, returns: [0.01, -0.02], times: [t0, t0 + DAY - 3_600_000, t0 + 2 * DAY - 3_600_000] },
      { window: 2, returns: [0.03], times: [t0 + 2 * DAY, t0 + 3 * DAY - 3_600_000] },
    ]);
    expect(r.points).toEqual([
      { time: '2024-03-01T00:00:00.000Z', nav: 1, window: 1 },
      { time: '2024-03-01T23:00:00.000Z', nav: 1.01, window: 1 },
      { time: '2024-03-02T23:00:00.000Z', nav: 1.01 * 0.98, window: 1 },
      { time: '2024-03-03T23:00:00.000Z', nav: 1.01 * 0.98 * 1.03, window: 2 },
    ]);
    expect(r.days).toEqual([2, 1]);
    expect(r.returns).toEqual([0.01, -0.02, 0.03]);
  });

  it('overlapping test periods (--step shorter than --test): a day counts once, from the earlier window', () => {
    const t0 = d('2024-03-01');
    const r = stitchOos([
      { window: 1, returns: [0.01, 0.01], times: [t0, t0 + DAY, t0 + 2 * DAY] },
      { window: 2, returns: [0.5, 0.02], times: [t0 + DAY, t0 + 2 * DAY, t0 + 3 * DAY] },
    ]);
    expect(r.points.map((p) => p.time.slice(0, 10))).toEqual([
      '2024-03-01',
      '2024-03-02',
      '2024-03-03',
      '2024-03-04',
    ]);
    expect(r.returns).toEqual([0.01, 0.01, 0.02]);
    expect(r.days).toEqual([2, 1]);
  });

  it('for any windows: times strictly increase, the last NAV is the product of the returns kept, and each window adds its count of points', () => {
    const window = fc.record({
      start: fc.integer({ min: 0, max: 40 }),
      returns: fc.array(fc.double({ min: -0.05, max: 0.05, noNaN: true }), { maxLength: 12 }),
    });
    fc.assert(
      fc.property(fc.array(window, { minLength: 1, maxLength: 6 }), (ws) => {
        let start = 0;
        const parts = ws.map((w, i) => {
          start += w.start; // windows in order; they may overlap or leave gaps
          return {
            window: i + 1,
            returns: w.returns,
            times: Array.from(
              { length: w.returns.length + 1 },
              (_, k) => d('2024-01-01') + (start + k) * DAY,
            ),
          };
        });
        const r = stitchOos(parts);
        for (let i = 1; i < r.points.length; i++)
          expect(Date.parse(r.points[i]!.time)).toBeGreaterThan(Date.parse(r.points[i - 1]!.time));
        expect(r.points[0]!.nav).toBe(1);
        expect(r.points.length).toBe(r.returns.length + 1);
        expect(r.days.reduce((a, b) => a + b, 0)).toBe(r.returns.length);
        const product = r.returns.reduce((a, x) => a * (1 + x), 1);
        expect(r.points[r.points.length - 1]!.nav).toBeCloseTo(product, 12);
        // Windows that do not overlap keep every return.
        const overlaps = parts.some(
          (p, i) => i > 0 && p.times[0]! < parts[i - 1]!.times[parts[i - 1]!.times.length - 1]!,
        );
        if (!overlaps) expect(r.returns).toEqual(parts.flatMap((p) => p.returns));
      }),
    );
  });

  it('a run whose times do not match its returns is a clear error', () => {
    expect(() => stitchOos([{ window: 3, returns: [0.01, 0.02], times: [1, 2] }])).toThrow(
      'window 3: the out-of-sample run gave 2 daily returns but 2 times (expected one more)',
    );
  });
});

describe('walk-forward efficiency: only where it means something', () => {
  it("the issue's case: in-sample CAGR -1% then out of sample +15.42% is not an efficiency of -15.42, and says why", () => {
    const e = walkForwardEfficiency(-1, 15.42);
    expect(e.value).toBeNull();
    expect(e.whyNot).toBe(
      'in-sample CAGR -1.00% is not a gain: there is no edge to carry over, so OOS / IS means nothing',
    );
    expect(walkForwardEfficiency(0, 3).value).toBeNull();
    expect(walkForwardEfficiency(null, 3)).toEqual({ value: null, whyNot: 'no in-sample CAGR' });
    expect(walkForwardEfficiency(10, null)).toEqual({ value: null, whyNot: 'no out-of-sample CAGR' });
    // Over an in-sample gain, a loss out of sample is meaningful: the edge reversed.
    expect(walkForwardEfficiency(20, -5)).toEqual({ value: -0.25 });
    expect(walkForwardEfficiency(20, 10)).toEqual({ value: 0.5 });
  });

  it('for any CAGRs: given exactly when the in-sample CAGR is a gain, then OOS / IS with the sign of the OOS return (property)', () => {
    const cagr = fc.double({ min: -99, max: 500, noNaN: true });
    fc.assert(
      fc.property(cagr, cagr, (is, oos) => {
        const e = walkForwardEfficiency(is, oos);
        if (is > 0) {
          expect(e.value).toBe(oos / is);
          expect(e.value! * oos).toBeGreaterThanOrEqual(0); // never the opposite sign of the OOS return
          expect(e.whyNot).toBeUndefined();
        } else {
          expect(e.value).toBeNull();
          expect(e.whyNot).toMatch(/is not a gain/);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
