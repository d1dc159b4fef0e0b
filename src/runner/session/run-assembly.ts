import type { Logger } from 'pino';
import type { SimExecution } from '../../adapters/sim/sim-execution.ts';
import type { StreamStats } from '../../adapters/v20/stream.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { Portfolio } from '../../engine/portfolio.ts';
import type { RiskLimits } from '../../engine/risk.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Execution } from '../../ports/execution.ts';
import type { StrategyLogger } from '../../strategy/api.ts';
import type { Journal, JournalContents, StateSnapshot } from '../order-path/journal.ts';
import { JournaledExecution } from '../order-path/order-lifecycle.ts';
import type { Assembly } from './assembly-contract.ts';
import { brokerChoice } from './broker-choice.ts';
import { liveStrategy } from './live-strategy.ts';
import type { LivePortfolio } from './live-portfolio.ts';
import type { RunnerOptions } from './runner-options.ts';
import type { Baseline } from './session.ts';

/** What the live session hands its assembly: where it restored to, and the runner's hooks into the order path. */
export interface RunAssemblyParts {
  readonly journal: Journal;
  readonly contents: JournalContents;
  readonly baseline: Baseline;
  readonly deposit: string;
  readonly snap: StateSnapshot | undefined;
  readonly fromID: string;
  readonly portfolio: Portfolio;
  /** The journaled transactions the strategy had not handled: replayed to it. */
  readonly replay: readonly Transaction[];
  /** Intents whose outcome is unknown (the order lifecycle's). */
  readonly unknown: Set<string>;
  readonly clientIdPrefix: string;
  readonly limits: RiskLimits;
  readonly clock: Clock;
  readonly log: Logger;
  readonly transactionStats: StreamStats;
  readonly warming: () => boolean;
  readonly halted: () => boolean;
  /** Every transaction the engine handled. */
  readonly transaction: (tx: Transaction | undefined) => void;
  /** An intent the strategy returned, before the gate; one the gate let through (journaled); one sent; one dropped. */
  readonly intent: (intent: OrderIntent) => void;
  readonly record: (intent: OrderIntent) => void;
  readonly sent: (intent: OrderIntent) => void;
  readonly drop: (intent: OrderIntent) => void;
  /** An intent submitted to the broker (the tick-to-submission latency). */
  readonly submitted: () => void;
  /** `--broker sim`: the simulator's execution, once made. */
  readonly simExecution: (x: SimExecution) => void;
  /** A portfolio's strategies (`RunnerOptions.members`); undefined for one strategy. */
  readonly live?: LivePortfolio;
  /** The run identity (a portfolio member's client IDs are `<name>-<runId>-<n>`). */
  readonly runId: string;
}

/**
 * The live session's call of the one assembly (src/app/assembly.ts, handed in by the CLI): the
 * strategy with its restored state (its handlers kept from warm-up candles and from everything once
 * halted), the broker this run chose, the order path (journal, send queue) between the risk gate
 * and it, the gate with the run's limits, and the engine. Returns the assembly and its journal layer.
 */
export async function assembleRun(
  o: RunnerOptions,
  p: RunAssemblyParts,
): Promise<{ readonly assembly: Assembly; readonly journaled: JournaledExecution }> {
  const broker = o.broker ?? 'v20';
  const { baseline, contents, snap } = p;
  const strategy = liveStrategy(o.strategy, snap !== undefined ? { state: snap.state } : undefined, {
    warming: p.warming,
    halted: p.halted,
    transaction: p.transaction,
  });
  const strategyLog: StrategyLogger = p.log.child({ component: 'strategy', strategy: o.name });
  let journaled: JournaledExecution | undefined;
  const live = p.live;
  // A portfolio's books start at the journal's start: the transactions its strategies had handled are folded into them first.
  const handled =
    live === undefined
      ? []
      : contents.transactions.filter(
          (t) =>
            Number(t.id) > Number(baseline.lastTransactionID) &&
            Number(t.id) <= Number(snap?.handledTransactionID ?? baseline.lastTransactionID),
        );
  const assembly = await o.assemble({
    mode: broker === 'sim' ? 'run-sim' : o.shadow === true ? 'shadow' : 'live',
    strategies:
      live !== undefined
        ? []
        : [
            {
              strategy,
              name: o.name,
              params: o.params,
              // The run identity in every client ID: no lost, moved or truncated journal can make two intents share one.
              clientIdPrefix: p.clientIdPrefix,
              ...(o.onPlot ? { onPlot: o.onPlot } : {}),
            },
          ],
    ...(live !== undefined
      ? {
          host: (parts: { readonly execution: Execution; readonly portfolio: Portfolio }) =>
            live.hostOf(parts, {
              restored: snap?.state,
              runId: p.runId,
              handled,
              hedging: baseline.hedging,
              funded: broker !== 'sim',
              marginRate: Number(baseline.marginRate),
              clock: p.clock,
              log: p.log,
              warming: p.warming,
              halted: p.halted,
              transaction: p.transaction,
              intent: p.intent,
            }),
        }
      : {}),
    broker: brokerChoice(
      o,
      broker,
      { baseline, deposit: p.deposit, contents, snap, fromID: p.fromID },
      {
        journal: p.journal,
        stats: p.transactionStats,
        halted: p.halted,
        sent: p.sent,
        simExecution: p.simExecution,
      },
    ),
    portfolio: () => p.portfolio,
    orderPath: (inner: Execution) =>
      (journaled = new JournaledExecution(
        inner as (Execution & { drain: () => Promise<void> }) | SimExecution,
        p.journal,
        p.replay,
        p.unknown,
        p.submitted,
        o.recorder,
        p.drop,
        p.record,
      )),
    risk: {
      limits: p.limits,
      accountID: o.accountID,
      hedging: baseline.hedging,
      log: p.log,
      lastTransactionID: contents.lastTransactionID || baseline.lastTransactionID,
      // A refused intent was never journaled, except a resend at a restart the gate refuses now: settled.
      onReject: (b) => p.journal.confirm(b.intent.id),
    },
    instruments: o.instruments,
    clock: p.clock,
    log: strategyLog,
    marginRate: Number(baseline.marginRate),
    onIntent: p.intent,
  });
  return { assembly, journaled: journaled! };
}
