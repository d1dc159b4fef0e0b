// What the live runner (runner.ts) takes and reports: its options, its result, the drift guard's
// status and its lines in the report.
import type { Logger } from 'pino';
import type { V20Http } from '../../adapters/v20/http.ts';
import type { V20Rest } from '../../adapters/v20/rest.ts';
import type { StreamOptions } from '../../adapters/v20/stream.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { PlotSink } from '../../engine/context.ts';
import type { Summary } from '../../engine/report.ts';
import type { RiskLimit, RiskLimits } from '../../engine/risk.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Params, Strategy } from '../../strategy/api.ts';
import type { AccountCheck } from '../order-path/kill-switch.ts';
import type { UnknownFill, UnknownFillPolicy } from '../order-path/unknown-fills.ts';
import type { InputRecorder } from '../recording/input-recorder.ts';
import {
  describeDriftedFill,
  type DriftBreach,
  type DriftedFill,
  type DriftMeasures,
  type DriftTolerances,
} from '../recording/drift.ts';
import type { Assemble } from './assembly-contract.ts';
import type { FillModelNames, FillModelsUsed } from './fill-models.ts';
import type { LabsEndpoints, LabsPollerOptions } from './labs-poller.ts';
import type { CandleCounts, LiveCandleSource } from './official-candles.ts';

/** One strategy of a live portfolio. */
export interface RunMember {
  readonly strategy: Strategy<Params, unknown>;
  readonly name: string;
  readonly params: Params;
  /** Its own risk limits, checked on its own book before the account's (the portfolio file's `risk`). */
  readonly limits?: RiskLimits;
}

/** What a member that threw does with its book: close its positions and cancel its orders, or leave them. */
export type OnStrategyError = 'close' | 'keep';

