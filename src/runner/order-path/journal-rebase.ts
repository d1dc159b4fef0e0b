import type { Logger } from 'pino';
import type { SimBroker } from '../../adapters/sim/broker.ts';
import type { V20Rest } from '../../adapters/v20/rest.ts';
import type { Account } from '../../domain/v20/index.ts';
import type { Journal, StateSnapshot } from './journal.ts';
import { baselineOf, type SimBaseline, simRebaseOf, waitFor } from '../session/session.ts';

export interface JournalRebaseOptions {
  readonly journal: Journal;
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly log: Logger;
  /** Rebase once the journal keeps this many transactions (`RunnerOptions.rebaseEvery`; 0 never). */
  readonly every: number;
  /** --broker sim: the simulator, and the journal's first baseline (deposit, currency, margin rate, hedging) every rebase keeps. */
  readonly sim?: {
    readonly broker: SimBroker;
    readonly first: Pick<SimBaseline, 'currency' | 'marginRate' | 'hedging' | 'deposit'>;
  };
  /** The last transaction the strategy has handled. */
  readonly handled: () => string;
  readonly stopping: () => boolean;
  /** The strategy snapshot written with the new baseline (undefined before the engine runs). */
  readonly snapshot: () => StateSnapshot | undefined;
}

/**
 * Keeps the journal bounded: once it holds `every` transactions, a fresh account baseline replaces
 * it and the transactions before it are dropped, so a long run's journal and restart time stay
 * small. One rebase at a time; a failed one is tried again at a later transaction.
 */
export class JournalRebase {
  readonly #o: JournalRebaseOptions;
  #rebasing = false;

  constructor(o: JournalRebaseOptions) {
    this.#o = o;
  }

  /** Starts a rebase when the journal holds `every` transactions (called after every transaction the strategy handled). */
  check(): void {
    const o = this.#o;
    if (this.#rebasing || o.every <= 0 || o.journal.transactionCount < o.every || o.stopping()) return;
    this.#rebasing = true;
    (o.sim !== undefined ? this.#rebaseSim(o.sim.broker, o.sim.first) : this.#rebase())
      .catch((e: unknown) =>
        o.log.warn({ err: e }, 'journal rebase failed; it is tried again at a later transaction'),
      )
      .finally(() => {
        this.#rebasing = false;
      });
  }

  /**
   * The rebase: the account as OANDA reports it (at its last transaction X) becomes the journal's
   * baseline, once the strategy has handled every transaction up to X and no intent waits for its
   * outcome; the strategy snapshot is written with it, so nothing before X is needed after a restart.
   */
  async #rebase(): Promise<void> {
    const o = this.#o;
    const journal = o.journal;
    if (journal.unconfirmedCount > 0) return;
    const { account, lastTransactionID } = await o.rest.account(o.accountID);
    const upTo = Number(lastTransactionID);
    const caughtUp = await waitFor(() => Number(o.handled()) >= upTo || o.stopping(), 10_000);
    const snapshot = o.snapshot();
    if (!caughtUp || o.stopping() || snapshot === undefined || journal.unconfirmedCount > 0) return;
    const dropped = journal.transactionCount;
    journal.rebase(baselineOf({ ...account, lastTransactionID } as Account), snapshot);
    o.log.info(
      {
        baseline: lastTransactionID,
        kept: journal.transactionCount,
        dropped: dropped - journal.transactionCount,
      },
      'journal rebased',
    );
  }

  /**
   * The --broker sim rebase: the simulated account (`simRebaseOf`) becomes the journal's baseline,
   * under the same conditions as with v20: the strategy has handled every transaction up to it and
   * no intent waits for its outcome (nor a market order for its price in the simulator). The
   * strategy snapshot written with it carries the trailing stop levels and the last prices. Runs
   * after the simulator's current batch (it is called from inside its emission).
   */
  async #rebaseSim(
    sim: SimBroker,
    first: Pick<SimBaseline, 'currency' | 'marginRate' | 'hedging' | 'deposit'>,
  ): Promise<void> {
    await new Promise<void>((res) => setImmediate(res));
    const o = this.#o;
    const journal = o.journal;
    if (o.stopping() || journal.unconfirmedCount > 0 || sim.queuedMarketOrders() > 0) return;
    const last = sim.ledger.lastTransactionID;
    if (Number(o.handled()) < Number(last) || journal.lastTransactionID !== last) return;
    const snapshot = o.snapshot();
    if (snapshot === undefined) return;
    const dropped = journal.transactionCount;
    journal.rebase(simRebaseOf(sim, first), snapshot);
    o.log.info(
      { baseline: last, kept: journal.transactionCount, dropped: dropped - journal.transactionCount },
      'journal rebased',
    );
  }
}
