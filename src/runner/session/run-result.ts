// What a stopped live run reports: its summary over the run's period, the report's lines (the fill
// models of `--broker sim`, the unknown fills, the drift guard) and the figures of the run.
import type { SimBroker } from '../../adapters/sim/broker.ts';
import type { Portfolio } from '../../engine/portfolio.ts';
import { formatStrategies, formatSummary, summarize } from '../../engine/report.ts';
import type { RiskExecution, RiskLimits } from '../../engine/risk.ts';
import type { AccountCheck } from '../order-path/kill-switch.ts';
import type { Recovered } from '../order-path/order-lifecycle.ts';
import { describeUnknownFill, type UnknownFill } from '../order-path/unknown-fills.ts';
import type { LivePortfolio } from './live-portfolio.ts';
import { formatFillModels, type FillModelsUsed } from './fill-models.ts';
import type { CandleCounts } from './official-candles.ts';
import { type DriftStatus, formatDriftStatus, type RunnerOptions, type RunResult } from './runner-options.ts';

/** The run's result and report.txt's text, from what the stopped runner holds. */
export function runResult(r: {
  readonly o: RunnerOptions;
  readonly reason: string;
  readonly portfolio: Portfolio;
  /** The run's first to last event or transaction; undefined when it had none. */
  readonly period: { readonly from: number; readonly to: number } | undefined;
  readonly risk: RiskExecution | undefined;
  readonly limits: RiskLimits;
  readonly sim: SimBroker | undefined;
  readonly shadowSim: SimBroker | undefined;
  readonly shadow: string | undefined;
  readonly unknownFills: readonly UnknownFill[];
  readonly drift: DriftStatus | undefined;
  readonly intents: number;
  readonly transactions: number;
  readonly recovered: Recovered;
  readonly account: AccountCheck | undefined;
  readonly latency: RunResult['latency'];
  readonly candles: Readonly<CandleCounts>;
  /** A portfolio's strategies: each book's figures in `summary.strategies`, a line each in the report. */
  readonly books?: LivePortfolio;
}): RunResult {
  const risk = r.risk !== undefined ? { risk: { limits: r.limits, refused: r.risk.refused } } : {};
  const period = r.period === undefined ? {} : { ...r.period, exposureFromTrades: true };
  const account = summarize(r.portfolio, { ...period, ...risk });
  const books = r.books?.books;
  const summary =
    books === undefined
      ? account
      : {
          ...account,
          strategies: Object.fromEntries(
            books.map((b) => {
              const own = r.books!.riskOf(b.name);
              return [b.name, summarize(b.portfolio, own === undefined ? period : { ...period, risk: own })];
            }),
          ),
        };
  const failed = r.books?.failed ?? new Map<string, string>();
  const stoppedAlone = [...failed]
    .map(([name, why]) => `\n  ${name} was stopped alone: it threw ${why}`)
    .join('');
  const params = Object.entries(r.o.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  // The simulator's fill models close the report (--broker sim); the shadow comparison names its own.
  const simulator = r.sim ?? r.shadowSim;
  const models: FillModelsUsed | undefined =
    simulator === undefined
      ? undefined
      : {
          slippage: simulator.models.slippage,
          latency: simulator.models.latency,
          commission: simulator.models.commission,
        };
  const unknown = r.unknownFills;
  const drift = r.drift;
  const unknownLines =
    unknown.length === 0
      ? ''
      : `\nUNKNOWN FILLS: ${unknown.length} (--on-unknown-fill ${r.o.onUnknownFill ?? 'halt'})${unknown.map((u) => `\n  ${describeUnknownFill(u)}`).join('')}`;
  const report = `${formatSummary(summary, `${r.o.name}  ${params}  (run: ${r.reason})`)}${r.sim !== undefined && models !== undefined ? `\n${formatFillModels(models)}` : ''}${unknownLines}${drift !== undefined ? `\n${formatDriftStatus(drift)}` : ''}${formatStrategies(summary)}${stoppedAlone}`;
  return {
    ...(drift !== undefined ? { drift } : {}),
    summary,
    report,
    ...(models !== undefined ? { models } : {}),
    intents: r.intents,
    transactions: r.transactions,
    recovered: { ...r.recovered },
    risk: { breaches: r.risk?.breaches.length ?? 0, byLimit: { ...r.risk?.refused } },
    unknownFills: [...unknown],
    ...(r.shadow !== undefined ? { shadow: r.shadow } : {}),
    ...(r.account !== undefined ? { account: r.account } : {}),
    latency: r.latency,
    candles: { ...r.candles },
    reason: r.reason,
  };
}
