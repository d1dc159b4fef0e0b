import type { Logger } from 'pino';
import type { SimBroker } from '../../adapters/sim/broker.ts';
import { AccountStateError, restoreAccount } from '../../domain/account-state.ts';
import { LedgerError } from '../../domain/ledger.ts';
import type { Account, Transaction } from '../../domain/v20/index.ts';
import { Portfolio } from '../../engine/portfolio.ts';
import { Journal, type JournalContents, type StateSnapshot } from '../order-path/journal.ts';
import { JournalRebase, type JournalRebaseOptions } from '../order-path/journal-rebase.ts';
import { RunnerError } from './errors.ts';
import type { RunnerOptions } from './runner-options.ts';
import { type Baseline, baselineOf, checkOwnership, simBaselineOf } from './session.ts';

/** A run's baseline as the journal keeps it: the account it started from, whose broker, its first deposit. */
export type RunBaseline = Baseline & {
  broker?: 'sim';
  deposit?: string;
  /** A portfolio's journal: the names of its strategies (each one's book and state are kept by name). */
  members?: readonly string[];
};

/**
 * Opens the run's journal (`--new-journal` moves the old one aside) and reads it, refusing a
 * damaged one with the one way out; a torn last record (a crash mid-write) is dropped with a warning.
 */
export function openRunJournal(
  o: RunnerOptions,
  log: Logger,
): { readonly journal: Journal; readonly contents: JournalContents } {
  const journal = Journal.open(o.journalDir, {
    noSync: o.journalSync === false,
    ...(o.newJournal === true ? { fresh: true } : {}),
  });
  if (journal.replaced !== '')
    log.warn(
      { movedTo: journal.replaced },
      '--new-journal: the previous journal was moved aside; starting afresh from the account',
    );
  const contents = journal.contents();
  const damaged = contents.damaged;
  if (damaged.length > 0) {
    journal.close();
    const where = damaged
      .map((d) => `byte ${d.offset} (${d.bytes} bytes; ${d.recoveredAfter} intact records after it)`)
      .join(', ');
    throw new RunnerError(
      'RUNNER',
      `journal ${o.journalDir} is damaged: journal.log fails its checksum at ${where}. What the damaged records held (an intent, a transaction, a confirmation) is unknown, so the runner will not trade on this journal. Start afresh from the account with the same command and --new-journal (the damaged journal is kept in ${o.journalDir}/replaced-<time>/)`,
    );
  }
  if (contents.tornBytes > 0)
    log.warn(
      { tornBytes: contents.tornBytes },
      'journal: a torn last record (a write cut short by a crash) was dropped',
    );
  return { journal, contents };
}

/**
 * The journal checked against the account and the broker before anything else: a `--broker sim`
 * journal is never used with an account and the reverse, and a journal of another account is refused
 * (`checkOwnership`). Returns the journal's baseline, if it has one.
 */
export async function checkRunJournal(
  o: RunnerOptions,
  journal: Journal,
  contents: JournalContents,
  lastTransactionID: string,
): Promise<RunBaseline | undefined> {
  const broker = o.broker ?? 'v20';
  const baseline = contents.baseline as RunBaseline | undefined;
  if (baseline !== undefined && (baseline.broker === 'sim') !== (broker === 'sim')) {
    throw new RunnerError(
      'RUNNER',
      `journal ${o.journalDir} was written by a ${baseline.broker === 'sim' ? '--broker sim' : '--broker v20'} run and cannot be used with --broker ${broker}; give --journal another directory (the default one ends in -sim for --broker sim)`,
    );
  }
  await checkOwnership(o, journal, baseline, contents, lastTransactionID);
  return baseline;
}

/** The account as the start restored it: the portfolio, and what the strategy had not handled yet. */
export interface RestoredAccount {
  readonly baseline: RunBaseline;
  /** The first deposit (the simulated account's), else the baseline's balance. */
  readonly deposit: string;
  readonly portfolio: Portfolio;
  /** The journaled transactions the strategy had not handled: replayed to it. */
  readonly replay: Transaction[];
  /** The last transaction the strategy handled. */
  readonly handled: string;
  readonly snap: StateSnapshot | undefined;
  /** Where the transaction stream starts. */
  readonly fromID: string;
}

