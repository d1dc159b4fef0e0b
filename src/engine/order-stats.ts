/**
 * What the counters read of a transaction: a v20 object, or a simulator's note
 * (domain/transaction-note.ts), which carries these without building its object.
 */
export interface CountedTransaction {
  readonly type: string;
  readonly id: string;
  readonly orderID?: string | undefined;
  readonly reason?: string | undefined;
  readonly rejectReason?: string | undefined;
}

/** Counts of one kind of order (the strategy's own, or the dependent orders of its trades). */
export interface OrderCounts {
  /** Orders the account created plus requests it rejected. */
  placed: number;
  filled: number;
  cancelled: number;
  rejected: number;
  /** Still pending at the end of the run. */
  pending: number;
  /** Reasons of the cancels (ORDER_CANCEL `reason`), with their counts. */
  readonly cancelReasons: Map<string, number>;
  /** Reasons of the rejects (`rejectReason`, else the reject's type), with their counts. */
  readonly rejectReasons: Map<string, number>;
}

const newCounts = (): OrderCounts => ({
  placed: 0,
  filled: 0,
  cancelled: 0,
  rejected: 0,
  pending: 0,
  cancelReasons: new Map(),
  rejectReasons: new Map(),
});

/** Types of the dependent orders of a trade (created on fill or by setTradeOrders). */
const DEPENDENT = new Set([
  'TAKE_PROFIT_ORDER',
  'STOP_LOSS_ORDER',
  'TRAILING_STOP_LOSS_ORDER',
  'GUARANTEED_STOP_LOSS_ORDER',
]);
const ORDER_TYPES = new Set([
  'MARKET_ORDER',
  'LIMIT_ORDER',
  'STOP_ORDER',
  'MARKET_IF_TOUCHED_ORDER',
  'FIXED_PRICE_ORDER',
  ...DEPENDENT,
]);

const bump = (m: Map<string, number>, k: string): void => {
  m.set(k, (m.get(k) ?? 0) + 1);
};

/**
 * What happened to the orders of a run, counted from its transactions: how many were placed,
 * filled, cancelled and rejected, and why. The strategy's own orders (market, limit, stop,
 * market-if-touched, trade and position closes) are counted apart from the dependent orders of its
 * trades (take profit, stop loss, trailing stop), whose cancels on a trade's close are routine.
 *
 * One call per transaction, counters only: the orders still pending are the only thing kept (their
 * IDs), so its size is the account's pending orders, never the run's.
 */
export class OrderStats {
  readonly strategy: OrderCounts = newCounts();
  readonly dependent: OrderCounts = newCounts();
  /** Pending order ID → whether it is a dependent order. */
  readonly #pending = new Map<string, boolean>();

  readonly onTransaction = (tx: CountedTransaction): void => {
    const type = tx.type;
    if (ORDER_TYPES.has(type)) {
      const dep = DEPENDENT.has(type);
      (dep ? this.dependent : this.strategy).placed++;
      this.#pending.set(tx.id, dep);
      return;
    }
    if (type === 'ORDER_FILL' || type === 'ORDER_CANCEL') {
      const id = tx.orderID!;
      const dep = this.#pending.get(id);
      if (dep === undefined) return;
      this.#pending.delete(id);
      const c = dep ? this.dependent : this.strategy;
      if (type === 'ORDER_FILL') c.filled++;
      else {
        c.cancelled++;
        bump(c.cancelReasons, tx.reason ?? 'UNKNOWN');
      }
      return;
    }
    if (type.endsWith('_REJECT')) {
      const dep = DEPENDENT.has(type.slice(0, -'_REJECT'.length));
      const c = dep ? this.dependent : this.strategy;
      c.placed++;
      c.rejected++;
      bump(c.rejectReasons, tx.rejectReason ?? type);
    }
  };

  /** Counts the orders still pending (call once at the end). */
  finish(): void {
    this.strategy.pending = 0;
    this.dependent.pending = 0;
    for (const dep of this.#pending.values()) (dep ? this.dependent : this.strategy).pending++;
  }
}
