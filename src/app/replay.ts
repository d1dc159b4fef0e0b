import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import type { SimBroker } from '../adapters/sim/broker.ts';
import type { SimSettings } from '../adapters/sim/factory.ts';
import { FillModelError, type FillModelNames } from '../adapters/sim/fill-models.ts';
import { knownPart } from '../adapters/sim/seed.ts';
import { restoreAccount, type AccountState } from '../domain/account-state.ts';
import type { MarketEvent } from '../domain/events.ts';
import { RecordedPricesGate } from '../adapters/catalog/gate.ts';
import { loadInstruments, type InstrumentRegistry } from '../domain/instrument.ts';
import { withClientID, type OrderIntent } from '../domain/intents.ts';
import { formatTime, parseTime } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { subscriptionsOf } from '../engine/engine.ts';
import { Portfolio } from '../engine/portfolio.ts';
import { VirtualClock } from '../ports/clock.ts';
import type { Execution } from '../ports/execution.ts';
import {
  compareDecisions,
  compareFills,
  moneyOf,
  pairDecisions,
  QuoteTrack,
  type Attempt,
  type Decision,
  type EventRef,
} from '../runner/recording/reconcile.ts';
import type { DriftTolerances } from '../runner/recording/drift.ts';
import {
  inputFiles,
  readInputs,
  readRunMeta,
  RecordingError,
  type InputRecord,
  type RunMeta,
  type SessionAccount,
  type SessionInfo,
  type Where,
} from '../runner/recording/recording.ts';
import type { RiskLimits } from '../engine/risk.ts';
import { assemble, type Assembly } from './assembly.ts';
import type { Params, Strategy } from '../strategy/api.ts';
import { fileSha256 } from './live-run-folder.ts';
import { loadStrategy } from './load-strategy.ts';
import { driftOfReplay, type Reconciliation } from './replay-reconciliation.ts';

export type { Reconciliation } from './replay-reconciliation.ts';
export { reconciliationText, writeReconciliation } from './replay-text.ts';

/** A replay that cannot run: the strategy file changed (without --allow-changed-strategy) or is missing. */
export class ReplayError extends Error {
  readonly code = 'REPLAY' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ReplayError';
  }
}

export interface ReplayOptions {
  /** The live run folder (run.json and inputs-*.jsonl.gz). */
  readonly dir: string;
  /** Where reconciliation.json/.txt go (default the run folder). */
  readonly out?: string;
  /** Another strategy file than the one run.json names (its hash is still compared). */
  readonly strategy?: string;
  /** Replay even when the strategy file's hash differs from the recorded one (a warning names both). */
  readonly allowChangedStrategy?: boolean;
  /**
   * How the simulator fills a market order: 'current', at the price current when it was decided
   * (what OANDA and the sandbox do with an order that reaches them at once); 'next', at the next
   * recorded price (what a backtest does). Default: 'current' for a run against an account,
   * 'next' for `--broker sim` (whose simulator filled at the next price).
   */
  readonly fill?: 'current' | 'next';
  /** Fill times further apart than this (ms) differ; a live fill later than this after its decision is late (default 1000). */
  readonly toleranceMs?: number;
  readonly instruments?: InstrumentRegistry;
  /** Fill models over the run's recorded ones (the `replay` flags --market-hours, --slippage, --latency, --commission). */
  readonly models?: FillModelNames;
}

const silent = pino({ level: 'silent' });

