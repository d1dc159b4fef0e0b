import type { OrderCancelReason, TransactionRejectReason } from '../../domain/v20/index.ts';
import type { SimOrder } from './orders.ts';
import type { SimState } from './state.ts';
import type { Draft } from './draft.ts';

/**
 * How an order ends without a fill, and how a request is refused: ORDER_CANCEL of a pending order
 * (client request, replacement, expiry, linked trade closed), ORDER_CANCEL of an order at fill time
 * (it existed but cannot fill), and the `*_REJECT` transactions. Each counts in the stats.
 */

/** Cancels pending order `o` (ORDER_CANCEL with `reason`; `replacedBy` names its replacement). */
export function cancelOrder(s: SimState, o: SimOrder, reason: OrderCancelReason, replacedBy?: string): void {
  s.untrack(o);
  const tx = s.tx;
  if (o.clientID === undefined && replacedBy === undefined) {
    // The common cancel as a note (transactions.ts): folded by its order's ID, its object (one
    // literal, the log's stamp included) built only if a listener asks.
    s.stats.cancels++;
    tx.publishCancel(o.id, reason);
    return;
  }
  const d: Draft = { type: 'ORDER_CANCEL', orderID: o.id, reason };
  if (o.clientID !== undefined) d.clientOrderID = o.clientID;
  if (replacedBy !== undefined) d.replacedByOrderID = replacedBy;
  s.stats.cancels++;
  tx.emit(d);
}

/** Cancels an order at fill time (bounds, margin, on-fill checks): the order existed, it cannot fill. */
export function cancelFill(
  s: SimState,
  orderID: string,
  clientOrderID: string | undefined,
  reason: OrderCancelReason,
): void {
  const d: Draft = { type: 'ORDER_CANCEL', orderID, reason };
  if (clientOrderID !== undefined) d.clientOrderID = clientOrderID;
  s.stats.cancels++;
  s.tx.emit(d);
}

/** A `*_REJECT` transaction of type `type`: the request's `fields` and the v20 `rejectReason`. */
export function reject(
  s: SimState,
  type: string,
  fields: Record<string, unknown>,
  rejectReason: TransactionRejectReason,
): void {
  s.stats.rejects++;
  s.tx.emit({ ...fields, type, rejectReason });
}
