import { describe, expect, it } from 'vitest';
import type { WalkForwardResult } from '../research/walkforward.ts';
import { formatWalkForward } from './walkforward.ts';

/**
 * The walk-forward's terminal table: each window's DSR and PBO beside its efficiency, and the
 * efficiency left out (with the reason) where the in-sample CAGR is not a gain: -1% in sample then
 * +15.42% out of sample is not "an efficiency of -15.42".
 */

const D = (s: string): number => Date.parse(`${s}T00:00:00Z`);
const win = (
  index: number,
  isCagr: number,
  oosCagr: number,
  efficiency: number | null,
  dsr: number | null,
  pbo: number | null,
  whyNot?: string,
) => ({
  window: {
    index,
    trainFrom: D('2024-01-01'),
    trainTo: D('2024-04-01'),
    testFrom: D('2024-04-01'),
    testTo: D('2024-07-01'),
  },
  params: { fast: 5 },
  inSample: { cagrPct: isCagr },
  outOfSample: { cagrPct: oosCagr },
  isObjective: 0.5,
  oosObjective: 0.25,
  efficiency,
  ...(whyNot !== undefined ? { efficiencyWhyNot: whyNot } : {}),
  sweepDir: '/tmp/x',
  dsr,
  pbo,
});
const args = {
  anchored: true,
  train: '3mo',
  test: '3mo',
  step: undefined,
  search: 'grid',
  objective: 'sharpe',
} as never;

describe('the walkforward terminal table', () => {
  const base = {
    dir: '/tmp/wf',
    oosEquity: [],
    oosReturnPct: 3.1,
    oosSharpe: 0.8,
    stability: { fast: { values: [5, 5], distinct: 1, modeShare: 1, cv: 0 } },
  };

  it('has DSR and PBO per window; WFE only over an in-sample gain, and says why otherwise', () => {
    const r = {
      ...base,
      windows: [
        win(0, -1, 15.42, null, 0.4123, 0.5625, 'in-sample CAGR -1.00% is not a gain: …'),
        win(1, 20, 10, 0.5, null, null),
      ],
      efficiency: null,
      efficiencyWhyNot:
        'the mean in-sample CAGR -0.50% is not a gain: there is no edge to carry over, so OOS / IS means nothing',
    } as unknown as WalkForwardResult;
    const lines = formatWalkForward(r, 'sma-cross', args, undefined).split('\n');
    const header = lines.findIndex((l) => l.startsWith('win '));
    expect(
      lines[header]!.trim()
        .split(/\s{2,}/)
        .slice(-5),
    ).toEqual(['IS CAGR', 'OOS CAGR', 'WFE', 'DSR', 'PBO']);
    expect(
      lines[header + 1]!.trim()
        .split(/\s{2,}/)
        .slice(-5),
    ).toEqual(['-1.00%', '15.42%', 'n/a (IS ≤ 0)', '0.41', '0.56']);
    expect(
      lines[header + 2]!.trim()
        .split(/\s{2,}/)
        .slice(-5),
    ).toEqual(['20.00%', '10.00%', '0.50', 'n/a', 'n/a']);
    expect(lines).toContain(
      'WFE n/a (IS ≤ 0): window 1 lost in sample; the ratio measures how much of an in-sample gain carries over, and there was none',
    );
    expect(lines).toContain(
      'Walk-forward efficiency (mean OOS CAGR / mean IS CAGR): n/a: the mean in-sample CAGR -0.50% is not a gain: there is no edge to carry over, so OOS / IS means nothing',
    );
    expect(lines.some((l) => l.startsWith('DSR: '))).toBe(true);
    expect(lines.join('\n')).not.toContain('-15.42');
  });

  it('over in-sample gains: the efficiency as a number, no note', () => {
    const r = {
      ...base,
      windows: [win(0, 10, -2, -0.2, 0.97, 0.1), win(1, 20, 10, 0.5, 0.99, 0.05)],
      efficiency: 0.2667,
    } as unknown as WalkForwardResult;
    const out = formatWalkForward(r, 'sma-cross', args, undefined);
    expect(out).toContain('Walk-forward efficiency (mean OOS CAGR / mean IS CAGR): 0.27');
    expect(out).not.toContain('IS ≤ 0');
    expect(out).toMatch(/-0\.20 +0\.97 +0\.10/);
  });
});
