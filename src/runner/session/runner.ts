import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { SimBroker } from '../../adapters/sim/broker.ts';
import type { V20Execution } from '../../adapters/v20/execution.ts';
import { newStreamStats, type StreamStats } from '../../adapters/v20/stream.ts';
import { type OrderIntent, RUNNER_ID_PREFIX } from '../../domain/intents.ts';
import { parseTime } from '../../domain/time.ts';
import type { Account, Transaction } from '../../domain/v20/index.ts';
import { type Engine, subscriptionsOf } from '../../engine/engine.ts';
import type { Assembly } from './assembly-contract.ts';
import { assembleRun } from './run-assembly.ts';
import { checkRunJournal, openRunJournal, restoreAtStart, runRebase } from './account-restore.ts';
import { flattenAccount } from './flatten.ts';
import { startShadow } from './shadow-setup.ts';
import { logStatus } from './status-line.ts';
import { listenToOperator, sessionCtrlC, waitingFor } from './operator-signals.ts';
import { driftStatus, onDrift, onUnknownFill, type SurpriseParts } from './surprises.ts';
import { runResult } from './run-result.ts';
import { inDoubtNow, type InDoubtNow, recordSessionStart, stateSnapshot } from './live-strategy.ts';
import { checkPortfolioStart, LivePortfolio } from './live-portfolio.ts';
import { Portfolio } from '../../engine/portfolio.ts';
import { VirtualClock, type Clock } from '../../ports/clock.ts';
import type { Params } from '../../strategy/api.ts';
import { type Halt, Journal, type JournalContents, type StateSnapshot } from '../order-path/journal.ts';
import type { LabsPoller } from './labs-poller.ts';
import { MarketInputs } from './market-inputs.ts';
import type { CandleCounts } from './official-candles.ts';
import { DEFAULT_RISK_LIMITS, describeLimits, RiskExecution, type RiskLimits } from '../../engine/risk.ts';
import {
  type AccountCheck,
  clearHaltAdvice,
  killSwitchIntents,
  openOfLedger,
} from '../order-path/kill-switch.ts';
import { isRunnerIntent, type JournaledExecution, OrderLifecycle } from '../order-path/order-lifecycle.ts';
import { type CtrlC, Latency, newRunId, waitFor } from './session.ts';
import type { JournalRebase } from '../order-path/journal-rebase.ts';
import type { ShadowBook } from '../recording/shadow.ts';
import type { SimExecution } from '../../adapters/sim/sim-execution.ts';
import { RunnerError } from './errors.ts';
import { type UnknownFill, UnknownFills } from '../order-path/unknown-fills.ts';
import type { DriftGuard } from '../recording/drift.ts';
import { type DriftStatus, formatDriftStatus, type RunnerOptions, type RunResult } from './runner-options.ts';

export { RunnerError, newRunId, type AccountCheck };
export { formatDriftStatus, type DriftStatus, type RunnerOptions, type RunResult };

/** v20 client IDs are at most 128 characters (clientExtensions). */
const CLIENT_ID_MAX = 128;

/**
 * The paper/live runner: the same strategy module as a backtest (or a portfolio of them, each on its
 * own book: live-portfolio.ts), on a v20 account.
 * Start-up: reconcile the account (or the journal's baseline after a crash) into the portfolio;
 * settle intents the journal holds without a known outcome (look each order up by `@clientID`,
 * resubmit only what provably never reached the broker); restore the strategy state and the client-ID
 * sequence; warm the indicators from the candles endpoint (handlers are not called on warm-up
 * candles); then subscribe to the transaction stream (from the journal's last ID: exactly the missed
 * transactions are replayed) and the pricing stream (ticks; buckets built from them, each replaced
 * by the candles endpoint's official candle when it completes, see `LiveCandleFeed`).
 *
 * Order path: engine → journal (intent + strategy snapshot, fsync) → risk → broker. Transactions:
 * broker → journal (fsync) → risk → engine → portfolio → strategy.
 */
