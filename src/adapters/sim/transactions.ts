import type { Ledger, LedgerOrder } from '../../domain/ledger.ts';
import { CreateNote } from './order-notes.ts';
import { formatTime, parseTime, type UnixMs } from '../../domain/time.ts';
import type { TransactionNote } from '../../domain/transaction-note.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { FillNote } from './fill.ts';

import type { Draft } from './draft.ts';

export type { Draft };

/**
 * A transaction built as an object (every one but the fills and the common cancels, which the log
 * holds as numbers), delivered as a note: its type read at once, the rest from the object when
 * asked. The log keeps one per delivery depth.
 */
class ObjectNote implements TransactionNote {
  type = '';
  readonly price = Number.NaN;
  #tx: Transaction = undefined as unknown as Transaction;

  set(tx: Transaction): this {
    this.#tx = tx;
    this.type = tx.type;
    return this;
  }

  get id(): string {
    return this.#tx.id;
  }

  get idNum(): number {
    return Number(this.#tx.id);
  }

  get at(): UnixMs {
    return parseTime(this.#tx.time);
  }

  get orderID(): string | undefined {
    return (this.#tx as { orderID?: string }).orderID;
  }

  get reason(): string | undefined {
    return (this.#tx as { reason?: string }).reason;
  }

  get rejectReason(): string | undefined {
    return (this.#tx as { rejectReason?: string }).rejectReason;
  }

  get clientExtensionsID(): string | undefined {
    return (this.#tx as { clientExtensions?: { id?: string } }).clientExtensions?.id;
  }

  transaction(): Transaction {
    return this.#tx;
  }
}

/**
 * The commonest ORDER_CANCEL (no client order ID, no replacement: a dependent order of a closed
 * trade, an expiry) as a note, its object built when asked, as the literal the log wrote before.
 */
class CancelNote implements TransactionNote {
  readonly type = 'ORDER_CANCEL';
  id = '';
  idNum = 0;
  orderID = '';
  reason = '';
  time = '';
  accountID = '';
  batchID = '';
  readonly rejectReason = undefined;
  readonly clientExtensionsID = undefined;
  readonly price = Number.NaN;
  #tx: Transaction | undefined = undefined;

  get at(): UnixMs {
    return parseTime(this.time);
  }

  transaction(): Transaction {
    const { orderID, reason, id, time, accountID, batchID } = this;
    return (this.#tx ??= {
      type: 'ORDER_CANCEL',
      orderID,
      reason,
      id,
      time,
      userID: 1,
      accountID,
      batchID,
    } as unknown as Transaction);
  }

  set(
    id: string,
    idNum: number,
    orderID: string,
    reason: string,
    time: string,
    accountID: string,
    batchID: string,
  ): this {
    this.#tx = undefined;
    this.id = id;
    this.idNum = idNum;
    this.orderID = orderID;
    this.reason = reason;
    this.time = time;
    this.accountID = accountID;
    this.batchID = batchID;
    return this;
  }
}

/**
 * The v20 transaction builder: sequential IDs, batches, the stamp every transaction carries, and
 * delivery. A transaction is folded into the simulator's ledger, then delivered as a note
 * (TransactionNote) to the listeners (the engine, the order counters, and through `listen` the
 * sandbox, the run folder, `transactions$`). Most types are built as the draft their author wrote,
 * stamped in place; an ORDER_FILL is a `FillNote` of numbers (`publishFill`), the common
 * ORDER_CANCEL a `CancelNote` (`publishCancel`) and a MARKET_ORDER or common on-fill order a
 * `CreateNote` of its pending order (`publishCreate`), folded from their numbers, their objects
 * built only if a listener asks (`listen`'s listeners all do).
 */
export class TransactionLog {
  /**
   * Who receives each transaction, in the order they came: a Subject's semantics (multicast, no
   * replay, listeners seen at the start of an emission get it) with a plain array of functions. The
   * array is replaced, never mutated, on (un)subscribe, so an emission walks the list as it was when
   * it began. Listeners of objects and of notes share it, so each gets a transaction in the order
   * they subscribed, as before notes.
   */
  #listeners: readonly ((n: TransactionNote) => void)[] = [];
  /**
   * How many deliveries are under way: a listener may cause transactions (a strategy's
   * onTransaction submits an order), delivered while the outer one is. Each depth has its own
   * notes, so a note stays as it was for the listeners after the one that caused the inner one.
   */
  #depth = 0;
  readonly #fillNotes: FillNote[] = [];
  readonly #objectNotes: ObjectNote[] = [];
  readonly #cancelNotes: CancelNote[] = [];
  readonly #createNotes: CreateNote[] = [];
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
    /** Where the fill notes count the objects they build. */
    private readonly stats: { fillObjects: number } = { fillObjects: 0 },
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
    if (this.#listeners.length > 0)
      this.#deliver((this.#objectNotes[this.#depth] ??= new ObjectNote()).set(tx));
    return tx;
  }

  /**
   * The note the next fill is written into (fill.ts `setFill`), then published with `publishFill`.
   * The same object again after the delivery: nothing may keep it.
   */
  fillNote(): FillNote {
    return (this.#fillNotes[this.#depth] ??= new FillNote(this.stats));
  }

  /** Folds a fill into the ledger from its numbers and delivers it (its object is built if a listener asks). */
  publishFill(note: FillNote): void {
    this.ledger.applyFill(note);
    if (this.#listeners.length > 0) this.#deliver(note);
  }

  /**
   * Folds an order-creating transaction held as values (`txType`, ID `id` of number `idNum`, stamped
   * `time`, its `reason` and `clientExtensionsID`) with the pending order it creates, `order`, whose
   * `created` builds the transaction when read (order-notes.ts, orders.ts `WorkingOrder`), and
   * delivers it as a note: its object is built only if a listener asks.
   */
  publishCreate(
    txType: string,
    id: string,
    idNum: number,
    time: string,
    reason: string,
    clientExtensionsID: string | undefined,
    order: LedgerOrder,
  ): void {
    this.ledger.applyOrder(id, idNum, order);
    if (this.#listeners.length === 0) return;
    this.#deliver(
      (this.#createNotes[this.#depth] ??= new CreateNote()).set(
        txType,
        id,
        idNum,
        time,
        reason,
        clientExtensionsID,
        order,
      ),
    );
  }

  /**
   * Takes the next ID for an ORDER_CANCEL of order `orderID` (no client order ID, no replacement),
   * folds it into the ledger and delivers it as a note: its object is built only if a listener asks.
   */
  publishCancel(orderID: string, reason: string): void {
    const idNum = this.nextID;
    const id = this.takeID();
    this.ledger.applyCancel(id, idNum, orderID);
    if (this.#listeners.length === 0) return;
    this.#deliver(
      (this.#cancelNotes[this.#depth] ??= new CancelNote()).set(
        id,
        idNum,
        orderID,
        reason,
        this.timeText(),
        this.accountID,
        this.batchOr(id),
      ),
    );
  }

  #deliver(note: TransactionNote): void {
    const listeners = this.#listeners;
    this.#depth++;
    try {
      for (let i = 0; i < listeners.length; i++) listeners[i]!(note);
    } finally {
      this.#depth--;
    }
  }

  /** Adds a listener of v20 objects; returns the function that removes it. */
  listen(listener: (tx: Transaction) => void): () => void {
    return this.listenNotes((n) => listener(n.transaction()));
  }

  /** Adds a listener of notes (valid during the call only; `transaction()` builds the object); returns the function that removes it. */
  listenNotes(listener: (n: TransactionNote) => void): () => void {
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
export function copyFields<T extends Record<string, unknown>>(
  into: T,
  src: Record<string, unknown>,
  key?: string,
  value?: unknown,
): T {
  const out = Object.assign(into, src) as Record<string, unknown>;
  if (key !== undefined) out[key] = value;
  return into;
}