/** Everything the runner composes (the CLI builds it from flags; tests from a sandbox). */
export interface RunnerOptions {
  /**
   * The one assembly of every mode (`assemble` of src/app/assembly.ts, handed in by whoever builds
   * the runner: it sits above the runner's layer): it builds the broker this run chose, the order
   * path, the risk gate and the engine.
   */
  readonly assemble: Assemble;
  /** The strategy; a portfolio's (`members`) is the one whose subscriptions are all of theirs, with no handler. */
  readonly strategy: Strategy<Params, unknown>;
  readonly name: string;
  readonly params: Params;
  /**
   * A portfolio (docs/portfolios.md): several strategies on the account in this one run, each on its
   * own book, with one journal and one halt. `strategy`, `name` and `params` are then the portfolio's.
   */
  readonly members?: readonly RunMember[];
  /** A portfolio member that throws is stopped alone: 'close' (default) closes its book, 'keep' leaves it. */
  readonly onStrategyError?: OnStrategyError;
  readonly http: V20Http;
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly instruments: InstrumentRegistry;
  readonly journalDir: string;
  /**
   * `--new-journal`: start afresh from the account as it is now; the journal's old log and snapshot
   * are moved into `replaced-<time>/` inside it (a journal another live runner holds is refused).
   */
  readonly newJournal?: boolean;
  /**
   * A journaled market order or close that never reached the broker is not sent at a restart when
   * it is older than this (wall clock, default 5000 ms): it is reported, and the strategy gets a
   * reject (`FXFLOW_INTENT_EXPIRED`). Pending-order intents (limit, stop, MIT) carry their own price
   * and time in force and are sent whatever their age.
   */
  readonly maxIntentAgeMs?: number;
  /** First pause before an order whose outcome is unknown is looked up again (default 500 ms; doubling, at most 30 s). */
  readonly lookupBaseMs?: number;
  /**
   * The in-doubt rule (docs/operations.md): a request without an answer that may still be in transit
   * counts as never received only once this long (ms, default 60 000: OANDA publishes no figure;
   * twice the client's 30 s timeout) plus `inDoubtMarginMs` (default 10 000) has passed since it was
   * sent with no sign of it on the transaction stream or in the account's transactions.
   */
  readonly requestWindowMs?: number;
  readonly inDoubtMarginMs?: number;
  /** The run identity in every client ID (default: a new one per start, time + random). */
  readonly runId?: string;
  /** fsync every journal write (default true; false only to measure what fsync costs). */
  readonly journalSync?: boolean;
  /**
   * When an intent's journal record is made durable against power loss. 'before-submit': written
   * and fdatasynced before the order is sent. 'after-submit' (default): written before the order is
   * sent (so a killed process never loses it: the data is in the OS page cache), fdatasynced about a
   * millisecond later, after the request is on the wire. The window only matters for a power
   * loss, and even then the order is found again by its client ID from the transaction stream.
   */
  readonly intentDurability?: 'before-submit' | 'after-submit';
  /**
   * Rebase the journal (a fresh account baseline, older transactions dropped) once it keeps this
   * many transactions (default 10,000; 0 never). Bounds its size and the restart time of long runs.
   * With --broker sim the baseline is the simulated account (`SimBroker.snapshot()`). Not in shadow
   * mode, whose report compares every fill of the run.
   */
  readonly rebaseEvery?: number;
  /**
   * The risk gate's limits (`0` or absent: not checked). Not given: the defaults every `fxflow run`
   * has (`DEFAULT_RISK_LIMITS`); `{}` turns every limit off.
   */
  readonly limits?: RiskLimits;
  /** 'v20': orders go to the account. 'sim': shadow paper, live prices with simulated fills. */
  readonly broker?: 'v20' | 'sim';
  /** Every intent also to a simulator fed the same prices; fill-by-fill divergences reported. */
  readonly shadow?: boolean;
  /**
   * The fill models of the simulators (`broker: 'sim'` and `shadow`), named as the configuration
   * names them (`fxflow run --config/--slippage/--latency/--commission`): slippage "none",
   * "fixed:<pips>", "spread:<fraction>"; latency "none", "fixed:<ms>", "file:<path>"; commission
   * "oanda-core" or a rate per million units ("0": none). Default: v20's own (none of them). The
   * report names them.
   */
  readonly fill?: FillModelNames;
  /**
   * With `shadow`: the drift guard's tolerances (`--max-drift`, src/runner/drift.ts). Past one, the
   * run halts as the kill switch does (the journal's halt, its reason naming the tolerance and the fills).
   */
  readonly maxDrift?: DriftTolerances;
  readonly flattenOnExit?: boolean;
  /**
   * What the run does when it notices a fill it did not expect (an unknown fill: a second order
   * under one client ID, an order it gave up on, one it never placed; see unknown-fills.ts): 'halt'
   * (default) engages the kill switch (the strategy stops, the account is flattened); 'close' closes
   * the trade the fill opened and trades on; 'keep' only reports it. Each is logged at error level,
   * shown on the status page and counted in the run's report.
   */
  readonly onUnknownFill?: UnknownFillPolicy;
  /** With the kill switch: flatten as well as cancel (default true). */
  readonly flattenOnKill?: boolean;
  /** The kill switch file (its existence stops the run); SIGUSR2 always works. */
  readonly killFile?: string;
  /**
   * The kill switch and --flatten-on-exit keep trying to confirm a flat account this long (ms,
   * default 5 minutes) through failed reads and closes before they give up NOT FLAT.
   */
  readonly flattenTimeoutMs?: number;
  /** First pause between the flatten's attempts (ms, default 500, doubling to 10 s). */
  readonly flattenRetryBaseMs?: number;
  /**
   * Lines for the operator's terminal (the CLI: stderr, also with --log-file): the kill switch's
   * engagement, what a stop waits for, and every `progressEveryMs` (default 5 s) what the flatten
   * still finds open. Each is logged as well.
   */
  readonly say?: (line: string) => void;
  readonly progressEveryMs?: number;
  /**
   * Ctrl-C (with `signals`): the first starts the graceful stop, the second warns, a third within
   * this window (ms, default 3000) of the second exits at once through `abandon`.
   */
  readonly ctrlCWindowMs?: number;
  /** The third Ctrl-C: called with what is open as last seen; the CLI prints NOT FLAT and exits 130. */
  readonly abandon?: (open: readonly string[]) => void;
  /** Listen to SIGINT/SIGTERM/SIGUSR2 (the CLI: true; tests drive `stop` themselves). */
  readonly signals?: boolean;
  /** Status line period in ms (default 60 s; 0 = none). */
  readonly statusEveryMs?: number;
  /** Candles per series for indicator warm-up (default the strategy's history, at most 5000). */
  readonly warmup?: number;
  /**
   * Live candles: 'endpoint' (default, any broker): when a bucket ends (first tick or heartbeat
   * after it), the candles endpoint's official candle for it, the candles a backtest's catalog
   * holds; 'ticks': built from the pricing stream's ticks. See `LiveCandleFeed`.
   */
  readonly candles?: LiveCandleSource;
  /** 'endpoint': longest wait for an official candle before the tick-built one is used (default 10 s). */
  readonly candleWaitMs?: number;
  readonly streams?: StreamOptions;
  readonly log: Logger;
  readonly clock?: Clock;
  /** Called after every new price was handled, with its time (progress displays, tests). */
  readonly onPrice?: (instrument: string, at: number) => void;
  /** Called for every intent the strategy returns (tests compare decisions with a backtest). */
  readonly onIntent?: (intent: OrderIntent, at: number) => void;
  /** Every transaction the strategy's engine handles, after the portfolio folded it (the live status page). */
  readonly onTransaction?: (tx: Transaction) => void;
  /** Where the strategy's `ctx.plot` values go (the run folder's plots.csv); without it `ctx.plot` does nothing. */
  readonly onPlot?: PlotSink;
  /**
   * OANDA labs (V20Labs): strategies that subscribe to `calendar`, `signals`, `spreads` or `cot` get them from a
   * LabsPoller; what was delivered is kept in `<journalDir>/labs/` so a restart does not deliver it again.
   */
  readonly labs?: LabsEndpoints;
  /**
   * Keeps the run's inputs in its run folder (ticks, candles, labs events, transactions, intents,
   * session markers: `fxflow replay` reads them). The runner opens a session at start and closes it
   * at stop; the caller creates it and writes the report files after the stop.
   */
  readonly recorder?: InputRecorder;
  /** Options of the labs poller (tests: poll periods). */
  readonly labsPoll?: Pick<LabsPollerOptions, 'every' | 'requestsPerMinute' | 'timeoutMs'> & {
    readonly tickMs?: number;
  };
}

