import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { V20Execution } from '../adapters/v20/execution.ts';
import type { V20Rest } from '../adapters/v20/rest.ts';
import type { OrderIntent } from '../domain/intents.ts';
import type { Account } from '../domain/v20/index.ts';
import type { Portfolio } from '../engine/portfolio.ts';
import type { Clock } from '../ports/clock.ts';
import type { Journal } from './journal.ts';
import { ENTRY_TYPES, type RiskExecution } from './risk.ts';

/**
 * The kill switch: what engages it (`KillSwitch`: SIGUSR2 or a kill file), what it sends (cancels
 * of pending entries, closes of positions: `accountCloseIntents` from the account as OANDA reports
 * it, `killSwitchIntents` from the runner's view for --broker sim) and the flatten that confirms
 * the account is flat (`closeFromAccount`). The runner engages it (`Runner.kill`).
 */

/** What the account held when the kill switch or flatten checked it. */
export interface AccountCheck {
  readonly ok: boolean;
  /** The account's last transaction when it was read. */
  readonly lastTransactionID: string;
  readonly openTrades: number;
  /** Instruments with a non-zero long or short position. */
  readonly positions: readonly string[];
  /** Pending entry orders (limit, stop, MIT, market); dependent TP/SL orders are not counted. */
  readonly pendingEntries: number;
  /** Rounds of closes sent. */
  readonly rounds: number;
  /** Why it could not be confirmed (the account could not be read). */
  readonly error?: string;
}

/** What the flatten reads and sends through. */
export interface CloseFromAccountOptions {
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly risk: RiskExecution;
  readonly inner: V20Execution;
  readonly journal: Journal;
  readonly clock: Clock;
  readonly log: Logger;
  readonly runId: string;
}

/**
 * v20: closes what the account holds, as OANDA reports it after every submission in flight has
 * been answered (never the runner's own view, which may lack a fill the stream has not brought
 * yet): cancels its pending entry orders and, with `flatten`, closes its positions; then reads
 * the account again to confirm. Up to 3 rounds; what is still open after them is reported (`ok`
 * false). Closes and cancels go through the risk layer (always allowed) and the journal, and
 * every request through the HTTP client's request budget.
 */
export async function closeFromAccount(o: CloseFromAccountOptions, flatten: boolean): Promise<AccountCheck> {
  const { risk, inner } = o;
  let rounds = 0;
  let n = 0;
  for (;;) {
    await inner.drain();
    let read: { account: Account; lastTransactionID: string };
    try {
      read = await o.rest.account(o.accountID);
    } catch (e) {
      return { ok: false, lastTransactionID: '', openTrades: -1, positions: [], pendingEntries: -1, rounds, error: `the account could not be read: ${(e as Error).message}` };
    }
    const { intents, openTrades, positions, pendingEntries } = accountCloseIntents(read.account, flatten, `${flatten ? 'flat' : 'kill'}-${o.runId}`, n);
    n += intents.length;
    if (intents.length === 0 || rounds >= 3) {
      const ok = intents.length === 0;
      return { ok, lastTransactionID: read.lastTransactionID, openTrades, positions, pendingEntries, rounds };
    }
    rounds++;
    o.log.warn({ round: rounds, positions, pendingEntries, lastTransactionID: read.lastTransactionID }, 'closing what the account holds');
    for (const i of intents) {
      o.journal.intent(i, o.clock.now());
      risk.submit(i);
    }
  }
}

/**
 * What the kill switch and --flatten-on-exit submit on a v20 account, from the account as OANDA
 * reports it (GET /accounts/{id}): a cancel for every pending entry order and, with `flatten`, a
 * close of each instrument's long and short position. Also says what the account holds.
 */
export function accountCloseIntents(account: Account, flatten: boolean, idPrefix: string, first = 0): { intents: OrderIntent[]; openTrades: number; positions: string[]; pendingEntries: number } {
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
    if (flatten) intents.push({ kind: 'closePosition', id: `${idPrefix}-${++n}`, instrument: p.instrument, ...(long ? { longUnits: 'ALL' } : {}), ...(short ? { shortUnits: 'ALL' } : {}) });
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

  #fire(why: string): void {
    if (this.#fired) return;
    this.#fired = true;
    this.close();
    this.#onKill(why);
  }

  close(): void {
    process.off('SIGUSR2', this.#onSignal);
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
