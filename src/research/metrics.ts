import type { Summary } from '../engine/report.ts';

/** A trial's figures: the backtest summary plus the ratios a sweep ranks by. */
export interface TrialMetrics extends Summary {
  /** Sortino ratio of daily NAV returns (downside deviation, target 0), annualised with √252. */
  readonly sortino: number | null;
  /** Annualised return (compound) over the period, in percent. */
  readonly cagrPct: number | null;
  /** Calmar ratio: annualised return % / max drawdown %. */
  readonly calmar: number | null;
}

/** Daily returns of a NAV curve (one point per day, as the portfolio keeps it). */
export function dailyReturns(navs: readonly number[]): number[] {
  const r: number[] = [];
  for (let i = 1; i < navs.length; i++) r.push(navs[i]! / navs[i - 1]! - 1);
  return r;
}

/** Sortino ratio: mean / √(mean of min(r, 0)²), annualised with √252; null when nothing was lost or too short. */
export function sortinoOf(r: readonly number[]): number | null {
  if (r.length < 2) return null;
  let mean = 0,
    down = 0;
  for (const x of r) {
    mean += x;
    if (x < 0) down += x * x;
  }
  mean /= r.length;
  const dd = Math.sqrt(down / r.length);
  return dd > 0 ? (mean / dd) * Math.sqrt(252) : null;
}

const round = (x: number, places: number): number => Math.round(x * 10 ** places) / 10 ** places;

/** Adds Sortino, CAGR and Calmar to a summary, from its daily NAV returns. */
export function trialMetrics(summary: Summary, returns: readonly number[]): TrialMetrics {
  const sortino = sortinoOf(returns);
  const from = summary.from ? Date.parse(summary.from) : NaN;
  const to = summary.to ? Date.parse(summary.to) : NaN;
  const years = (to - from) / (365.25 * 86_400_000);
  const growth = summary.finalNAV / summary.initialBalance;
  const cagr = years > 0 && growth > 0 ? (growth ** (1 / years) - 1) * 100 : null;
  const calmar = cagr !== null && summary.maxDrawdownPct > 0 ? cagr / summary.maxDrawdownPct : null;
  return {
    ...summary,
    sortino: sortino === null ? null : round(sortino, 4),
    cagrPct: cagr === null ? null : round(cagr, 4),
    calmar: calmar === null ? null : round(calmar, 4),
  };
}

export type ObjectiveName = 'netPL' | 'sharpe' | 'sortino' | 'calmar' | 'profitFactor' | 'custom';
export const OBJECTIVES: readonly ObjectiveName[] = [
  'netPL',
  'sharpe',
  'sortino',
  'calmar',
  'profitFactor',
  'custom',
];

/** A function a strategy module may export as `objective`: higher is better. */
export type ObjectiveFn = (metrics: TrialMetrics) => number;

/**
 * The value a sweep maximises for a trial. An undefined figure (no trade, a flat curve: a null
 * Sharpe, Sortino or Calmar) counts as −∞, so it ranks last. A profit factor with profits and no
 * loss at all (null in the summary) counts as the largest number.
 */
export function objectiveValue(name: ObjectiveName, m: TrialMetrics, custom?: ObjectiveFn): number {
  let v: number | null;
  switch (name) {
    case 'netPL':
      v = m.netPL;
      break;
    case 'sharpe':
      v = m.sharpe;
      break;
    case 'sortino':
      v = m.sortino;
      break;
    case 'calmar':
      v = m.calmar;
      break;
    case 'profitFactor':
      v = m.profitFactor ?? (m.grossProfit > 0 ? Number.MAX_VALUE : null);
      break;
    case 'custom': {
      if (!custom)
        throw new Error(
          '--objective custom needs the strategy module to export `function objective(metrics)` returning a number',
        );
      v = custom(m);
      if (typeof v !== 'number' || Number.isNaN(v))
        throw new Error(`the strategy's objective() returned ${String(v)}, not a number`);
      break;
    }
  }
  return v === null ? -Infinity : v;
}
