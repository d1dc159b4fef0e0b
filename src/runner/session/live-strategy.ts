// What the live session wraps around the strategy and writes at its start: the strategy as a live
// run calls it (restored, quiet while warming up or halted), and the session's start in the run folder.
import type { SimBroker } from '../../adapters/sim/broker.ts';
import type { V20Execution } from '../../adapters/v20/execution.ts';
import type { Engine } from '../../engine/engine.ts';
import type { StateSnapshot } from '../order-path/journal.ts';
import type { Account, Transaction } from '../../domain/v20/index.ts';
import { HANDLER_NAMES, type Params, type Step, type Strategy } from '../../strategy/api.ts';
import type { InputRecorder } from '../recording/input-recorder.ts';
import type { SessionAccount } from '../recording/recording.ts';
import type { RunnerOptions } from './runner-options.ts';
import { type Baseline, baselineOf } from './session.ts';

/**
 * The strategy as a live run calls it: its state restored from the journal's snapshot (`restored`),
 * warm-up candles kept from its handlers, and, once halted (the kill switch), no handler of it called
 * at all. Every transaction the engine handles is told to `transaction` after the strategy.
 */
export function liveStrategy(
  base: Strategy<Params, unknown>,
  restored: { readonly state: unknown } | undefined,
  run: {
    readonly warming: () => boolean;
    readonly halted: () => boolean;
    readonly transaction: (tx: Transaction | undefined) => void;
  },
): Strategy<Params, unknown> {
  // Warm-up candles reach no handler; once halted, nothing does (onTransaction still tells `transaction`).
  const quiet = (): boolean => run.warming() || run.halted();
  const out: Record<string, unknown> = {
    ...base,
    ...(restored !== undefined ? { init: () => restored.state } : {}),
  };
  type Handler = (ctx: Parameters<NonNullable<Strategy['onTick']>>[0], s: unknown) => Step<unknown>;
  for (const k of HANDLER_NAMES) {
    const h = base[k] as Handler | undefined;
    if (k === 'onTransaction')
      out[k] = ((ctx, s) => {
        const r = h !== undefined && !run.halted() ? h(ctx, s) : undefined;
        run.transaction(ctx.transaction);
        return r;
      }) satisfies Handler;
    else if (h !== undefined) {
      const off = k === 'onCandle' || k === 'onStart' ? quiet : run.halted;
      out[k] = ((ctx, s) => (off() ? undefined : h(ctx, s))) satisfies Handler;
    }
  }
  return out as unknown as Strategy<Params, unknown>;
}

/**
 * The session's start in the run folder (the account the replay's simulator starts from: the
 * simulated account's state with `--broker sim`, the account's baseline otherwise), and what
 * transactions.jsonl lacks of what a killed process had received but not yet written, from the account.
 */
export async function recordSessionStart(
  o: RunnerOptions,
  recorder: InputRecorder,
  s: {
    readonly runId: string;
    readonly clientIdPrefix: string;
    readonly sequence: number;
    readonly restoredState: boolean;
    readonly sim: SimBroker | undefined;
    /** The simulated account continues from its journal (not a new one). */
    readonly seeded: boolean;
    readonly baseline: Baseline;
    readonly deposit: string;
    readonly account: Account;
    readonly fromID: string;
  },
): Promise<void> {
  let sessionAccount: SessionAccount;
  if (s.sim !== undefined) {
    const { quotes: _q, ...state } = s.sim.snapshot();
    sessionAccount = {
      broker: 'sim',
      currency: s.baseline.currency,
      marginRate: s.baseline.marginRate,
      hedging: s.baseline.hedging,
      deposit: s.deposit,
      ...(s.seeded ? { state } : {}),
    };
  } else {
    const { accountID: _a, ...b } = baselineOf(s.account);
    sessionAccount = { broker: 'v20', ...b };
  }
  recorder.start({
    runId: s.runId,
    clientIdPrefix: s.clientIdPrefix,
    sequence: s.sequence,
    account: sessionAccount,
    restoredState: s.restoredState,
  });
  const hole = s.sim === undefined ? recorder.missingBefore(Number(s.fromID)) : undefined;
  if (hole !== undefined)
    recorder.backfill(
      (await o.rest.transactionsSinceId(o.accountID, String(hole))).transactions.filter(
        (t) => Number(t.id) <= Number(s.fromID),
      ),
    );
}

/**
 * The strategy snapshot the journal keeps: the state (a portfolio's: each member's state and
 * sequence, live-portfolio.ts), the client-ID sequence, the last transaction and the last price per
 * instrument it has seen, and with --broker sim the simulator's trailing stop levels. Undefined
 * before the engine (or the portfolio's host) exists.
 */
export function stateSnapshot(r: {
  readonly engine: Engine<Params, unknown> | undefined;
  /** A portfolio's state (`LivePortfolio.state`), once its host exists; undefined for one strategy. */
  readonly portfolio: unknown;
  readonly handled: string;
  readonly prices: Readonly<Record<string, number>> | undefined;
  readonly sim: SimBroker | undefined;
}): StateSnapshot | undefined {
  const engine = r.engine;
  if (engine === undefined && r.portfolio === undefined) return undefined;
  const s: { -readonly [K in keyof StateSnapshot]: StateSnapshot[K] } = {
    state: engine !== undefined ? engine.state : r.portfolio,
    sequence: engine?.sequence ?? 0,
    handledTransactionID: r.handled,
  };
  if (r.prices !== undefined) s.prices = r.prices;
  const trailing = r.sim?.trailingStopValues();
  if (trailing !== undefined) s.trailing = trailing;
  return s;
}

/** An order in doubt now (the status page). */
export interface InDoubtNow {
  readonly intentId: string;
  readonly instrument: string | undefined;
  readonly until: number;
}

/** Orders in doubt now: in flight without an answer (the adapter's), or journaled ones a restart waits for. */
export function inDoubtNow(
  v20: V20Execution | undefined,
  orders: { readonly waiting: ReadonlyMap<string, { readonly intentId: string; readonly until: number }> },
): InDoubtNow[] {
  const live = [...(v20?.inDoubt.values() ?? [])].map((d) => ({
    intentId: d.intentId,
    instrument: d.instrument,
    until: d.until,
  }));
  const restart = [...orders.waiting.values()].map((d) => ({
    intentId: d.intentId,
    instrument: undefined,
    until: d.until,
  }));
  return [...live, ...restart];
}
