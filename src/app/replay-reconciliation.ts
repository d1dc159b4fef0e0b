// The reconciliation `fxflow replay` writes (reconciliation.json) and its drift-guard section (driftOfReplay).
import type { InstrumentRegistry } from '../domain/instrument.ts';
import type { Transaction } from '../domain/v20/index.ts';
import type { DecisionDiff, FillDiff, MoneyTotals } from '../runner/recording/reconcile.ts';
import { breachedTolerance, type DriftTolerances, formatDrift } from '../runner/recording/drift.ts';
import type { SessionInfo } from '../runner/recording/recording.ts';

/** The reconciliation (reconciliation.json). */
export interface Reconciliation {
  readonly folder: string;
  readonly strategy: {
    readonly file: string;
    readonly recordedSha256: string;
    readonly sha256: string;
    readonly changed: boolean;
  };
  readonly fill: 'current' | 'next';
  /** The replay simulator's fill models (a --broker sim run's own; none against an account, whose fills are what is compared). */
  readonly models: { readonly slippage: string; readonly latency: string; readonly commission: string };
  readonly sessions: number;
  readonly records: {
    readonly ticks: number;
    readonly candles: number;
    readonly labs: number;
    readonly transactions: number;
    readonly intents: number;
  };
  /** Sessions cut off (kill -9, a crash): where each one's inputs end, which the replay covers up to. */
  readonly cuts: readonly string[];
  /** Messages about the inputs: damaged or cut-short lines (file and line), unknown kinds, another account or instruments. */
  readonly problems: readonly string[];
  readonly skipped: {
    readonly damaged: number;
    readonly unknownKind: number;
    readonly truncated: number;
    readonly otherAccount: number;
    readonly unknownInstrument: number;
  };
  /** Where the inputs are first damaged (a record missing): decisions and fills after it are not compared. */
  readonly damagedFrom?: {
    readonly file: string;
    readonly line: number;
    readonly record: number;
    readonly after?: string;
  };
  readonly decisions: {
    readonly live: number;
    readonly replay: number;
    readonly differ: number;
    readonly firstParting?: DecisionDiff;
    readonly diffs: readonly DecisionDiff[];
  };
  readonly fills: {
    readonly compared: number;
    readonly differ: number;
    readonly byCause: Readonly<Record<string, number>>;
    readonly diffs: readonly FillDiff[];
  };
  readonly money: {
    readonly live: MoneyTotals;
    readonly replay: MoneyTotals;
    readonly realizedPLDiff: string;
    readonly financingDiff: string;
    readonly commissionDiff: string;
  };
  /** Restarts between sessions (the live strategy resumed from its journal; the replay ran on in one piece). */
  readonly restarts: readonly {
    readonly session: number;
    readonly at: string;
    readonly previousStop: string;
    readonly restoredState: boolean;
    readonly sequenceLive: number;
    readonly sequenceReplay: number;
  }[];
  /**
   * A run with a drift guard (`fxflow run --shadow --max-drift`): its tolerances, the fills of the
   * reconciliation past the price tolerance, the fills made on one side only, and the halt the
   * guard made (a session's stop reason), if any.
   */
  readonly drift?: {
    readonly tolerances: string;
    readonly fills: readonly {
      readonly clientID: string;
      readonly instrument: string;
      readonly live?: string;
      readonly replay?: string;
      readonly pips?: number;
      readonly what: 'price' | 'missed';
    }[];
    readonly missed: number;
    readonly pastTolerance: readonly string[];
    readonly halts: readonly string[];
  };
  /** Differences in all: decisions + fills + a non-zero P/L, financing or commission difference. */
  readonly differences: number;
}

/**
 * The drift guard's tolerances applied to the reconciliation's fill differences (the same check as
 * the live guard, `breachedTolerance`): each fill further from its replay than the price tolerance,
 * each fill made on one side only, and the halts the live guard made.
 */
export function driftOfReplay(
  t: DriftTolerances,
  diffs: readonly FillDiff[],
  liveFills: ReadonlyMap<string, Transaction>,
  instruments: InstrumentRegistry,
  sessions: readonly SessionInfo[],
): NonNullable<Reconciliation['drift']> {
  const fills: {
    clientID: string;
    instrument: string;
    live?: string;
    replay?: string;
    pips?: number;
    what: 'price' | 'missed';
  }[] = [];
  let missed = 0;
  for (const d of diffs) {
    const instrument = (liveFills.get(d.liveID) as { instrument?: string } | undefined)?.instrument ?? '';
    if (d.priceDiff !== undefined && instruments.has(instrument)) {
      const pips = Math.abs(d.priceDiff) / instruments.get(instrument).pip;
      if (breachedTolerance(t, { pricePips: pips }) === 'price')
        fills.push({
          clientID: d.liveID,
          instrument,
          live: d.live.price ?? '',
          replay: d.replay.price ?? '',
          pips,
          what: 'price',
        });
    } else if (
      (d.live.outcome === 'FILLED' &&
        (d.replay.outcome === 'REJECTED' || d.replay.outcome === 'CANCELLED')) ||
      (d.replay.outcome === 'FILLED' && (d.live.outcome === 'REJECTED' || d.live.outcome === 'CANCELLED'))
    ) {
      // One side filled, the other settled without a fill (an outcome not yet there is no miss, as live).
      missed++;
      fills.push({
        clientID: d.liveID,
        instrument,
        ...(d.live.price !== undefined ? { live: d.live.price } : {}),
        ...(d.replay.price !== undefined ? { replay: d.replay.price } : {}),
        what: 'missed',
      });
    }
  }
  const pastTolerance: string[] = [];
  if (fills.some((f) => f.what === 'price')) pastTolerance.push('price');
  if (breachedTolerance(t, { missed }) === 'fills') pastTolerance.push('fills');
  const halts = sessions
    .filter((s) => s.reason?.includes('drift guard') === true)
    .map((s) => `session ${s.n}: ${s.reason}`);
  return { tolerances: formatDrift(t), fills, missed, pastTolerance, halts };
}
