import type { Ledger, LedgerOrder } from '../../domain/ledger.ts';
import { formatTime, type UnixMs } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';

/** A transaction before the log stamps it (id, time, userID, accountID, batchID). */
export type Draft = Record<string, unknown> & { type: string };

/**
 * The v20 transaction builder: sequential IDs, batches, the stamp every transaction carries, and
 * delivery. Each transaction is built once, as the draft its author wrote, stamped in place, folded
 * into the simulator's ledger and handed to the listeners (the engine, the sandbox, the run folder).
 */
export class TransactionLog {
  /**
   * Who receives each transaction, in the order they came: a Subject's semantics (multicast, no
   * replay, listeners seen at the start of an emission get it) with a plain array of functions. The
   * array is replaced, never mutated, on (un)subscribe, so an emission walks the list as it was when
   * it began.
   */
  #listeners: readonly ((tx: Transaction) => void)[] = [];
  /** The next transaction's ID (a number: the text is made once per ID). */
  nextID = 1;
  #lastIDNum = 0;
  #lastIDText = '';
  /** The current batch's ID ('' before the first batch: a transaction is then its own batch). */
  #batchID = '';
  /** The last stamped time and its text. */
  #timeAt = Number.NaN;
  #timeText = '';

  constructor(
    private readonly ledger: Ledger,
    private readonly accountID: string,
    /** The simulator's clock: transactions are stamped with its time. */
    private readonly clock: { readonly now: UnixMs },
  ) {}

  /** The ID the next transaction will take. */
  peekID(): string {
    return this.#idText(this.nextID);
  }

  /**
   * The decimal text of a transaction ID, cached for the last one: a batch's ID, the fill's
   * peeked ID and the transaction's own ID are the same string (one string, not three).
   */
  #idText(n: number): string {
    if (n !== this.#lastIDNum) {
      this.#lastIDNum = n;
      this.#lastIDText = String(n);
    }
    return this.#lastIDText;
  }

  /** Starts a new batch: the next transaction's ID becomes the batch ID. */
  begin(): void {
    this.#batchID = this.#idText(this.nextID);
  }

  /** Stamps `draft` in place (it is the transaction's own fresh object: no copy), folds and delivers it. */
  emit(draft: Draft): Transaction {
    return this.publish(this.stamp(draft));
  }

  /** Stamps `draft` in place with the next ID, the time, the user, the account and the batch (then `publish` it). */
  stamp(draft: Draft): Draft {
    const id = this.takeID();
    draft.id = id;
    draft.time = this.timeText();
    draft.userID = 1;
    draft.accountID = this.accountID;
    draft.batchID = this.#batchID || id;
    return draft;
  }

  /** The current batch's ID, or `id` when no batch was begun. */
  batchOr(id: string): string {
    return this.#batchID || id;
  }

  /** The next transaction's ID, taken. */
  takeID(): string {
    return this.#idText(this.nextID++);
  }

  /** The time of the transactions emitted now, in v20's form (a fill's five or so transactions share one text). */
  timeText(): string {
    const now = this.clock.now;
    if (now !== this.#timeAt) {
      this.#timeAt = now;
      this.#timeText = formatTime(Number.isFinite(now) ? now : 0);
    }
    return this.#timeText;
  }

  /**
   * Folds a stamped transaction into the ledger and hands it to the listeners. `order`: the
   * working order an order-creating transaction creates, which the ledger files as its pending order.
   */
  publish(stamped: Draft, order?: LedgerOrder): Transaction {
    const tx = stamped as unknown as Transaction;
    this.ledger.apply(tx, order);
    const listeners = this.#listeners;
    for (let i = 0; i < listeners.length; i++) listeners[i]!(tx);
    return tx;
  }

  /** Adds a listener; returns the function that removes it. */
  listen(listener: (tx: Transaction) => void): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  /** Removes every listener (the run ended). */
  clear(): void {
    this.#listeners = [];
  }
}

/**
 * Copies `src`'s own fields into `into`, in their order, as a spread would (`{ ...into, ...src }`),
 * optionally replacing field `key` by `value` in place (or appending it). Used on the fill path,
 * where spreads into a literal that is then extended are slow; Object.assign is V8's fast copy.
 */
export function copyFields<T extends Record<string, unknown>>(into: T, src: Record<string, unknown>, key?: string, value?: unknown): T {
  const out = Object.assign(into, src) as Record<string, unknown>;
  if (key !== undefined) out[key] = value;
  return into;
}
