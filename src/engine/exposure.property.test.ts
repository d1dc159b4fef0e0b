import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exposureOver } from './report.ts';

// A live run's exposure: the share of its period with at least one trade open, from the trades'
// open intervals (they may overlap, start before the period or run past it).

/** The same share counted second by second (intervals on whole seconds). */
function bySecond(
  trades: readonly { openTime: number; closeTime: number }[],
  from: number,
  to: number,
): number {
  let open = 0;
  for (let s = from; s < to; s += 1000)
    if (trades.some((t) => t.openTime <= s && s + 1000 <= t.closeTime)) open++;
  return Math.round((open / ((to - from) / 1000)) * 10_000) / 100;
}

const second = fc.integer({ min: 0, max: 120 }).map((s) => s * 1000);
const trade = fc
  .tuple(second, second)
  .map(([a, b]) => ({ openTime: Math.min(a, b), closeTime: Math.max(a, b) }));

describe('exposureOver', () => {
  it('is the covered share of the period: 0..100, equal to a count second by second', () => {
    fc.assert(
      fc.property(fc.array(trade, { maxLength: 12 }), second, second, (trades, a, b) => {
        const from = Math.min(a, b);
        const to = Math.max(a, b);
        const x = exposureOver(trades, from, to);
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(100);
        expect(x).toBe(to > from ? bySecond(trades, from, to) : 0);
      }),
    );
  });

  it('a trade open over the whole period, and another overlapping it, make 100%, never more', () => {
    expect(
      exposureOver(
        [
          { openTime: -5000, closeTime: 20_000 },
          { openTime: 1000, closeTime: 9000 },
        ],
        0,
        10_000,
      ),
    ).toBe(100);
  });
});
