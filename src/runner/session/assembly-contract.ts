// What the one assembly (src/app/assembly.ts) takes and gives. Declared here, in the live session,
// because the runner sits below src/app: it is handed the assembly (RunnerOptions.assemble) by the
// CLI or a test, and names its shapes from here. Types only: nothing here runs.
import type { Observable } from 'rxjs';
import type { SimBroker } from '../../adapters/sim/broker.ts';
import type { SimSettings } from '../../adapters/sim/factory.ts';
import type { V20Execution, V20ExecutionOptions } from '../../adapters/v20/execution.ts';
import type { MarketEvent } from '../../domain/events.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { PlotSink } from '../../engine/context.ts';
import type { Engine, EngineStats } from '../../engine/engine.ts';
import type { IndicatorMemo } from '../../engine/indicator-memo.ts';
import type { Portfolio } from '../../engine/portfolio.ts';
import type { RiskBreach, RiskExecution, RiskLimits, RiskLogger } from '../../engine/risk.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Execution } from '../../ports/execution.ts';
import type { Params, Strategy, StrategyLogger } from '../../strategy/api.ts';

/**
 * Which mode built an assembly. The modes differ only in their data source, clock and broker:
 * backtest, a sweep's trial and a walk-forward fold (catalog batches, the simulated clock, a
 * simulator), replay (a run folder's inputs, a simulator), `run --broker sim` (live prices, a
 * simulator), `run --shadow` and a live run (live prices, the v20 account).
 */
export type AssemblyMode = 'backtest' | 'optimize' | 'walkforward' | 'replay' | 'run-sim' | 'shadow' | 'live';

/**
 * One strategy an assembly runs. The assembly takes a list (a portfolio of several strategies on
 * one account is the next step); today it runs exactly one.
 */
export interface StrategyEntry {
  readonly strategy: Strategy<Params, unknown>;
  readonly name: string;
  readonly params: Params;
  /** Client IDs are `<prefix>-<n>` (default the name; a live run adds its run identity). */
  readonly clientIdPrefix?: string;
  /** Where `ctx.plot` values go. */
  readonly onPlot?: PlotSink;
  /** Shares `ctx.indicator` values between runs on the very same candles (a sweep's trials). */
  readonly indicatorMemo?: { readonly memo: IndicatorMemo; readonly scope: string };
}

/**
 * Where the orders go: a simulator made from settings by the one factory (`seed` restores an
 * account into it; `execution` puts a mode's adapter over it: `run --broker sim`'s SimExecution, the
 * replay's fill at the current price), or the v20 account (the send point, `V20Execution`).
 */
export type BrokerChoice =
  | {
      readonly kind: 'sim';
      readonly settings: SimSettings;
      readonly seed?: (sim: SimBroker) => void;
      readonly execution?: (sim: SimBroker) => Execution;
    }
  | { readonly kind: 'v20'; readonly options: V20ExecutionOptions };

/** The risk gate's settings (src/engine/risk.ts): the limits and the account they guard. */
export interface RiskSettings {
  readonly limits: RiskLimits;
  /** The account's ID in its refusals (default: the simulator's). */
  readonly accountID?: string;
  readonly hedging?: boolean;
  /** Where the refusals' IDs start (default: the simulator's last transaction). */
  readonly lastTransactionID?: string;
  readonly log?: RiskLogger;
  readonly onReject?: (b: RiskBreach) => void;
  readonly keepBreaches?: boolean;
}

export interface AssemblyOptions {
  readonly mode: AssemblyMode;
  /** The strategies, in order: exactly one, unless `host` drives a portfolio's. */
  readonly strategies: readonly StrategyEntry[];
  /**
   * A portfolio's engines on their books (src/engine/portfolio-host.ts), in place of the one
   * strategy's engine: given what the engines submit to and the account, it returns what the
   * assembly drives. The broker, the account and the gate are built here as for one strategy.
   */
  readonly host?: (parts: { readonly execution: Execution; readonly portfolio: Portfolio }) => Driven;
  readonly broker: BrokerChoice;
  /** The account view; given the simulator when there is one (a backtest's portfolio shares its ledger). */
  readonly portfolio: (sim: SimBroker | undefined) => Portfolio;
  readonly risk: RiskSettings;
  /**
   * What an intent passes between the risk gate and the broker (live: the journal and the send
   * queue, `JournaledExecution`); none in a backtest or a replay.
   */
  readonly orderPath?: (broker: Execution) => Execution;
  readonly instruments: InstrumentRegistry;
  readonly clock: Clock;
  readonly log: StrategyLogger;
  readonly marginRate: number;
  /** Every intent the strategy returns, before the risk gate. */
  readonly onIntent?: (intent: OrderIntent) => void;
  readonly onProgress?: (at: number, events: number) => void;
}

/** What the assembly drives: one strategy's engine, or a portfolio's engines (the same calls). */
export interface Driven {
  attach(onFailure?: (error: unknown) => void): () => void;
  feed(batch: readonly MarketEvent[], before?: (ev: MarketEvent) => void): void;
  stop(): void;
  readonly stats: EngineStats;
}

/** What the assembly built, and the one way to drive it. */
export interface Assembly {
  readonly mode: AssemblyMode;
  /** The one strategy's engine (a portfolio's assembly has one per strategy, in `driven`). */
  readonly engine: Engine<Params, unknown>;
  /** What `feed` drives: `engine`, or a portfolio's host. */
  readonly driven: Driven;
  readonly portfolio: Portfolio;
  /** The risk gate; undefined only in a backtest without limits (it would refuse nothing). */
  readonly risk: RiskExecution | undefined;
  /** What the engine submits to: the gate, or the broker when there is no gate. */
  readonly execution: Execution;
  /** The broker's execution (the simulator, its adapter, or the v20 send point). */
  readonly broker: Execution;
  readonly sim: SimBroker | undefined;
  readonly v20: V20Execution | undefined;
  /** Starts folding the transactions (Engine.attach); `onFailure` as there. */
  attach(onFailure?: (error: unknown) => void): void;
  /** Feeds one time-ordered batch (Engine.feed): every mode drives the engine through this. */
  feed(batch: readonly MarketEvent[], before?: (ev: MarketEvent) => void): void;
  /**
   * A live source through the same feed, one event a batch: resolves once `events$` completes and
   * the strategy's onStop ran; rejects with what a handler threw (the events after it are not fed).
   */
  drive(events$: Observable<MarketEvent>): Promise<void>;
  /** The end of the events: the strategy's onStop, the portfolio and the series finished (Engine.stop). */
  stop(): void;
  /** Stops folding the transactions (what `attach` started). */
  detach(): void;
}

/** The assembly function the runner is handed (`assemble` of src/app/assembly.ts). */
export type Assemble = (o: AssemblyOptions) => Promise<Assembly>;