/** What a stopped run reports. */
export interface RunResult {
  readonly summary: Summary;
  readonly report: string;
  readonly intents: number;
  readonly transactions: number;
  readonly recovered: {
    readonly replayed: number;
    readonly lookedUp: number;
    readonly resubmitted: number;
    readonly expired: number;
    readonly neverSent: number;
    readonly restoredState: boolean;
  };
  /**
   * After the kill switch or --flatten-on-exit (v20): the account as read from OANDA once the closes
   * were sent. `ok` false means it still holds positions or pending entry orders (or could not be
   * read): the run failed to flatten, and the CLI exits non-zero.
   */
  readonly account?: AccountCheck;
  /** Refusals of the risk gate: how many, and by limit. */
  readonly risk: { readonly breaches: number; readonly byLimit: Partial<Record<RiskLimit, number>> };
  /** Fills the runner did not expect (v20), and what the policy did (`onUnknownFill`). */
  readonly unknownFills: readonly UnknownFill[];
  readonly shadow?: string;
  /** The drift guard (`maxDrift`): its tolerances, measures, the fills that drifted and the breach that halted the run, if any. */
  readonly drift?: DriftStatus;
  /** The fill models of the simulated broker (--broker sim) or the shadow simulator, by name; undefined with neither. */
  readonly models?: FillModelsUsed;
  readonly latency: { readonly p50: number; readonly p99: number; readonly max: number; readonly n: number };
  /** Live candles delivered: official (candles endpoint) and built from ticks (source 'ticks', or fallback). */
  readonly candles: Readonly<CandleCounts>;
  readonly reason: string;
}

/** What the drift guard says (the report, the status page). */
export interface DriftStatus {
  readonly tolerances: string;
  readonly compared: number;
  readonly measures: DriftMeasures;
  readonly drifted: readonly DriftedFill[];
  readonly breach?: DriftBreach;
}

/** The drift guard's lines in the run's report: the verdict, the measures, and each fill that drifted. */
export function formatDriftStatus(d: DriftStatus): string {
  const m = d.measures;
  const head =
    d.breach !== undefined
      ? `DRIFT GUARD HALTED THE RUN (--max-drift ${d.tolerances}): ${d.breach.tolerance} past its tolerance: ${d.breach.why}`
      : `Drift guard (--max-drift ${d.tolerances}): within every tolerance`;
  const lines = [
    head,
    `  ${d.compared} fill(s) compared; largest price difference ${m.pricePips.toFixed(1)} pips; fills on one side only ${m.missed}; realized P/L gap over the window ${m.plGap.toFixed(2)}`,
  ];
  for (const f of d.drifted) lines.push(`  drifted: ${describeDriftedFill(f)}`);
  return lines.join('\n');
}
