import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { backoffDelay, sleep } from '../../adapters/v20/rate-limit.ts';
import type { V20Rest } from '../../adapters/v20/rest.ts';
import { type OrderIntent, RUNNER_ID_PREFIX } from '../../domain/intents.ts';
import type { Account } from '../../domain/v20/index.ts';
import type { Ledger } from '../../domain/ledger.ts';
import type { Portfolio } from '../../engine/portfolio.ts';
import { ENTRY_TYPES, type RiskExecution } from '../../engine/risk.ts';
import { CtrlC } from '../session/session.ts';

/**
 * The kill switch: what engages it (`KillSwitch`: SIGUSR2 or a kill file), what it sends (cancels
 * of pending entries, closes of positions: `accountCloseIntents` from the account as OANDA reports
 * it, `killSwitchIntents` from the runner's view for --broker sim) and the flatten that confirms
 * the account is flat (`closeFromAccount`). The runner engages it (`Runner.kill`).
 */

/** What the account held when the kill switch or flatten checked it. */
export interface AccountCheck {
  readonly ok: boolean;
  /** The account's last transaction when it was last read ('' when it could never be read). */
  readonly lastTransactionID: string;
  readonly openTrades: number;
  /** Instruments with a non-zero long or short position. */
  readonly positions: readonly string[];
  /** Pending entry orders (limit, stop, MIT, market); dependent TP/SL orders are not counted. */
  readonly pendingEntries: number;
  /**
   * Each open position and pending entry order, named ("EUR_USD long 1000", "order 17 LIMIT
   * EUR_USD 1000"), as the account last reported them (or, when it could never be read, as the
   * runner saw them, said so).
   */
  readonly open: readonly string[];
  /** Rounds of closes sent. */
  readonly rounds: number;
  /** Seconds the flatten tried. */
  readonly seconds: number;
  /** Why it could not be confirmed (the account could not be read, or the time ran out). */
  readonly error?: string;
}

/** What the flatten reads and sends through. */
export interface CloseFromAccountOptions {
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly risk: RiskExecution;
  /** Resolves when every request sent so far (the runner's send queue included) has its answer. */
  readonly drain: () => Promise<void>;
  readonly log: Logger;
  readonly runId: string;
  /** How long it keeps trying before it gives up NOT FLAT (ms; `--flatten-timeout`, default 5 minutes). */
  readonly timeoutMs?: number;
  /** First pause between attempts (ms, default 500; doubling up to `retryCapMs`, default 10 s). */
  readonly retryBaseMs?: number;
  readonly retryCapMs?: number;
  /** Where the progress line goes every `progressEveryMs` (default 5 s) while it is not flat (the CLI: stderr). */
  readonly progress?: (line: string) => void;
  readonly progressEveryMs?: number;
  /** What is open as the runner sees it, for the progress line before the account could be read. */
  readonly view?: () => readonly string[];
  /** Called with the state line whenever it changes (the status page). */
  readonly onState?: (state: string) => void;
  /** Called with what is open after every account read. */
  readonly onRead?: (open: readonly string[]) => void;
}

/** How an operator clears a journal's halt (the kill switch's, `Journal.halt`): said wherever a halt is reported. */
export function clearHaltAdvice(journalDir: string): string {
  return `To trade on this journal again, clear the halt with: fxflow journal clear-halt ${journalDir}`;
}

/** Default `--flatten-timeout`: minutes, so that a short outage of OANDA does not end it NOT FLAT. */
export const FLATTEN_TIMEOUT_MS = 300_000;