/** The execution of the replay: the simulator, filling market orders at the current or the next price. */
class ReplayExecution implements Execution {
  readonly transactions$;
  /** The time of the market now: the latest price received, which may not have reached the simulator yet (a candle it completed comes first). */
  now = Number.NEGATIVE_INFINITY;
  constructor(
    readonly sim: SimBroker,
    readonly fill: 'current' | 'next',
    readonly last: Map<string, { bid: number; ask: number }>,
  ) {
    this.transactions$ = sim.transactions$;
  }
  submit(intent: OrderIntent, decidedAt?: number): void {
    const sim = this.sim;
    const before = sim.queuedMarketOrders();
    sim.submit(withClientID(intent), decidedAt);
    if (this.fill !== 'current' || sim.queuedMarketOrders() <= before) return;
    // The order reached the server at once: it fills at the price current now (the sandbox does
    // the same: the current quote fed again at the current time).
    for (const [instrument, q] of this.last) {
      if (sim.queuedMarketOrders(instrument) > 0)
        sim.onEvent({ kind: 'tick', instrument, at: Math.max(sim.now, this.now), bid: q.bid, ask: q.ask });
    }
  }
}

/**
 * The replay's account as the first session found it: the simulator's settings and what seeds it,
 * the portfolio beside it. A `--broker sim` run's simulator with its own fill models (the same fills
 * again); an account's, its known part (trades and orders in instruments the simulator knows).
 */
function replayAccount(
  acct: SessionAccount,
  accountID: string,
  instruments: InstrumentRegistry,
  fill: FillModelNames | undefined,
): {
  settings: SimSettings;
  seed: (sim: SimBroker) => void;
  portfolio: Portfolio;
  lastTransactionID: string;
  openingBalance: string;
  leftOut: string[];
} {
  if (acct.broker === 'sim') {
    const state: AccountState = acct.state ?? {
      lastTransactionID: '0',
      balance: '0',
      trades: [],
      orders: [],
    };
    const portfolio = new Portfolio({
      currency: acct.currency,
      instruments,
      initialBalance: acct.deposit,
      strict: false,
    });
    restoreAccount(portfolio.ledger, state, instruments, accountID);
    return {
      settings: {
        instruments,
        account: {
          currency: acct.currency,
          balance: acct.deposit,
          marginRate: acct.marginRate,
          hedging: acct.hedging,
          id: accountID,
        },
        models: fill ?? {},
      },
      seed: (sim) => {
        if (acct.state !== undefined) sim.seed(acct.state);
      },
      portfolio,
      lastTransactionID: state.lastTransactionID,
      openingBalance: acct.state?.balance ?? '0',
      leftOut: [],
    };
  }
  const known = knownPart(acct, instruments);
  const portfolio = new Portfolio({
    currency: acct.currency,
    instruments,
    initialBalance: acct.balance,
    strict: false,
  });
  restoreAccount(portfolio.ledger, acct, undefined, accountID);
  return {
    settings: {
      instruments,
      account: {
        currency: acct.currency,
        balance: acct.balance,
        marginRate: acct.marginRate,
        hedging: acct.hedging,
        id: accountID,
      },
    },
    seed: (sim) => sim.seed(known.state),
    portfolio,
    lastTransactionID: acct.lastTransactionID,
    openingBalance: acct.balance,
    leftOut: known.leftOut,
  };
}

const listOf = (s: RunMeta['subscriptions']): string[] =>
  [
    ...s.candles.map((c) => `candles ${c}`),
    ...s.ticks.map((t) => `ticks ${t}`),
    ...s.signals.map((x) => `signals ${x}`),
    ...s.calendar.map((x) => `calendar ${x}`),
    ...(s.spreads ?? []).map((x) => `spreads ${x}`),
    ...(s.cot ?? []).map((x) => `cot ${x}`),
  ].sort();

/**
 * `fxflow replay <run-folder>`: the recorded strategy through the simulator on exactly the recorded
 * inputs, in arrival order, through the same engine and strategy API as the live run (risk limits
 * included), and the reconciliation of the two. Never throws for what the inputs hold: damaged
 * lines, unknown kinds, another account's transactions are skipped and named; only a folder with
 * nothing to replay (RecordingError) or a changed strategy (ReplayError) stops it.
 */
