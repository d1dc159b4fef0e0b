import type { Transaction } from '../domain/v20/index.ts';

/** Transactions a sandbox account keeps by default: the newest 100,000. */
export const DEFAULT_KEEP_TRANSACTIONS = 100_000;
/** Finished (filled, cancelled) orders and closed trades an account keeps for lookups and lists, at most. */
export const KEEP_FINISHED = 10_000;

/**
 * An account's transaction log, capped: it keeps the newest `capacity` transactions in a ring and
 * forgets older ones, so a sandbox that runs millions of orders stays within a fixed memory bound.
 * Transaction IDs are consecutive from 1 (as the simulator issues them), so the ID says where a
 * transaction sits: `get(id)` and `range(from, to)` are O(1) per transaction.
 *
 * What was forgotten is reported, not hidden: `oldestID` is the first ID still kept, and callers
 * answer requests for older IDs as OANDA answers a range it cannot serve (416).
 */
export class TransactionLog {
  readonly capacity: number;
  readonly #ring: (Transaction | undefined)[];
  /** ID of the newest transaction kept (0 before the first). */
  #last = 0;

  constructor(capacity = DEFAULT_KEEP_TRANSACTIONS) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`transaction log capacity must be a whole number >= 1 (got ${capacity})`);
    this.capacity = capacity;
    this.#ring = new Array<Transaction | undefined>(Math.min(capacity, 1024));
  }

  /** Appends the next transaction; its ID must be the last ID + 1 (the simulator's numbering). */
  push(tx: Transaction): void {
    const id = Number(tx.id);
    if (id !== this.#last + 1)
      throw new RangeError(
        `transaction ${tx.id} does not follow ${this.#last}: the log needs consecutive IDs`,
      );
    const slot = (id - 1) % this.capacity;
    if (slot >= this.#ring.length) this.#grow(slot);
    this.#ring[slot] = tx;
    this.#last = id;
  }

  /** The newest transaction ID (0 when empty). */
  get lastID(): number {
    return this.#last;
  }

  /** The oldest transaction ID still kept (1 until the log is full; lastID + 1 when empty). */
  get oldestID(): number {
    return Math.max(1, this.#last - this.capacity + 1);
  }

  /** How many transactions are kept. */
  get length(): number {
    return this.#last - this.oldestID + 1;
  }

  /** The transaction with this ID, or undefined when it does not exist or was forgotten. */
  get(id: number): Transaction | undefined {
    if (!Number.isInteger(id) || id < this.oldestID || id > this.#last) return undefined;
    return this.#ring[(id - 1) % this.capacity];
  }

  /** Calls `fn` for IDs from..to (clamped to what is kept), in ID order; stops when `fn` returns false. */
  forEach(from: number, to: number, fn: (tx: Transaction) => boolean | void): void {
    const lo = Math.max(from, this.oldestID);
    const hi = Math.min(to, this.#last);
    for (let id = lo; id <= hi; id++) if (fn(this.#ring[(id - 1) % this.capacity]!) === false) return;
  }

  /** Transactions from..to (clamped to what is kept), in ID order. */
  range(from: number, to: number): Transaction[] {
    const out: Transaction[] = [];
    this.forEach(from, to, (t) => {
      out.push(t);
    });
    return out;
  }

  /**
   * The first kept ID whose transaction time is at or after `ms` (lastID + 1 when none). Times are
   * non-decreasing in ID order (the sandbox clock never moves back), so this is a binary search.
   */
  firstAtOrAfter(ms: number, timeOf: (tx: Transaction) => number): number {
    let lo = this.oldestID;
    let hi = this.#last + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (timeOf(this.get(mid)!) < ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The ring grows in steps up to `capacity`, so a small account does not reserve the whole cap. */
  #grow(slot: number): void {
    const size = Math.min(this.capacity, Math.max(slot + 1, this.#ring.length * 2));
    for (let i = this.#ring.length; i < size; i++) this.#ring.push(undefined);
  }
}

/**
 * A bounded set of finished items (filled or cancelled orders, closed trades) kept for lookups: the
 * oldest finished item is forgotten once more than `capacity` are held. Insertion order is
 * finishing order. Pending items are never put here, so they are never forgotten.
 */
export class FinishedCache<V> {
  readonly #map = new Map<string, V>();
  /** `onEvict` is called with the ID of each item forgotten. */
  constructor(
    readonly capacity: number,
    readonly onEvict?: (id: string) => void,
  ) {}

  set(id: string, v: V): void {
    this.#map.delete(id);
    this.#map.set(id, v);
    while (this.#map.size > this.capacity) {
      const oldest = this.#map.keys().next();
      if (oldest.done === true) break;
      this.#map.delete(oldest.value);
      this.onEvict?.(oldest.value);
    }
  }

  get(id: string): V | undefined {
    return this.#map.get(id);
  }

  delete(id: string): boolean {
    return this.#map.delete(id);
  }

  values(): IterableIterator<V> {
    return this.#map.values();
  }

  get size(): number {
    return this.#map.size;
  }
}
