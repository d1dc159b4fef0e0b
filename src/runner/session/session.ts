import { randomBytes } from 'node:crypto';
import type { SimBroker } from '../../adapters/sim/broker.ts';
import { V20Error } from '../../adapters/v20/errors.ts';
import type { V20Rest } from '../../adapters/v20/rest.ts';
import type { AccountState } from '../../domain/account-state.ts';
import type { Account, Transaction } from '../../domain/v20/index.ts';
import { RunnerError } from './errors.ts';
import type { Journal, JournalContents } from '../order-path/journal.ts';

/**
 * The session: what a run starts from and is identified by. The run identity in every client ID
 * (`newRunId`), the account baseline the journal keeps (`baselineOf`; `simBaselineOf` and
 * `simRebaseOf` for --broker sim), the check that a journal belongs to the account
 * (`checkOwnership`), and the tick-to-submission latency the run reports (`Latency`).
 */

/** A new run identity: time (base 36) and 16 random bits; unique across restarts and journals. */
export function newRunId(): string {
  return `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
}

/** Tick-to-submission latencies in ms (bounded ring). */
export class Latency {
  readonly #xs = new Float64Array(65_536);
  #n = 0;
  add(ms: number): void {
    this.#xs[this.#n++ & 0xffff] = ms;
  }
  snapshot(): { p50: number; p99: number; max: number; n: number } {
    const n = Math.min(this.#n, this.#xs.length);
    if (n === 0) return { p50: 0, p99: 0, max: 0, n: 0 };
    const s = Array.from(this.#xs.subarray(0, n)).sort((a, b) => a - b);
    const q = (p: number): number => s[Math.min(n - 1, Math.floor(p * n))]!;
    return { p50: q(0.5), p99: q(0.99), max: s[n - 1]!, n: this.#n };
  }
}

/**
 * The account as reconciled at start: what the journal keeps as its baseline, and what the
 * portfolio (and with --broker sim, the simulator) is restored from (`restoreAccount`).
 */
export interface Baseline extends AccountState {
  /** The account the journal belongs to (absent in journals written before it was recorded). */
  readonly accountID?: string;
  readonly currency: string;
  readonly marginRate: string;
  readonly hedging: boolean;
}

export function baselineOf(a: Account): Baseline {
  const x = a as Account & {
    pl?: string;
    financing?: string;
    commission?: string;
    guaranteedExecutionFees?: string;
  };
  return {
    accountID: a.id,
    lastTransactionID: a.lastTransactionID,
    balance: a.balance,
    pl: x.pl ?? '0',
    financing: x.financing ?? '0',
    ...(x.commission !== undefined ? { commission: x.commission } : {}),
    ...(x.guaranteedExecutionFees !== undefined
      ? { guaranteedExecutionFees: x.guaranteedExecutionFees }
      : {}),
    currency: a.currency,
    marginRate: a.marginRate ?? '0.02',
    hedging: a.hedgingEnabled === true,
    trades: a.trades ?? [],
    orders: (a.orders ?? []).filter((o) => o.state === undefined || o.state === 'PENDING'),
  };
}

/**
 * `--broker sim`: the simulated account's journal starts from an empty account at transaction 0,
 * with the real account's currency, margin rate and hedging, and the real account's balance (at the
 * first start) as its deposit. The simulated account is that baseline plus every transaction the
 * simulator made, all journaled: a restart restores it from them.
 */
export function simBaselineOf(a: Account): SimBaseline {
  return {
    ...baselineOf({
      ...a,
      balance: '0',
      pl: '0',
      financing: '0',
      lastTransactionID: '0',
      trades: [],
      orders: [],
    } as Account),
    broker: 'sim',
    deposit: a.balance,
  };
}

/** A --broker sim journal's baseline: an account state of the simulator, the deposit it started with. */
export interface SimBaseline extends Baseline {
  readonly broker: 'sim';
  readonly deposit: string;
}

/**
 * `--broker sim` rebase: the simulated account as it is now (`SimBroker.snapshot()`) becomes the
 * journal's baseline, with the first baseline's deposit, currency, margin rate and hedging. Its
 * latest prices are left out: a restart restores the simulator without them, as from a journal that
 * was never rebased (the market is the next price), so both restart the same way.
 */
export function simRebaseOf(
  sim: SimBroker,
  first: Pick<SimBaseline, 'currency' | 'marginRate' | 'hedging' | 'deposit'>,
): SimBaseline {
  const { quotes: _quotes, ...account } = sim.snapshot();
  return {
    ...account,
    currency: first.currency,
    marginRate: first.marginRate,
    hedging: first.hedging,
    broker: 'sim',
    deposit: first.deposit,
  };
}

/**
 * Refuses a journal that does not belong to the account: another account ID, a last transaction
 * ahead of the account's (the journal of an account that was reset, e.g. a restarted sandbox), or
 * (v20) a journaled transaction the account does not have under its ID. Closes the journal (its
 * lock) before throwing.
 */
export async function checkOwnership(
  o: { readonly rest: V20Rest; readonly accountID: string; readonly journalDir: string },
  journal: Journal,
  baseline: (Baseline & { broker?: 'sim' }) | undefined,
  contents: JournalContents,
  accountLast: string,
): Promise<void> {
  const fresh = `start afresh from the account with the same command and --new-journal (the old journal is kept in ${o.journalDir}/replaced-<time>/), or give --journal the directory of this account's journal`;
  const refuse = (why: string): never => {
    journal.close();
    throw new RunnerError(
      'RUNNER',
      `journal ${o.journalDir} does not belong to account ${o.accountID}: ${why}. Nothing was sent; ${fresh}`,
    );
  };
  if (baseline === undefined) return;
  if (baseline.accountID !== undefined && baseline.accountID !== o.accountID)
    refuse(`it was written for account ${baseline.accountID}`);
  if (baseline.broker === 'sim') return; // the simulator's own transaction IDs
  const journalLast = contents.lastTransactionID || baseline.lastTransactionID;
  if (Number(journalLast) > Number(accountLast))
    refuse(
      `its last transaction is ${journalLast}, the account's last is ${accountLast} (an account that was reset, e.g. a restarted sandbox, or another account)`,
    );
  const last = contents.transactions[contents.transactions.length - 1];
  if (last === undefined) return;
  let theirs: Transaction | undefined;
  try {
    theirs = await o.rest.transaction(o.accountID, last.id);
  } catch (e) {
    if (!(e instanceof V20Error && e.status === 404)) {
      journal.close();
      throw e;
    }
  }
  if (theirs === undefined || theirs.type !== last.type || theirs.time !== last.time) {
    refuse(
      `its transaction ${last.id} is ${last.type} at ${last.time}; the account's transaction ${last.id} is ${theirs === undefined ? 'missing' : `${theirs.type} at ${theirs.time}`}`,
    );
  }
}