/** Each open position and pending entry order of an account, named. */
export function openOf(account: Account): string[] {
  const out: string[] = [];
  for (const p of account.positions ?? []) {
    const long = Number(p.long?.units ?? 0);
    const short = Number(p.short?.units ?? 0);
    if (long !== 0) out.push(`${p.instrument} long ${long}`);
    if (short !== 0) out.push(`${p.instrument} short ${-short}`);
  }
  for (const o of account.orders ?? []) {
    if (!ENTRY_TYPES.has(o.type) || (o.state !== undefined && o.state !== 'PENDING')) continue;
    const x = o as { instrument?: string; units?: string; price?: string };
    out.push(
      `order ${o.id} ${o.type} ${x.instrument ?? ''} ${x.units ?? ''}${x.price !== undefined ? ` @ ${x.price}` : ''}`
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  return out;
}

/** Each open position and pending entry order as the runner's own ledger holds them, named as `openOf` names them. */
export function openOfLedger(ledger: Ledger): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const t of ledger.trades.values()) {
    if (seen.has(t.instrument)) continue;
    seen.add(t.instrument);
    const p = ledger.position(t.instrument);
    if (p.long !== 0) out.push(`${t.instrument} long ${p.long}`);
    if (p.short !== 0) out.push(`${t.instrument} short ${-p.short}`);
  }
  for (const o of ledger.pendingOrders.values()) {
    if (!ENTRY_TYPES.has(o.type)) continue;
    const c = o.created as { units?: string; price?: string };
    out.push(
      `order ${o.id} ${o.type} ${o.instrument ?? ''} ${c.units ?? ''}${c.price !== undefined ? ` @ ${c.price}` : ''}`
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  return out;
}

/**
 * v20: closes what the account holds, as OANDA reports it after every request in flight has been
 * answered (never the runner's own view, which may lack a fill the stream has not brought yet):
 * cancels its pending entry orders and, with `flatten`, closes its positions; then reads the
 * account again to confirm. It keeps trying, with pauses doubling from `retryBaseMs` to
 * `retryCapMs`, through failed reads (5xx, 429, network) and failed closes, until the account
 * confirms it is flat or `timeoutMs` has passed; meanwhile every `progressEveryMs` it says what is
 * still open and what it is waiting for. Closes and cancels go through the risk layer (always
 * allowed) and the journal, and every request through the HTTP client's request budget.
 */
export async function closeFromAccount(o: CloseFromAccountOptions, flatten: boolean): Promise<AccountCheck> {
  const t0 = Date.now();
  const timeoutMs = o.timeoutMs ?? FLATTEN_TIMEOUT_MS;
  let rounds = 0;
  let n = 0;
  let last: { account: Account; lastTransactionID: string } | undefined;
  let error: string | undefined;
  let waiting = 'the answers to the requests in flight';
  const seconds = (): number => Math.round((Date.now() - t0) / 100) / 10;
  const openNow = (): readonly string[] => (last !== undefined ? openOf(last.account) : (o.view?.() ?? []));
  const state = (): string => {
    const open = openNow();
    const what =
      last !== undefined
        ? open.length > 0
          ? `open at the account: ${open.join(', ')}`
          : 'nothing open at the last read'
        : `the account not read yet${open.length > 0 ? `; the runner's view: ${open.join(', ')}` : ''}`;
    return `${flatten ? 'flattening' : 'cancelling pending orders'} for ${seconds()} s: ${what}; waiting for ${waiting}${error !== undefined ? ` (last error: ${error})` : ''}; gives up NOT FLAT after ${Math.round(timeoutMs / 1000)} s (--flatten-timeout)`;
  };
  const set = (w: string): void => {
    waiting = w;
    o.onState?.(state());
  };
  const timer =
    o.progress === undefined ? undefined : setInterval(() => o.progress!(state()), o.progressEveryMs ?? 5000);
  timer?.unref();
  const result = (ok: boolean, why?: string): AccountCheck => {
    const c = last === undefined ? undefined : accountCloseIntents(last.account, flatten, '', 0);
    const open = openNow();
    return {
      ok,
      lastTransactionID: last?.lastTransactionID ?? '',
      openTrades: last === undefined ? -1 : (last.account.trades ?? []).length,
      positions: c?.positions ?? [],
      pendingEntries: c?.pendingEntries ?? -1,
      open:
        last === undefined
          ? open.map((x) => `${x} (the runner's view; the account could not be read)`)
          : open,
      rounds,
      seconds: seconds(),
      ...(why !== undefined ? { error: why } : {}),
    };
  };
  try {
    for (let attempt = 0; ; attempt++) {
      set('the answers to the requests in flight');
      await o.drain();
      set('the account (GET /accounts/{id})');
      let read: { account: Account; lastTransactionID: string } | undefined;
      try {
        read = await o.rest.account(o.accountID);
        last = read;
        error = undefined;
        o.onRead?.(openOf(read.account));
      } catch (e) {
        error = `the account could not be read: ${(e as Error).message}`;
        o.log.warn({ attempt, err: e }, 'kill switch / flatten: the account could not be read; trying again');
      }
      if (read !== undefined) {
        const { intents, positions, pendingEntries } = accountCloseIntents(
          read.account,
          flatten,
          `${RUNNER_ID_PREFIX}${flatten ? 'flat' : 'kill'}-${o.runId}`,
          n,
        );
        if (intents.length === 0) return result(true);
        if (Date.now() - t0 >= timeoutMs) break;
        n += intents.length;
        rounds++;
        o.log.warn(
          { round: rounds, positions, pendingEntries, lastTransactionID: read.lastTransactionID },
          'closing what the account holds',
        );
        set(`the answers to ${intents.length} close(s) and cancel(s) (round ${rounds})`);
        // Journaled past the risk gate (the order path's journal layer), as every intent is.
        for (const i of intents) o.risk.submit(i);
        await o.drain();
      }
      const left = timeoutMs - (Date.now() - t0);
      if (left <= 0) break;
      const pause = Math.min(
        left,
        read !== undefined && rounds <= 1
          ? 0
          : backoffDelay(attempt, o.retryBaseMs ?? 500, o.retryCapMs ?? 10_000),
      );
      set(
        read === undefined
          ? `a new attempt to read the account in ${(pause / 1000).toFixed(1)} s`
          : `the account to confirm the closes (read again in ${(pause / 1000).toFixed(1)} s)`,
      );
      if (pause > 0) await sleep(pause);
    }
    return result(
      false,
      error ??
        `still open after ${seconds()} s (--flatten-timeout ${Math.round(timeoutMs / 1000)} s) and ${rounds} round(s) of closes`,
    );
  } finally {
    if (timer !== undefined) clearInterval(timer);
  }
}

/**
 * What the kill switch and --flatten-on-exit submit on a v20 account, from the account as OANDA
 * reports it (GET /accounts/{id}): a cancel for every pending entry order and, with `flatten`, a
 * close of each instrument's long and short position. Also says what the account holds.
 */
export function accountCloseIntents(
  account: Account,
  flatten: boolean,
  idPrefix: string,
  first = 0,
): { intents: OrderIntent[]; openTrades: number; positions: string[]; pendingEntries: number } {
  const intents: OrderIntent[] = [];
  let n = first;
  let pendingEntries = 0;
  for (const o of account.orders ?? []) {
    if (!ENTRY_TYPES.has(o.type) || (o.state !== undefined && o.state !== 'PENDING')) continue;
    pendingEntries++;
    intents.push({ kind: 'cancel', id: `${idPrefix}-${++n}`, orderSpecifier: o.id });
  }
  const positions: string[] = [];
  for (const p of account.positions ?? []) {
    const long = Number(p.long?.units ?? 0) !== 0;
    const short = Number(p.short?.units ?? 0) !== 0;
    if (!long && !short) continue;
    positions.push(p.instrument);
    if (flatten)
      intents.push({
        kind: 'closePosition',
        id: `${idPrefix}-${++n}`,
        instrument: p.instrument,
        ...(long ? { longUnits: 'ALL' } : {}),
        ...(short ? { shortUnits: 'ALL' } : {}),
      });
  }
  return { intents, openTrades: (account.trades ?? []).length, positions, pendingEntries };
}

/**
 * What the kill switch submits: a cancel for every pending entry order (dependent TP/SL orders stay,
 * they protect open trades) and, with `flatten`, a close of every open position.
 */
export function killSwitchIntents(portfolio: Portfolio, flatten: boolean, idPrefix: string): OrderIntent[] {
  const out: OrderIntent[] = [];
  let n = 0;
  const ledger = portfolio.ledger;
  for (const o of ledger.pendingOrders.values()) {
    if (!ENTRY_TYPES.has(o.type)) continue;
    out.push({ kind: 'cancel', id: `${idPrefix}-${++n}`, orderSpecifier: o.id });
  }
  if (flatten) {
    const instruments = new Set<string>();
    for (const t of ledger.trades.values()) instruments.add(t.instrument);
    for (const instrument of instruments) {
      const p = ledger.position(instrument);
      out.push({
        kind: 'closePosition',
        id: `${idPrefix}-${++n}`,
        instrument,
        ...(p.long > 0 ? { longUnits: 'ALL' } : {}),
        ...(p.short < 0 ? { shortUnits: 'ALL' } : {}),
      });
    }
  }
  return out;
}

/**
 * Fires `onKill` once when the process gets SIGUSR2 or when `file` appears (checked every
 * `pollMs`, default 1 s). Use it for an operator's emergency stop: `kill -USR2 <pid>` or
 * `touch <file>`. Call `close` to stop watching.
 */
export class KillSwitch {
  readonly #onKill: (why: string) => void;
  readonly #file: string | undefined;
  #fired = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly #onSignal = (): void => this.#fire('SIGUSR2');
  readonly #onFile = (): void => {
    if (this.#file !== undefined && existsSync(this.#file)) this.#fire(`file ${this.#file}`);
  };

  constructor(opts: { onKill: (why: string) => void; file?: string; signal?: boolean; pollMs?: number }) {
    this.#onKill = opts.onKill;
    this.#file = opts.file;
    if (opts.signal !== false) process.on('SIGUSR2', this.#onSignal);
    if (opts.file !== undefined) {
      if (existsSync(opts.file)) queueMicrotask(() => this.#fire(`file ${opts.file}`));
      else {
        this.#timer = setInterval(this.#onFile, opts.pollMs ?? 1000);
        this.#timer.unref();
      }
    }
  }

  get fired(): boolean {
    return this.#fired;
  }

  /** Engages it as a SIGUSR2 or the kill file would (`why`): for a signal received before it existed. */
  engage(why: string): void {
    this.#fire(why);
  }

  #fire(why: string): void {
    if (this.#fired) return;
    this.#fired = true;
    // The file is watched no more; SIGUSR2 stays handled (ignored) until `close`, so a second
    // signal does not end the process with Node's default action.
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#onKill(why);
  }

  close(): void {
    process.off('SIGUSR2', this.#onSignal);
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * What bin/fxflow.js leaves for `fxflow run` under this global key: the signals (SIGINT, SIGTERM,
 * SIGUSR2) its placeholder handlers received before `StartSignals` existed, in order, and `release`,
 * which removes those handlers.
 */
export const EARLY_SIGNALS = Symbol.for('fxflow.early-signals');
export interface EarlySignals {
  readonly received: readonly string[];
  release(): void;
}

/** What `StartSignals` hands a signal to once the runner exists: the runner's halt. */
export interface Haltable {
  halt(why: string): void;
}

/**
 * The operator's signals from the first moment of `fxflow run`, before the runner exists and while
 * it starts (settling the journal, the in-doubt wait, warm-up): Node's default action for SIGUSR2
 * would end the process at once (exit 140, nothing flattened), and SIGINT's or SIGTERM's without a
 * word. SIGUSR2 or the kill file engages the kill switch: handed to the runner's `halt` as soon as
 * the runner exists (it journals the halt, sends nothing of the strategy, and flattens once the
 * account can be read). SIGINT (Ctrl-C, as `CtrlC` counts them) and SIGTERM ask for a stop, which
 * the caller makes once the start is done (`stop`); a third Ctrl-C calls `abandon`. `close` hands
 * the signals over to the runner's own handlers.
 */
export class StartSignals {
  readonly #kill: KillSwitch;
  readonly #ctrlC: CtrlC;
  readonly #onInt = (): void => this.#ctrlC.press();
  readonly #onTerm = (): void => this.#stop('SIGTERM');
  readonly #say: (line: string) => void;
  #runner: Haltable | undefined;
  /** Why the kill switch engaged during the start, if it did. */
  killed: string | undefined;
  /** The stop asked for during the start (SIGINT, SIGTERM), if any. */
  stop: 'SIGINT' | 'SIGTERM' | undefined;

  constructor(o: {
    readonly killFile?: string;
    readonly say: (line: string) => void;
    readonly abandon: () => void;
    readonly ctrlCWindowMs?: number;
  }) {
    this.#say = o.say;
    this.#kill = new KillSwitch({
      ...(o.killFile !== undefined ? { file: o.killFile } : {}),
      onKill: (why) => {
        this.killed = why;
        if (this.#runner !== undefined) this.#runner.halt(why);
        else
          this.#say(
            `KILL SWITCH ENGAGED (${why}) while starting: nothing of the strategy will be sent; once the journal is open the halt is written to it, and every position the account holds is closed as soon as the account can be read`,
          );
      },
    });
    this.#ctrlC = new CtrlC({
      windowMs: () => o.ctrlCWindowMs ?? 3000,
      first: () => this.#stop('SIGINT'),
      warn: (line) => this.#say(line),
      exit: o.abandon,
    });
    process.on('SIGINT', this.#onInt);
    process.on('SIGTERM', this.#onTerm);
    this.#adoptEarly();
  }

  /**
   * Takes over from bin/fxflow.js's placeholder handlers (its own are installed first, so no signal
   * falls between them) and acts on what they received, in order: SIGUSR2 engages the kill switch,
   * SIGTERM asks for a stop, each SIGINT counts as a Ctrl-C.
   */
  #adoptEarly(): void {
    const g = globalThis as { [EARLY_SIGNALS]?: EarlySignals };
    const early = g[EARLY_SIGNALS];
    if (early === undefined) return;
    delete g[EARLY_SIGNALS];
    early.release();
    for (const sig of early.received) {
      if (sig === 'SIGUSR2') this.#kill.engage('SIGUSR2');
      else if (sig === 'SIGTERM') this.#onTerm();
      else if (sig === 'SIGINT') this.#onInt();
    }
  }

  #stop(sig: 'SIGINT' | 'SIGTERM'): void {
    if (this.stop !== undefined) return;
    this.stop = sig;
    this.#say(
      `${sig} while starting: the run stops as soon as its start is done (it is settling the journal and reading the account)${sig === 'SIGINT' ? '; Ctrl-C twice more exits without waiting' : ''}`,
    );
  }

  /** The runner exists (its journal is open): a kill switch engaged before now is handed to it. */
  attach(runner: Haltable): void {
    this.#runner = runner;
    if (this.killed !== undefined) runner.halt(this.killed);
  }

  /** The runner's own handlers have taken over. */
  close(): void {
    this.#kill.close();
    process.off('SIGINT', this.#onInt);
    process.off('SIGTERM', this.#onTerm);
  }
}