export class Runner {
  readonly o: RunnerOptions;
  readonly journal: Journal;
  #portfolio: Portfolio;
  readonly pricingStats: StreamStats = newStreamStats();
  readonly transactionStats: StreamStats = newStreamStats();
  readonly latency = new Latency();
  readonly #log: Logger;
  readonly #clock: Clock;
  /** Prices, candles and labs items: what the strategy hears of the market (the engine runs on `events`). */
  readonly #inputs: MarketInputs;
  #engine: Engine<Params, unknown> | undefined;
  /** A portfolio's strategies (`members`), in place of one engine. */
  readonly live: LivePortfolio | undefined;
  /** What the one assembly built for this run (src/app/assembly.ts). */
  #assembly: Assembly | undefined;
  #risk: RiskExecution | undefined;
  #v20: V20Execution | undefined;
  #sim: SimBroker | undefined;
  #simExecution: SimExecution | undefined;
  /** Keeps the journal bounded (`rebaseEvery`); built at start, once the broker is known. */
  #rebase: JournalRebase | undefined;
  #shadow: ShadowBook | undefined;
  /** The drift guard (`--shadow --max-drift`). */
  #drift: DriftGuard | undefined;
  #done: Promise<void> | undefined;
  #stopping: Promise<RunResult> | undefined;
  /** Lets go of the kill switch and the signal handlers (set once the session runs). */
  #letGo: (() => void) | undefined;
  #statusTimer: ReturnType<typeof setInterval> | undefined;
  #intents = 0;
  #handled = '';
  /** This start's identity, in every client ID it makes. */
  readonly runId: string;
  /** Client IDs are `<prefix>-<n>`: the strategy name and the run identity. */
  get #clientIdPrefix(): string {
    return `${this.o.name.slice(0, CLIENT_ID_MAX - this.runId.length - 12)}-${this.runId}`;
  }
  #accountCheck: AccountCheck | undefined;
  /** Intents in doubt and their settling (built in the constructor). */
  readonly #orders: OrderLifecycle;
  #contents: JournalContents;
  #simStarted = false;
  /** The kill switch submitted its intents (cancels, closes). */
  #killed = false;
  /** The kill switch (or a flattening stop) engaged, one-way: nothing of the strategy is called or sent any more. */
  #halted = false;
  /** The journal's halt (the kill switch engaged, now or in an earlier process): what `kill` flattens for. */
  #haltedBy: Halt | undefined;
  /** `start` has finished: the kill switch flattens at once (before, it waits for the start). */
  #started = false;
  #killing: Promise<RunResult> | undefined;
  #afterStart: Promise<RunResult> | undefined;
  #startKilled: ((r: Promise<RunResult>) => void) | undefined;
  #journaled: JournaledExecution | undefined;
  /** Watches for fills the runner did not expect (v20 only; built at start). */
  #unknownFills: UnknownFills | undefined;
  #unknownCloses = 0;
  /** What the stop or the kill switch is doing now (the status page; undefined while running). */
  stopState: string | undefined;
  /** The latest account read by the flatten: what is open (the third Ctrl-C names it). */
  #lastOpen: readonly string[] | undefined;
  #syncScheduled = false;
  /** The run's first and last live price or transaction time (epoch ms): the summary's period (never the warm-up candles). */
  #from = Number.NaN;
  #to = Number.NaN;
  readonly #syncJournal = (): void => {
    this.#syncScheduled = false;
    this.journal.sync();
  };
  /** New prices handled. */
  get ticks(): number {
    return this.#inputs.ticks;
  }
  /** `performance.now()` when the latest price reached the runner (benchmarks measure from it). */
  get tickReceivedAt(): number {
    return this.#inputs.tickReceivedAt;
  }
  /** The labs poller, when the strategy subscribes to labs (`labs` in the status line). */
  get labsPoller(): LabsPoller | undefined {
    return this.#inputs.labsPoller;
  }

  constructor(o: RunnerOptions) {
    this.o = o;
    this.#log = o.log.child({ component: 'runner', account: o.accountID });
    // Event time drives the engine (prices carry the server's time; identical to wall time live).
    this.#clock = o.clock ?? new VirtualClock(0);
    this.runId = o.runId ?? newRunId();
    const opened = openRunJournal(o, this.#log);
    this.journal = opened.journal;
    this.#contents = opened.contents;
    this.#portfolio = new Portfolio({
      currency: 'USD',
      instruments: o.instruments,
      initialBalance: '0',
      strict: false,
    });
    this.#inputs = new MarketInputs(o, {
      clock: this.#clock,
      log: this.#log,
      pricingStats: this.pricingStats,
      portfolio: () => this.#portfolio,
      priced: (at) => {
        this.#period(at);
        const risk = this.#risk!;
        if (risk.observe(at)) {
          const day = risk.day;
          if (day !== undefined) this.journal.day(day); // once a trading day
        }
      },
      simulate: (tick) => {
        if (this.#sim && !this.#simStarted) {
          this.#simStarted = true;
          this.#sim.start(tick.at);
        }
        this.#sim?.onEvent(tick);
        this.#simExecution?.priced(tick.instrument);
        this.#shadow?.onEvent(tick);
        this.#drift?.priced(tick.at);
      },
      stopping: () => this.#stopping !== undefined,
      failed: (reason) => void this.stop(reason),
    });
    this.#orders = new OrderLifecycle({
      rest: o.rest,
      accountID: o.accountID,
      journal: this.journal,
      log: this.#log,
      ...(o.broker !== undefined ? { broker: o.broker } : {}),
      ...(o.lookupBaseMs !== undefined ? { lookupBaseMs: o.lookupBaseMs } : {}),
      ...(o.maxIntentAgeMs !== undefined ? { maxIntentAgeMs: o.maxIntentAgeMs } : {}),
      windowMs: (o.requestWindowMs ?? 60_000) + (o.inDoubtMarginMs ?? 10_000),
      risk: () => this.#risk,
      stopping: () => this.#stopping !== undefined,
    });
    this.live =
      o.members === undefined
        ? undefined
        : new LivePortfolio(o, o.members, {
            runId: this.runId,
            log: this.#log,
            say: (line) => this.#say(line, 'error'),
            halted: () => this.#halted,
            stop: (why) => void this.stop(why),
          });
    this.#ctrlC = sessionCtrlC(o, {
      log: this.#log,
      say: (line) => this.#say(line),
      killed: () => this.#killed,
      waitingFor: () => this.#waitingFor(),
      stopState: () => this.stopState,
      open: () => this.openAsLastSeen(),
      stop: (why) => void this.stop(why),
    });
  }

  /** Orders in doubt now: in flight without an answer (the adapter's), or journaled ones a restart waits for. */
  get inDoubt(): InDoubtNow[] {
    return inDoubtNow(this.#v20, this.#orders);
  }

  /** Submissions whose outcome is not known yet (being looked up again). */
  get unknownCount(): number {
    return this.#orders.unknown.size;
  }

  /** Live candles delivered so far: official, built from ticks, waiting. */
  get candles(): Readonly<CandleCounts> {
    return this.#inputs.feed.counts;
  }

  /** The account view (reconciled at start, then the fold of every transaction). */
  get portfolio(): Portfolio {
    return this.#portfolio;
  }

  /** The strategy's current state (tests check restoration). */
  get state(): unknown {
    return this.#engine?.state;
  }
  get risk(): RiskExecution | undefined {
    return this.#risk;
  }
  get execution(): V20Execution | undefined {
    return this.#v20;
  }
  /** What the one assembly built for this run (its mode, engine, gate, broker); undefined before `start`. */
  get assembly(): Assembly | undefined {
    return this.#assembly;
  }
  /** The simulated account (`--broker sim`). */
  get sim(): SimBroker | undefined {
    return this.#sim;
  }
  /** The shadow simulator (`--shadow`). */
  get shadowBook(): ShadowBook | undefined {
    return this.#shadow;
  }
  /** Resolves when the run has ended (stop, kill switch or a fatal stream error). */
  get done(): Promise<void> {
    return this.#done ?? Promise.resolve();
  }

  /** Reconciles, recovers, warms up and subscribes. Resolves once live events flow. */
  async start(): Promise<void> {
    const o = this.o;
    const log = this.#log;
    const { account, lastTransactionID } = await o.rest.account(o.accountID);
    const contents = this.#contents;
    const broker = o.broker ?? 'v20';
    const journalBaseline = await checkRunJournal(o, this.journal, contents, lastTransactionID);
    checkPortfolioStart(o, account, journalBaseline, broker);
    // A halted journal (the kill switch engaged, in this process before now or in an earlier one):
    // nothing of the strategy is sent; the start goes on only to finish the flatten, then stops.
    if (contents.halt !== undefined && this.#haltedBy === undefined) {
      this.#haltedBy = contents.halt;
      this.#halt();
      this.#say(
        `journal ${o.journalDir} is HALTED since ${new Date(contents.halt.at).toISOString()} (${contents.halt.why}): the kill switch engaged and nobody cleared it. Trading nothing: finishing the flatten (closing what the account holds), then stopping. ${clearHaltAdvice(o.journalDir)}`,
        'error',
      );
    }
    const { baseline, deposit, portfolio, replay, handled, snap, fromID } = restoreAtStart(
      o,
      this.journal,
      contents,
      journalBaseline,
      { account, lastTransactionID },
      log,
    );
    this.#portfolio = portfolio;
    this.#handled = handled;
    this.#inputs.restorePrices(snap?.prices);
    this.#orders.recovered.replayed = replay.length;
    this.#orders.recovered.restoredState = snap !== undefined;

    // The one assembly: the strategy, the broker this run chose, the order path, the gate, the engine.
    const { assembly, journaled } = await assembleRun(o, {
      journal: this.journal,
      contents,
      baseline,
      deposit,
      snap,
      fromID,
      portfolio,
      replay,
      unknown: this.#orders.unknown,
      clientIdPrefix: this.#clientIdPrefix,
      ...(this.live !== undefined ? { live: this.live } : {}),
      runId: this.runId,
      limits: this.limits,
      clock: this.#clock,
      log,
      transactionStats: this.transactionStats,
      warming: () => this.#inputs.warming,
      halted: () => this.#halted,
      transaction: (tx) => this.#transaction(tx),
      intent: (intent) => this.#onIntent(intent),
      record: (intent) => this.#record(intent),
      sent: (intent) => this.#sent(intent),
      drop: (intent) => this.#drop(intent),
      submitted: () => {
        const tickStart = this.#inputs.tickStart;
        if (!Number.isNaN(tickStart)) this.latency.add(performance.now() - tickStart);
      },
      simExecution: (x) => {
        this.#simExecution = x;
      },
    });
    this.#assembly = assembly;
    this.#sim = assembly.sim;
    const v20 = assembly.v20;
    if (v20 !== undefined) {
      v20.failures$.subscribe((f) => {
        if (f.outcome === 'unknown') this.#orders.inDoubt(f.intent);
        else if (f.outcome === 'not-sent') this.#drop(f.intent, f.error.message);
      });
      this.#v20 = v20;
      this.#unknownFills = new UnknownFills(
        { journaled: (cid) => this.journal.has(cid), gaveUp: (cid) => this.#orders.gaveUp.has(cid) },
        contents.transactions,
      );
    }
    this.#journaled = journaled;
    const risk = assembly.risk!;
    this.#risk = risk;
    this.#rebase = runRebase(
      o,
      this.journal,
      { baseline, deposit, sim: this.#sim },
      {
        log,
        handled: () => this.#handled,
        stopping: () => this.#stopping !== undefined,
        snapshot: () => this.#snapshotOf(),
      },
    );
    // Halted before the order path existed (a halted journal, or the kill switch during the start).
    if (this.#halted) this.#applyHalt();
    // The daily-loss limit counts from the journaled opening NAV of today's trading day, if any:
    // a restart within the day does not reset it.
    if (contents.riskDay !== undefined) risk.restoreDay(contents.riskDay);
    // The shadow simulator starts from the account as it is now: its open trades and pending orders.
    if (o.shadow) {
      const shadow = startShadow(
        o,
        baseline,
        { ...account, lastTransactionID } as Account,
        (b) => onDrift(this.o, b, this.#surprises),
        log,
      );
      this.#shadow = shadow.shadow;
      this.#drift = shadow.drift;
    }

    const engine = this.live === undefined ? assembly.engine : undefined;
    this.#engine = engine;
    if (engine !== undefined && snap !== undefined) engine.sequence = snap.sequence;
    // The session's start in the run folder: the account the replay's simulator starts from.
    if (o.recorder !== undefined)
      await recordSessionStart(o, o.recorder, {
        runId: this.runId,
        clientIdPrefix: this.#clientIdPrefix,
        sequence: engine?.sequence ?? 0,
        restoredState: snap !== undefined,
        sim: this.#sim,
        seeded: contents.transactions.length > 0 || Number(baseline.lastTransactionID) > 0,
        baseline,
        deposit,
        account: { ...account, lastTransactionID } as Account,
        fromID,
      });
    this.#done = assembly.drive(this.#inputs.events).catch((e: unknown) => {
      // A strategy that throws stops the run (nothing is submitted on its behalf any more).
      log.error({ err: e }, 'engine stopped on an error; stopping the run');
      queueMicrotask(() => void this.stop(`error: ${(e as Error).message}`));
    });

    await this.#orders.settle(contents, risk);

    // Warm-up from the candles endpoint: the same alignment as backtests; handlers are not called.
    const subs = subscriptionsOf(o.strategy, o.params, o.name);
    // Halted: the strategy hears nothing more, so no warm-up.
    const warmed = this.#halted
      ? 0
      : await this.#inputs.warmUp(subs, Math.min(o.warmup ?? o.strategy.history ?? 500, 5000));
    log.info({ candles: warmed }, 'indicators warmed');

    // Live prices (and those of the instruments of open trades: they mark the portfolio).
    const instruments = this.#inputs.subscribe(
      subs,
      [...portfolio.ledger.trades.values()].map((t) => t.instrument),
    );
    if ((o.statusEveryMs ?? 60_000) > 0) {
      this.#statusTimer = setInterval(() => this.#status(), o.statusEveryMs ?? 60_000);
      this.#statusTimer.unref();
    }
    await this.#inputs.startLabs(subs);
    this.#letGo = listenToOperator(o, {
      kill: (why) => void this.kill(why),
      stop: (why) => void this.stop(why),
      ctrlC: this.#ctrlC,
    });
    log.info(
      { instruments, broker, shadow: o.shadow === true, limits: describeLimits(this.limits) },
      'running',
    );
    this.#started = true;
    // The kill switch engaged during the start, or the journal is halted: the flatten, then the stop.
    if (this.#haltedBy !== undefined) {
      const killed = this.kill(this.#haltedBy.why);
      this.#startKilled?.(killed);
    }
  }

  /** The risk gate's limits: as given, else the defaults every `fxflow run` has. */
  get limits(): RiskLimits {
    return this.o.limits ?? DEFAULT_RISK_LIMITS;
  }

  /** The journal's halt in force (the kill switch engaged and was not cleared), if any. */
  get halted(): Halt | undefined {
    return this.#haltedBy;
  }

  /**
   * Engages the kill switch's halt at once, in any phase (the CLI calls it for a signal or kill
   * file during the start): journaled first, then nothing of the strategy is sent. Before `start`
   * has finished, the start goes on only to settle and read the account, and the flatten follows
   * it (`kill`); after, it is `kill`.
   */
  halt(why: string): void {
    if (this.#started) {
      void this.kill(why);
      return;
    }
    if (this.#haltedBy !== undefined) return;
    this.#journalHalt(why);
    this.#halt();
    this.#say(
      `KILL SWITCH ENGAGED (${why}) during the start: nothing of the strategy will be sent; the start goes on only to settle what the journal holds and read the account, then every position the account holds is closed and the run stops. ${clearHaltAdvice(this.o.journalDir)} once the reason is dealt with`,
    );
  }

  /** The halt into the journal, durable before anything else happens (once; the first reason is kept). */
  #journalHalt(why: string): void {
    this.#haltedBy ??= { at: Date.now(), why };
    try {
      this.journal.halt(this.#haltedBy);
    } catch (e) {
      this.#log.error({ err: e }, 'kill switch: the halt could not be written to the journal');
    }
  }

  /** The strategy snapshot the journal keeps (`stateSnapshot`); undefined before the engine exists. */
  #snapshotOf(): StateSnapshot | undefined {
    return stateSnapshot({
      engine: this.#engine,
      portfolio: this.live?.host !== undefined ? this.live.state : undefined,
      handled: this.#handled,
      prices: this.#inputs.pricesSeen(),
      sim: this.#sim,
    });
  }

  /**
   * An intent the strategy returned, before the risk gate: counted and recorded in the run folder.
   * The journal and the shadow simulator get it only past the gate (`#record`).
   */
  #onIntent(intent: OrderIntent): void {
    this.#intents++;
    this.o.onIntent?.(intent, this.#clock.now());
    this.o.recorder?.intent(intent, this.#clock.now(), Date.now());
  }

  /**
   * The journal's record of an intent the risk gate let through (the order path's journal layer,
   * `JournaledExecution.submit`), before anything of it is sent: the strategy's with the state that
   * produced it, durable as `intentDurability` says; the runner's own closes and cancels synced at
   * once. An intent the journal holds without an outcome (a resend at a restart) is not written again.
   */
  #record(intent: OrderIntent): void {
    if (this.journal.pendingIntent(intent.id)?.confirmed === false) return;
    const snapshot = isRunnerIntent(intent) ? undefined : this.#snapshotOf();
    if (snapshot === undefined) {
      this.journal.intent(intent, this.#clock.now());
      return;
    }
    const defer = this.o.intentDurability !== 'before-submit';
    this.journal.intent(intent, this.#clock.now(), snapshot, defer);
    if (defer) this.#syncSoon();
    // The shadow simulator hears what the gate let through, as the account does: never a refusal.
    if (this.#shadow?.submit(intent) === true) this.#drift?.expect(intent.id);
  }

  /**
   * The journal's "sent" mark, written at the send point just before a request's bytes leave (with
   * the intent's own durability: deferred, it is synced with it a moment later).
   */
  #sent(intent: OrderIntent): void {
    const defer = this.o.intentDurability !== 'before-submit';
    this.journal.sent(intent.id, defer);
    if (defer) this.#syncSoon();
  }

  /** The journal's deferred writes synced once the request is on the wire (the HTTP client writes it within a few event-loop turns). */
  #syncSoon(): void {
    if (this.#syncScheduled) return;
    this.#syncScheduled = true;
    setTimeout(this.#syncJournal, 1);
  }

  /** Every transaction the strategy's engine handled (after the strategy, unless halted, heard it). */
  #transaction(tx: Transaction | undefined): void {
    const id = tx?.id;
    if (tx !== undefined) this.#period(parseTime(tx.time));
    if (id !== undefined && !id.includes('.')) this.#handled = id;
    // The risk layer's refusals reach the engine without passing the journal: recorded here.
    else if (id !== undefined && tx !== undefined) this.o.recorder?.transaction(tx, Date.now());
    if (tx !== undefined) {
      this.#drift?.live(tx);
      const unknown = this.#unknownFills?.observe(tx);
      if (unknown !== undefined) onUnknownFill(this.o, unknown, this.#surprises);
      this.o.onTransaction?.(tx);
    }
    this.#rebase?.check();
  }

  /** One status line: equity, positions, latency, stream health (the runner is its source). */
  #status(): void {
    logStatus(this.#log, this);
  }

  /** The last transaction the journal holds (the status line). */
  get lastTransactionID(): string {
    return this.journal.lastTransactionID;
  }

  #dropped = 0;

  /** Widens the summary's period to `at` (epoch ms). */
  #period(at: number): void {
    if (!Number.isFinite(at)) return;
    if (!(at >= this.#from)) this.#from = at;
    if (!(at <= this.#to)) this.#to = at;
  }

  /**
   * One-way, and first: the strategy hears nothing more (its handlers are not called), every intent
   * of it still waiting to be sent is dropped when its turn comes, and the risk gate refuses every
   * opening part. The runner's own closes and cancels still go.
   */
  #halt(): void {
    if (this.#halted) return;
    this.#halted = true;
    this.#applyHalt();
  }

  /** The halt on the parts of the order path that exist now (called again when `start` builds them). */
  #applyHalt(): void {
    this.#risk?.halt();
    const journaled = this.#journaled;
    if (journaled !== undefined) journaled.dropping = (intent) => !isRunnerIntent(intent);
    // --broker sim: the strategy's market orders and closes queued in the simulator for their next price never fill.
    for (const intent of this.#simExecution?.drop((i) => !isRunnerIntent(i)) ?? []) this.#drop(intent);
  }

  /**
   * An intent of the strategy dropped by the kill switch before it reached the broker (waiting to be
   * sent, or, `why`, refused at the send point: a resend of a request that provably never arrived):
   * settled, and refused to the strategy's view.
   */
  #drop(intent: OrderIntent, why?: string): void {
    this.journal.confirm(intent.id);
    this.#orders.gaveUp.add(intent.id);
    this.#dropped++;
    this.#log.warn(
      { intentId: intent.id, kind: intent.kind, ...(why !== undefined ? { why } : {}) },
      why === undefined
        ? 'kill switch: an intent of the strategy waiting to be sent was dropped'
        : 'kill switch: an intent of the strategy was not sent (the run is halted)',
    );
    this.#risk?.refuse(
      intent,
      'RISK_KILL_SWITCH_ENGAGED',
      'dropped before it was sent: the kill switch engaged',
    );
  }

  /** Fills the runner did not expect, so far (the status page). */
  get unknownFills(): readonly UnknownFill[] {
    return this.#unknownFills?.found ?? [];
  }

  /** A portfolio's books now (the status page); undefined for one strategy. */
  get books(): ReturnType<LivePortfolio['views']> | undefined {
    return this.live?.views();
  }

  /** The drift guard's state now (the status page); undefined without `--max-drift`. */
  get drift(): DriftStatus | undefined {
    return driftStatus(this.#drift);
  }

  /** What the run does about an unknown fill or a drift: its log, the halt, the kill switch, a close. */
  get #surprises(): SurpriseParts {
    const risk = this.#risk;
    return {
      log: this.#log,
      halted: () => this.#halted,
      kill: (why) => void this.kill(why),
      close: risk === undefined ? undefined : (intent) => risk.submit(intent),
      runId: this.runId,
      nextClose: () => ++this.#unknownCloses,
    };
  }

  /** A line for the operator's terminal (`say`), logged too. */
  #say(line: string, level: 'info' | 'warn' | 'error' = 'warn'): void {
    this.#log[level]({}, line);
    this.o.say?.(line);
  }

  /** What a stop waits for now: requests in flight and intents waiting to be sent. */
  #waitingFor(): string {
    return waitingFor({
      waiting: this.#journaled?.waiting ?? 0,
      inFlight: this.#journaled?.inFlight ?? 0,
      doubt: this.#orders.unknown.size,
      halted: this.#halted,
    });
  }

  /** What is open as last seen: the flatten's latest account read, else the runner's own view. */
  openAsLastSeen(): readonly string[] {
    return this.#lastOpen ?? openOfLedger(this.portfolio.ledger);
  }

  /** SIGINT as operators expect, in three steps (operator-signals.ts). */
  readonly #ctrlC: CtrlC;

  /** The kill switch: halts the strategy first, then cancels pending entries, optionally flattens, and stops. */
  kill(why: string): Promise<RunResult> {
    if (!this.#started) {
      this.halt(why);
      // The flatten follows the start (its end calls `kill` again).
      this.#afterStart ??= new Promise<RunResult>((resolve) => {
        this.#startKilled = resolve;
      });
      return this.#afterStart;
    }
    this.#killing ??= this.#kill2(why);
    return this.#killing;
  }

  async #kill2(why: string): Promise<RunResult> {
    // First the journal: a restart after a crash from here on trades nothing.
    this.#journalHalt(why);
    const dropped = this.#dropped;
    this.#halt();
    const waiting = (this.#journaled?.waiting ?? 0) + this.#dropped - dropped;
    this.#killed = true;
    this.#inputs.feed.close(); // no candle waits for the endpoint once the kill switch is engaged
    const flatten = this.o.flattenOnKill ?? true;
    this.#say(
      `KILL SWITCH ENGAGED (${why}): the strategy is stopped and gets nothing more; ${waiting} intent(s) of it waiting to be sent are dropped; waiting for ${(this.#journaled?.inFlight ?? 0) > 0 ? 'the answer to the order request in flight' : 'no request in flight'}, then ${flatten ? 'cancelling pending orders and closing every position the account holds' : 'cancelling pending orders'}`,
    );
    const risk = this.#risk;
    // --broker sim: the simulated account is in this process, its view is the truth.
    if (risk && this.#sim !== undefined) {
      for (const i of killSwitchIntents(this.portfolio, flatten, `${RUNNER_ID_PREFIX}kill-${this.runId}`))
        risk.submit(i);
    }
    return this.stop(`kill switch (${why})`, this.#v20 !== undefined && flatten);
  }

  /** Stops: optional flatten, drain submissions, snapshot, engine stop, summary. Idempotent. */
  stop(reason = 'stopped', flatten = this.o.flattenOnExit === true): Promise<RunResult> {
    this.#stopping ??= this.#stop(reason, flatten);
    return this.#stopping;
  }

  async #stop(reason: string, flatten: boolean): Promise<RunResult> {
    const log = this.#log;
    log.info({ reason, flatten }, 'stopping');
    this.#orders.stopLookups();
    // The kill switch halted already; a flattening stop halts the strategy first as well.
    if (flatten) this.#halt();
    if (flatten && this.#risk && this.#sim !== undefined) {
      for (const i of killSwitchIntents(this.portfolio, true, `${RUNNER_ID_PREFIX}exit-${this.runId}`))
        this.#risk.submit(i);
    }
    // v20: the kill switch and --flatten-on-exit act on the account as OANDA reports it.
    let flattened = false;
    const closeAll = async (): Promise<void> => {
      if (flattened || this.#risk === undefined || this.#v20 === undefined) return;
      flattened = true;
      this.#accountCheck = await flattenAccount(
        this.o,
        {
          risk: this.#risk,
          drain: () => this.#journaled!.drain(),
          log,
          runId: this.runId,
          who: this.#killed ? 'kill switch' : 'stop',
          say: (line, level) => this.#say(line, level),
          view: () => this.openAsLastSeen(),
          onState: (state) => {
            this.stopState = state;
          },
          onRead: (open) => {
            this.#lastOpen = open;
          },
        },
        flatten || (this.o.flattenOnKill ?? true),
      );
    };
    if (flatten || this.#killed) await closeAll();
    // Candles that completed before the stop reach the strategy (each waits at most --candle-wait).
    await this.#inputs.feed.drain();
    await this.#journaled?.drain();
    // The kill switch engaged while a plain stop was draining: it closes what the account holds too.
    if (this.#killed) await closeAll();
    // (The simulator closes at the next price: the pricing stream is still on.)
    if (flatten && this.#sim) await waitFor(() => this.portfolio.ledger.trades.size === 0, 5000);
    // The kill switch with --broker sim: its closes (and any market order before them) wait in the
    // simulator for the next price; the run waits for their outcome as well (at most 5 s), so they
    // are not left unconfirmed and sent again at the next start.
    const simExecution = this.#simExecution;
    if (this.#killed && simExecution !== undefined) await waitFor(() => simExecution.waiting === 0, 5000);
    this.#letGo?.();
    if (this.#statusTimer) clearInterval(this.#statusTimer);
    this.#inputs.close();
    const snapshot = this.#snapshotOf();
    if (snapshot !== undefined) this.journal.snapshot(snapshot);
    this.#status();
    this.#inputs.events.complete();
    await this.#done;
    // The journal closes last: after every answer of a request sent (and every lookup) is in it.
    await this.#journaled?.drain();
    await this.#orders.stop();
    await this.o.recorder?.stop(reason);
    this.journal.compact();
    this.journal.close();
    // The period is the run's first to last event or transaction (a trade opened before the first
    // price, or in an earlier session, counts from its opening); exposure from the trades' open intervals.
    for (const t of this.portfolio.closedTrades) this.#period(t.openTime);
    for (const t of this.portfolio.openTrades()) this.#period(t.openMs);
    const shadow = this.#shadow?.report(this.journal.contents().transactions);
    return runResult({
      o: this.o,
      reason,
      portfolio: this.portfolio,
      period: Number.isNaN(this.#from) ? undefined : { from: this.#from, to: this.#to },
      risk: this.#risk,
      limits: this.limits,
      sim: this.#sim,
      shadowSim: this.#shadow?.sim,
      shadow,
      unknownFills: this.unknownFills,
      drift: this.drift,
      intents: this.#intents,
      transactions: this.#assembly?.driven.stats.transactions ?? 0,
      ...(this.live !== undefined ? { books: this.live } : {}),
      recovered: this.#orders.recovered,
      account: this.#accountCheck,
      latency: this.latency.snapshot(),
      candles: this.#inputs.feed.counts,
    });
  }
}