/**
 * Ctrl-C as operators expect, for a session that stops gracefully: `press` on every SIGINT. The
 * first calls `first` (the graceful stop, saying what it waits for); the second warns ("Ctrl-C
 * again within 3 s exits WITHOUT flattening: positions stay open"); a third within `windowMs` of
 * the second calls `exit` (NOT FLAT with what is open, code 130); one after the window warns again.
 */
export class CtrlC {
  #presses = 0;
  #warnedAt = Number.NEGATIVE_INFINITY;
  constructor(
    readonly o: {
      readonly windowMs: () => number;
      readonly first: () => void;
      readonly warn: (line: string) => void;
      readonly exit: () => void;
      readonly now?: () => number;
    },
  ) {}

  press(): void {
    this.#presses++;
    if (this.#presses === 1) return this.o.first();
    const now = this.o.now?.() ?? Date.now();
    const windowMs = this.o.windowMs();
    if (this.#presses === 2 || now - this.#warnedAt >= windowMs) {
      this.#warnedAt = now;
      return this.o.warn(
        `Ctrl-C again within ${windowMs / 1000} s exits WITHOUT flattening: positions stay open`,
      );
    }
    this.o.exit();
  }
}

/** Polls `pred` every 20 ms of the wall clock for at most `ms`: whether it came true (the stop and the rebase wait on the run's own state). */
export async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