/**
 * The account restore at start, the same in both modes: the baseline (the journal's, else the
 * account as it is now, journaled), the portfolio restored from it, the journaled transactions the
 * strategy had handled applied to it, and those it had not kept for the replay.
 */
export function restoreAtStart(
  o: RunnerOptions,
  journal: Journal,
  contents: JournalContents,
  journalBaseline: RunBaseline | undefined,
  read: { readonly account: Account; readonly lastTransactionID: string },
  log: Logger,
): RestoredAccount {
  const broker = o.broker ?? 'v20';
  const { account, lastTransactionID } = read;
  const fromJournal = journalBaseline !== undefined;
  let baseline = journalBaseline;
  if (baseline === undefined) {
    // (A --broker sim journal from before its baseline was written holds the simulator's transactions from ID 1: the same thing.)
    baseline =
      broker === 'sim' ? simBaselineOf(account) : baselineOf({ ...account, lastTransactionID } as Account);
    if (o.members !== undefined) baseline = { ...baseline, members: o.members.map((m) => m.name) };
    journal.baseline(baseline);
  }
  const deposit = baseline.deposit ?? baseline.balance;
  const portfolio = new Portfolio({
    currency: baseline.currency,
    instruments: o.instruments,
    initialBalance: deposit,
    strict: false,
  });
  const snap = contents.state;
  const handled = snap?.handledTransactionID ?? baseline.lastTransactionID;
  const replay: Transaction[] = [];
  // One restore for the portfolio and the simulator (`restoreAccount`); a live account's portfolio
  // takes instruments the registry does not list, the simulator cannot.
  try {
    restoreAccount(portfolio.ledger, baseline, broker === 'sim' ? o.instruments : undefined, o.accountID);
  } catch (e) {
    if (!(e instanceof AccountStateError || e instanceof LedgerError)) throw e;
    throw new RunnerError(
      'RUNNER',
      broker === 'sim'
        ? `journal ${o.journalDir}: the simulated account cannot be restored from it (${e.message}); move the directory away to start the simulated account afresh`
        : fromJournal
          ? `journal ${o.journalDir}: its account baseline cannot be restored (${e.message}); move the directory away to start from account ${o.accountID} as it is now`
          : `account ${o.accountID}: the account as v20 reports it cannot be restored into the portfolio (${e.message})`,
      { cause: e },
    );
  }
  for (const t of contents.transactions) {
    if (Number(t.id) <= Number(baseline.lastTransactionID)) continue;
    if (Number(t.id) <= Number(handled)) portfolio.apply(t);
    else replay.push(t);
  }
  const fromID =
    broker === 'v20' ? contents.lastTransactionID || baseline.lastTransactionID : lastTransactionID;
  log.info(
    {
      lastTransactionID,
      journalLast: contents.lastTransactionID,
      trades: portfolio.ledger.trades.size,
      pendingOrders: portfolio.ledger.pendingOrders.size,
      balance: baseline.balance,
      replay: replay.length,
      restoredState: snap !== undefined,
    },
    'reconciled',
  );
  return { baseline, deposit, portfolio, replay, handled, snap, fromID };
}

/**
 * The journal's rebase for this run (`rebaseEvery`; none in shadow mode, whose report compares
 * every fill of the run, nor in a portfolio's run, whose books are folded again at a restart from
 * every transaction since the journal's start): the baseline written at start, rewritten as the journal grows, from the
 * account (or, `--broker sim`, from the simulator, with the account's first settings and deposit).
 */
export function runRebase(
  o: RunnerOptions,
  journal: Journal,
  at: { readonly baseline: Baseline; readonly deposit: string; readonly sim: SimBroker | undefined },
  run: Pick<JournalRebaseOptions, 'log' | 'handled' | 'stopping' | 'snapshot'>,
): JournalRebase {
  const { baseline, deposit, sim } = at;
  return new JournalRebase({
    journal,
    rest: o.rest,
    accountID: o.accountID,
    every: o.shadow === true || o.members !== undefined ? 0 : (o.rebaseEvery ?? 10_000),
    ...(sim !== undefined
      ? {
          sim: {
            broker: sim,
            first: {
              currency: baseline.currency,
              marginRate: baseline.marginRate,
              hedging: baseline.hedging,
              deposit,
            },
          },
        }
      : {}),
    ...run,
  });
}