export async function replayRun(o: ReplayOptions): Promise<Reconciliation> {
  const dir = resolve(o.dir);
  const meta = readRunMeta(dir);
  const { files, missing } = inputFiles(dir, meta);
  if (files.length === 0) {
    throw new RecordingError(
      `${dir} has run.json but no input files (inputs-*.jsonl.gz)${missing.length > 0 ? `: ${missing.join(', ')} named in run.json are missing` : ''}; nothing can be replayed. Record a run with \`fxflow run\` (it writes them into its run folder)`,
    );
  }
  const problems: string[] = missing.map(
    (f) => `${f}: named in run.json but missing; the replay goes on without it`,
  );
  if (meta.portfolio !== undefined)
    throw new ReplayError(
      `${dir} is the run of a portfolio (${meta.portfolio.map((m) => m.name).join(', ')}): fxflow replay replays the run of one strategy, and replaying a portfolio's run is not built yet. Its trades by strategy are in its summary.json (strategies)`,
    );
  // The strategy, checked against the recorded hash.
  const file = resolve(o.strategy ?? meta.strategy.file);
  if (!existsSync(file))
    throw new ReplayError(
      `the strategy file ${file} (recorded in ${join(dir, 'run.json')}) does not exist: give it with --strategy <file>`,
    );
  const sha256 = fileSha256(file);
  const changed = sha256 !== meta.strategy.sha256;
  if (changed && o.allowChangedStrategy !== true) {
    throw new ReplayError(
      `the strategy file ${file} has changed since the run: sha256 ${sha256}, the run recorded ${meta.strategy.sha256} (${join(dir, 'run.json')}). The replay would not run the strategy that traded; restore that version, or replay anyway with --allow-changed-strategy`,
    );
  }
  const edited = meta.sessions
    .filter((s) => s.strategySha256 !== undefined && s.strategySha256 !== meta.strategy.sha256)
    .map((s) => `session ${s.n} ran sha256 ${s.strategySha256}`);
  if (edited.length > 0)
    problems.push(
      `${join(dir, 'run.json')}: the strategy file was edited between restarts (${edited.join(', ')}; the last ${meta.strategy.sha256}): the replay runs the last one throughout, so decisions before the edit may differ for that reason`,
    );
  if (changed)
    problems.push(
      `WARNING: the strategy file ${file} has changed since the run (sha256 ${sha256}, recorded ${meta.strategy.sha256}): decisions may differ for that reason alone`,
    );
  const loaded = await loadStrategy(
    file,
    Object.entries(meta.params).map(([k, v]) => `${k}=${String(v)}`),
  );
  const instruments = o.instruments ?? loadInstruments();
  // The instrument set: what the strategy subscribes to with the recorded params, against what was recorded.
  const subs = subscriptionsOf(loaded.strategy, loaded.params, loaded.name);
  const now = listOf({
    candles: subs.candles ?? [],
    ticks: subs.ticks ?? [],
    signals: subs.signals ?? [],
    calendar: subs.calendar ?? [],
    spreads: subs.spreads ?? [],
    cot: subs.cot ?? [],
  });
  const then = listOf(meta.subscriptions);
  const notRecorded = now.filter((s) => !then.includes(s));
  if (notRecorded.length > 0 || now.length !== then.length) {
    problems.push(
      `${join(dir, 'run.json')}: the recording is of ${then.join(', ') || 'nothing'}; the strategy subscribes to ${now.join(', ') || 'nothing'}${notRecorded.length > 0 ? ` (${notRecorded.join(', ')} not recorded: no events for them)` : ''}. A recording of another instrument set: decisions will differ`,
    );
  }
  const fill = o.fill ?? (meta.broker === 'sim' ? 'next' : 'current');
  const toleranceMs = o.toleranceMs ?? 1000;
  const first = meta.sessions[0]!;
  const recordedModels = (meta.config as { fill?: FillModelNames }).fill;
  const fillModels = o.models !== undefined ? { ...recordedModels, ...o.models } : recordedModels;
  const account = replayAccount(first.account, meta.accountID, instruments, fillModels);
  const { portfolio, lastTransactionID, openingBalance, leftOut } = account;
  if (leftOut.length > 0)
    problems.push(
      `the account held trades or orders in instruments the simulator does not know (data/instruments.json), left out: ${leftOut.join(', ')}`,
    );
  const last = new Map<string, { bid: number; ask: number }>();
  let execution: ReplayExecution | undefined;
  const clock = new VirtualClock(0);
  const limits = ((meta.config as { limits?: RiskLimits }).limits ?? {}) as RiskLimits;
  // The strategy as the runner wraps it: warm-up candles reach the indicators, not the handlers.
  let warming = false;
  const base = loaded.strategy;
  const strategy: Strategy<Params, unknown> = {
    ...base,
    ...(base.onCandle ? { onCandle: (ctx, s) => (warming ? undefined : base.onCandle!(ctx, s)) } : {}),
    ...(base.onStart ? { onStart: (ctx, s) => (warming ? undefined : base.onStart!(ctx, s)) } : {}),
  };
  let current = 0;
  const replayDecisions: Decision[] = [];
  // The one assembly (src/app/assembly.ts), as the run had it: the risk gate with the run's limits
  // over the simulator, which fills market orders at the current or the next price (ReplayExecution).
  let assembly: Assembly;
  try {
    assembly = await assemble({
      mode: 'replay',
      strategies: [
        { strategy, name: loaded.name, params: loaded.params, clientIdPrefix: first.clientIdPrefix },
      ],
      broker: {
        kind: 'sim',
        settings: account.settings,
        seed: account.seed,
        execution: (s) => (execution = new ReplayExecution(s, fill, last)),
      },
      portfolio: () => portfolio,
      risk: {
        limits,
        accountID: meta.accountID,
        hedging: first.account.hedging,
        log: silent,
        lastTransactionID,
      },
      instruments,
      clock,
      log: silent,
      marginRate: Number(first.account.marginRate),
      onIntent: (intent) => replayDecisions.push({ intent, after: current, at: clock.now() }),
    });
  } catch (e) {
    if (e instanceof FillModelError) throw new ReplayError(`${e.flag}: ${e.message}`);
    throw e;
  }
  const sim = assembly.sim!;
  const engine = assembly.engine;
  const simTxs: Transaction[] = [];
  sim.transactions$.subscribe((t) => simTxs.push(t));
  assembly.risk!.transactions$.subscribe((t) => {
    if (t.id.includes('.')) simTxs.push(t); // the risk layer's own rejects (synthetic IDs)
  });
  engine.sequence = first.sequence;
  assembly.attach();

  // The inputs, in arrival order.
  const liveDecisions: Decision[] = [];
  const liveTxs: Transaction[] = [];
  const seenTx = new Set<string>();
  const quotes = new Map<string, QuoteTrack>();
  // The quote in force, in arrival order, at each live decision (by client ID) and each live fill (by transaction ID).
  const quoteAtDecision = new Map<string, { b: number; a: number }>();
  const quoteAtFill = new Map<string, { b: number; a: number }>();
  /** Wall-clock receive times (`rt`) of the live fills (by transaction ID) and decisions (`intent <client ID>`). */
  const receivedAt = new Map<string, number>();
  // The order path's attempts by client ID (each send, its outcome, each look-up).
  const attempts = new Map<string, Attempt[]>();
  const refs = new Map<number, EventRef>();
  const restarts: {
    session: number;
    at: string;
    previousStop: string;
    restoredState: boolean;
    sequenceLive: number;
    sequenceReplay: number;
  }[] = [];
  const restartTimes: number[] = [];
  const counts = { ticks: 0, candles: 0, labs: 0, transactions: 0, intents: 0 };
  let otherAccount = 0;
  let unknownInstrument = 0;
  let simStarted = false;
  let lastTime = Number.NaN;
  let failed: string | undefined;
  const at = (w: Where): string => `${w.file} line ${w.line}`;
  const feed = (ev: MarketEvent, withSim: boolean): void => {
    if (failed !== undefined) return;
    try {
      if (withSim) {
        assembly.feed([ev], (e) => {
          if (!simStarted) {
            simStarted = true;
            sim.start(e.at);
          }
          sim.onEvent(e);
        });
      } else assembly.feed([ev]);
    } catch (e) {
      failed = `the strategy threw while replaying (${(e as Error).message}); the replay stops at that event`;
    }
  };
  // Where each session's inputs end: one without a stop marker was cut (kill -9, a crash, power).
  const ends = new Map<number, { seq: number; rt: number; where: Where; stopped: boolean }>();
  let inSession = 0;
  // Damage: a record missing from the numbered sequence (a damaged or lost line, a file cut short
  // with more after it). Nothing after it is compared: the replay no longer sees what the run saw.
  let damage: { file: string; line: number; seq: number; time: number } | undefined;
  let lastSeq: number | undefined;
  let lastWhere: Where | undefined;
  const readPerSession = new Map<number, number>();
  const sessionOf = (seq: number): SessionInfo | undefined => {
    let found: SessionInfo | undefined;
    for (const s of meta.sessions) if (s.firstSeq <= seq) found = s;
    return found;
  };
  const onRecord = (rec: InputRecord, where: Where): void => {
    if (lastSeq !== undefined && rec.seq > lastSeq + 1 && Number.isInteger(rec.seq))
      damage ??= { file: lastWhere!.file, line: lastWhere!.line + 1, seq: lastSeq + 1, time: lastTime };
    if (Number.isInteger(rec.seq) && (lastSeq === undefined || rec.seq > lastSeq)) {
      lastSeq = rec.seq;
      lastWhere = where;
    }
    const session = sessionOf(rec.seq);
    if (session !== undefined) readPerSession.set(session.n, (readPerSession.get(session.n) ?? 0) + 1);
    if (rec.k === 'session' && rec.event === 'start') inSession = rec.session;
    const end = ends.get(inSession) ?? { seq: 0, rt: 0, where, stopped: false };
    if (rec.k === 'session' && rec.event === 'stop') end.stopped = true;
    else Object.assign(end, { seq: rec.seq, rt: rec.rt, where });
    ends.set(inSession, end);
    switch (rec.k) {
      case 'session': {
        if (rec.event === 'start' && rec.session > 1) {
          const s = meta.sessions[rec.session - 1];
          if (Number.isFinite(lastTime)) restartTimes.push(lastTime);
          restarts.push({
            session: rec.session,
            at: new Date(rec.rt).toISOString(),
            previousStop: meta.sessions[rec.session - 2]?.reason ?? 'unknown',
            restoredState: s?.restoredState ?? false,
            sequenceLive: s?.sequence ?? Number.NaN,
            sequenceReplay: engine.sequence,
          });
          // The live run's client IDs after the restart: its new run identity.
          if (s !== undefined) engine.clientIdPrefix = s.clientIdPrefix;
        }
        return;
      }
      case 'tick': {
        if (!instruments.has(rec.i)) {
          if (unknownInstrument++ < 3)
            problems.push(
              `${at(where)}: a price of ${rec.i}, an instrument the simulator does not know (data/instruments.json): skipped`,
            );
          return;
        }
        counts.ticks++;
        gate.tick(rec.i, rec.t, rec.b, rec.a, join(dir, where.file), where.line);
        refs.set(rec.seq, {
          seq: rec.seq,
          kind: `tick ${rec.i} ${rec.b}/${rec.a}`,
          time: formatTime(rec.t),
          where: at(where),
        });
        let track = quotes.get(rec.i);
        if (track === undefined) quotes.set(rec.i, (track = new QuoteTrack()));
        track.add(rec.t, rec.b, rec.a);
        last.set(rec.i, { bid: rec.b, ask: rec.a });
        lastTime = rec.t;
        current = rec.seq;
        execution!.now = rec.t;
        feed({ kind: 'tick', instrument: rec.i, at: rec.t, bid: rec.b, ask: rec.a }, true);
        return;
      }
      case 'candle': {
        counts.candles++;
        gate.candle(rec.c, join(dir, where.file), where.line);
        refs.set(rec.seq, {
          seq: rec.seq,
          kind: `candle ${rec.c.instrument} ${rec.c.granularity} (${rec.src})`,
          time: formatTime(rec.c.at),
          where: at(where),
        });
        current = rec.seq;
        // Delivered while the price that completed it was handled: that price is the market (its own record follows).
        if (rec.px !== undefined && instruments.has(rec.px.i)) {
          last.set(rec.px.i, { bid: rec.px.b, ask: rec.px.a });
          execution!.now = rec.px.t;
        }
        warming = rec.src === 'warmup';
        feed(rec.c, false);
        warming = false;
        // As the runner: a candle that came after later ticks is followed by the latest tick's mark.
        const q = last.get(rec.c.instrument);
        if (q !== undefined && Number.isFinite(lastTime) && lastTime >= rec.c.at)
          portfolio.mark({
            kind: 'tick',
            instrument: rec.c.instrument,
            at: lastTime,
            bid: q.bid,
            ask: q.ask,
          });
        return;
      }
      case 'labs':
        counts.labs++;
        refs.set(rec.seq, { seq: rec.seq, kind: rec.e.kind, time: formatTime(rec.e.at), where: at(where) });
        current = rec.seq;
        // Against an account, the account's clock moves on without prices: the simulator's too.
        feed(rec.e, fill === 'current');
        return;
      case 'tx': {
        const acc = (rec.tx as { accountID?: string }).accountID;
        if (acc !== undefined && acc !== meta.accountID) {
          if (otherAccount++ < 3)
            problems.push(
              `${at(where)}: transaction ${rec.tx.id} is of account ${acc}, the run's account is ${meta.accountID} (run.json): a recording from another account; skipped`,
            );
          return;
        }
        refs.set(rec.seq, {
          seq: rec.seq,
          kind: `transaction ${rec.tx.id} ${rec.tx.type}`,
          time: rec.tx.time,
          where: at(where),
        });
        // A transaction replayed to the strategy after a restart was recorded twice: once is enough.
        if (seenTx.has(rec.tx.id)) return;
        const filled =
          (rec.tx as { type: string; instrument?: string }).type === 'ORDER_FILL'
            ? (rec.tx as { instrument?: string }).instrument
            : undefined;
        const q = filled !== undefined ? last.get(filled) : undefined;
        if (q !== undefined) quoteAtFill.set(rec.tx.id, { b: q.bid, a: q.ask });
        if (filled !== undefined) receivedAt.set(rec.tx.id, rec.rt);
        seenTx.add(rec.tx.id);
        counts.transactions++;
        liveTxs.push(rec.tx);
        return;
      }
      case 'intent': {
        counts.intents++;
        const instrument = (rec.intent as { instrument?: string }).instrument;
        const q = instrument !== undefined ? last.get(instrument) : undefined;
        if (q !== undefined) quoteAtDecision.set(rec.intent.id, { b: q.bid, a: q.ask });
        receivedAt.set(`intent ${rec.intent.id}`, rec.rt);
        liveDecisions.push({ intent: rec.intent, after: rec.after, at: rec.t });
        return;
      }
      case 'attempt': {
        let list = attempts.get(rec.id);
        if (list === undefined) attempts.set(rec.id, (list = []));
        list.push({ n: rec.n, what: rec.what, rt: rec.rt });
        return;
      }
      case 'capped':
        problems.push(
          `${at(where)}: the recording reached its size cap (--record-max-mb) here; what the run received after it was not kept, so the comparison covers the run up to this point`,
        );
        return;
    }
  };
  // The recorded prices pass the gate every price source passes: a mismatch refuses the replay.
  const gate = new RecordedPricesGate(dir, instruments);
  const read = await readInputs(dir, files, onRecord);
  gate.end();
  // A session that run.json says held records, of which nothing could be read (its files empty or missing), is an error.
  for (const s of meta.sessions) {
    const held = Object.values(s.records ?? {}).reduce((a, b) => a + b, 0);
    if (held > 0 && (readPerSession.get(s.n) ?? 0) === 0) {
      const state = s.files.map((f) =>
        existsSync(join(dir, f))
          ? statSync(join(dir, f)).size === 0
            ? `${f} is empty (0 bytes)`
            : `${f} holds no readable record`
          : `${f} is missing`,
      );
      const what = Object.entries(s.records ?? {})
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
      throw new RecordingError(
        `${state.join(', ') || 'no input file is named'}, but ${join(dir, 'run.json')} says session ${s.n} held ${held} records (${what}): the recording is damaged and that session cannot be replayed. Restore the file from a backup, or replay a copy of the folder without that session`,
      );
    }
  }
  // Records run.json counts past the last one read (a file cut short at its end): damage there too.
  const recordedLast = Math.max(...meta.sessions.map((s) => s.lastSeq ?? 0));
  if (damage === undefined && lastSeq !== undefined && recordedLast > lastSeq && lastWhere !== undefined)
    damage = { file: lastWhere.file, line: lastWhere.line + 1, seq: lastSeq + 1, time: lastTime };
  try {
    assembly.stop();
  } catch (e) {
    failed ??= `the strategy threw in onStop (${(e as Error).message})`;
  }
  assembly.detach();
  if (failed !== undefined) problems.push(failed);
  problems.push(...read.messages);
  const cuts: string[] = [];
  for (const [n, e] of ends) {
    if (e.stopped || n === 0) continue;
    const next = n < meta.sessions.length ? `, then goes on with session ${n + 1}` : '';
    cuts.push(
      `session ${n} was cut off (no stop marker: the process was killed or crashed): its inputs end at record ${e.seq} (${at(e.where)}, received ${Number.isFinite(e.rt) && e.rt > 0 ? new Date(e.rt).toISOString() : 'at an unknown time'}); the replay covers it up to there${next}`,
    );
  }
  if (read.unknown > 3) problems.push(`${read.unknown} records of unknown kinds skipped in all`);
  if (read.damaged > 3) problems.push(`${read.damaged} damaged lines skipped in all`);
  if (otherAccount > 3) problems.push(`${otherAccount} transactions of another account skipped in all`);

  // The comparison. Live transactions from before the run (the account as the first session found it) are not the run's.
  const beforeDamage = (d: Decision): boolean => damage === undefined || d.after < damage.seq;
  const inTime = (t: Transaction): boolean => damage === undefined || parseTime(t.time) <= damage.time;
  const liveCompared = liveDecisions.filter(beforeDamage);
  const replayCompared = replayDecisions.filter(beforeDamage);
  const runTxs = liveTxs.filter(
    (t) => (Number(t.id) > Number(lastTransactionID) || t.id.includes('.')) && inTime(t),
  );
  if (damage !== undefined) {
    problems.unshift(
      `inputs damaged from ${damage.file} line ${damage.line} (record ${damage.seq} missing${Number.isFinite(damage.time) ? `, after ${formatTime(damage.time)}` : ''}): not compared past here (${liveDecisions.length - liveCompared.length} live and ${replayDecisions.length - replayCompared.length} replayed decisions after it left out, and the outcomes of orders that settled after it)`,
    );
  }
  const decisions = compareDecisions(liveCompared, replayCompared, (seq) => refs.get(seq));
  // Fills are compared decision by decision (the same order after the same record), never k-th with k-th.
  const pairs = pairDecisions(liveCompared, replayCompared);
  const decidedAt = new Map<string, number>();
  for (const d of liveDecisions) decidedAt.set(d.intent.id, d.at);
  const liveFills = new Map<string, Transaction>();
  const orderClient = new Map<string, string>();
  for (const t of runTxs) {
    const x = t as { type: string; id: string; orderID?: string; clientExtensions?: { id?: string } };
    if (x.type.endsWith('_ORDER') && x.clientExtensions?.id !== undefined)
      orderClient.set(x.id, x.clientExtensions.id);
    if (x.type === 'ORDER_FILL' && x.orderID !== undefined) {
      const cid = orderClient.get(x.orderID);
      if (cid !== undefined) liveFills.set(cid, t);
    }
  }
  // Each live fill's delay on the runner's own (wall) clock: the tolerance is in wall time, so a
  // sandbox whose clock runs 60 times faster does not make a 30 ms round trip a late fill.
  const wallDelayMs = new Map<string, number>();
  for (const [cid, t] of liveFills) {
    const sent = receivedAt.get(`intent ${cid}`);
    const got = receivedAt.get(t.id);
    if (sent !== undefined && got !== undefined && sent > 0 && got > 0)
      wallDelayMs.set(cid, Math.max(0, got - sent));
  }
  const simCompared = simTxs.filter(inTime);
  const compared = compareFills(runTxs, simCompared, pairs, {
    quotes,
    decidedAt,
    fill,
    toleranceMs,
    wallDelayMs,
    restarts: restartTimes,
    liveFills,
    quoteAtDecision,
    quoteAtFill,
    attempts,
  });
  // Past damage, an order whose outcome at the account came after it has none in what is compared: not a difference.
  const fills =
    damage === undefined
      ? compared
      : {
          compared: compared.compared,
          diffs: compared.diffs.filter((f) => f.live.outcome !== 'PENDING' && f.replay.outcome !== 'PENDING'),
        };
  const byCause: Record<string, number> = {};
  // Every cause a difference names counts (a late fill that also slipped counts under both).
  for (const f of fills.diffs) for (const c of f.causes) byCause[c] = (byCause[c] ?? 0) + 1;
  const liveMoney = moneyOf(runTxs, openingBalance);
  const replayMoney = moneyOf(
    simCompared.filter((t) => Number(t.id) > Number(lastTransactionID) || t.id.includes('.')),
    openingBalance,
  );
  const diff = (a: string, b: string): string => (Number(a) - Number(b)).toFixed(4);
  const money = {
    live: liveMoney,
    replay: replayMoney,
    realizedPLDiff: diff(liveMoney.realizedPL, replayMoney.realizedPL),
    financingDiff: diff(liveMoney.financing, replayMoney.financing),
    commissionDiff: diff(liveMoney.commission, replayMoney.commission),
  };
  const maxDrift = (meta.config as { maxDrift?: DriftTolerances }).maxDrift;
  const drift =
    maxDrift === undefined
      ? undefined
      : driftOfReplay(maxDrift, fills.diffs, liveFills, instruments, meta.sessions);
  const moneyDiffs = [money.realizedPLDiff, money.financingDiff, money.commissionDiff].filter(
    (x) => Number(x) !== 0,
  ).length;
  return {
    folder: dir,
    strategy: { file, recordedSha256: meta.strategy.sha256, sha256, changed },
    fill,
    models: { slippage: sim.models.slippage, latency: sim.models.latency, commission: sim.models.commission },
    sessions: meta.sessions.length,
    records: counts,
    problems,
    cuts,
    skipped: {
      damaged: read.damaged,
      unknownKind: read.unknown,
      truncated: read.truncated,
      otherAccount,
      unknownInstrument,
    },
    ...(damage !== undefined
      ? {
          damagedFrom: {
            file: damage.file,
            line: damage.line,
            record: damage.seq,
            ...(Number.isFinite(damage.time) ? { after: formatTime(damage.time) } : {}),
          },
        }
      : {}),
    decisions: {
      live: liveDecisions.length,
      replay: replayDecisions.length,
      differ: decisions.diffs.length,
      ...(decisions.first !== undefined ? { firstParting: decisions.first } : {}),
      diffs: decisions.diffs,
    },
    fills: { compared: fills.compared, differ: fills.diffs.length, byCause, diffs: fills.diffs },
    money,
    restarts,
    ...(drift !== undefined ? { drift } : {}),
    differences: decisions.diffs.length + fills.diffs.length + moneyDiffs,
  };
}
