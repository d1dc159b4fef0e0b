/** The /v3 order routes: create, list, get, replace, cancel, client extensions; and v20's answer to an order. */
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import { parseOrderRequest } from '../../domain/v20/parse.ts';
import type { OrderRequest, Transaction } from '../../domain/v20/index.ts';
import type { SandboxAccount } from '../account.ts';
import { rejectMessage } from '../reject-messages.ts';
import type { SandboxReply } from '../route.ts';
import {
  A,
  HttpError,
  filterByIds,
  ids,
  isReject,
  objectBody,
  ok,
  pageOf,
  type On,
  type Req,
  type V3Context,
} from './context.ts';

/** v20's response to an order create/replace/close: transactions by role. */
export const orderResponse = (
  a: SandboxAccount,
  txs: Transaction[],
  prefix = '',
): { body: Record<string, unknown>; rejected: Transaction | undefined } => {
  const body: Record<string, unknown> = {};
  let created: string | undefined;
  let rejected: Transaction | undefined;
  for (const t of txs) {
    const x = t as Transaction & { orderID?: string; reason?: string; replacesOrderID?: string };
    if (isReject(t)) {
      rejected ??= t;
      body[`${prefix}orderRejectTransaction`] = t;
    } else if (
      t.type.endsWith('_ORDER') &&
      created === undefined &&
      !x.type.startsWith('TAKE_PROFIT') &&
      !x.type.startsWith('STOP_LOSS') &&
      !x.type.startsWith('TRAILING') &&
      !x.type.startsWith('GUARANTEED')
    ) {
      created = t.id;
      body[`${prefix}orderCreateTransaction`] = t;
    } else if (t.type.endsWith('_ORDER') && created === undefined) {
      created = t.id;
      body[`${prefix}orderCreateTransaction`] = t;
    } else if (t.type === 'ORDER_FILL' && x.orderID === created) {
      body[`${prefix}orderFillTransaction`] = t;
    } else if (
      t.type === 'ORDER_CANCEL' &&
      (x.orderID === created || (created === undefined && x.reason === 'CLIENT_REQUEST_REPLACED'))
    ) {
      body[`${prefix}orderCancelTransaction`] = t;
    }
  }
  if (!prefix) {
    body.relatedTransactionIDs = ids(txs);
    body.lastTransactionID = a.broker.ledger.lastTransactionID;
  }
  return { body, rejected };
};

export const rejectReply = (
  status: number,
  body: Record<string, unknown>,
  rejected: Transaction,
  field = 'order',
): SandboxReply => {
  const reason = (rejected as { rejectReason?: string }).rejectReason ?? 'UNKNOWN';
  body.errorCode = reason;
  body.errorMessage = rejectMessage(reason, field);
  return ok(body, status);
};

export const orderSpec = (a: SandboxAccount, spec: string): Record<string, unknown> => {
  const o = a.findOrder(spec);
  if (!o) throw new HttpError(404, 'The Order specified does not exist', 'NO_SUCH_ORDER');
  return o;
};

/** An order specifier as an order ID when the sandbox knows it (so rejects name the ID, as v20's do). */
export const resolveOrder = (a: SandboxAccount, spec: string): string =>
  (a.findOrder(spec)?.id as string | undefined) ?? spec;

/** The order of a create or replace body, parsed as OANDA reads it (400s name the field). */
export const parseOrder = (instruments: InstrumentRegistry, body: unknown): OrderRequest => {
  const b = objectBody(body, 'the body');
  if (b.order === undefined)
    throw new HttpError(
      400,
      'Invalid request body: field \'order\' is missing (send {"order": {"type": "MARKET", ...}})',
    );
  const r = parseOrderRequest(b.order, 'order');
  // OANDA names the field and nothing else ("Invalid value specified for 'order.instrument'"); the
  // sandbox adds what it expected. No transaction, no ID used.
  if (!r.ok)
    throw new HttpError(400, `Invalid value specified for '${r.error.path}': expected ${r.error.expected}`);
  const instrument = (r.value as { instrument?: unknown }).instrument;
  if (typeof instrument === 'string' && !instruments.has(instrument))
    throw new HttpError(400, "Invalid value specified for 'order.instrument'");
  return r.value;
};

/** Mounts the order routes on `on`. */
export function orderRoutes(c: V3Context, on: On): void {
  const { account, instruments, submit, submitAndWait, intentID } = c;
  on('POST', `${A}/orders`, async (r, [id]) => {
    const a = account(id);
    const request = parseOrder(instruments, r.body);
    const txs = await submitAndWait(a, { kind: 'order', id: intentID(), request });
    const { body, rejected } = orderResponse(a, txs);
    if (rejected) return rejectReply(400, body, rejected);
    const created = body.orderCreateTransaction as Transaction | undefined;
    return ok(
      body,
      201,
      created ? { Location: `${c.baseUrl()}/v3/accounts/${a.id}/orders/${created.id}` } : undefined,
    );
  });
  const ordersList = (r: Req, a: SandboxAccount, pendingOnly: boolean): SandboxReply => {
    let list = pendingOnly ? a.pendingOrders() : a.orders();
    if (!pendingOnly) {
      const state = r.url.searchParams.get('state') ?? 'PENDING';
      if (!['PENDING', 'FILLED', 'TRIGGERED', 'CANCELLED', 'ALL'].includes(state))
        throw new HttpError(
          400,
          `Invalid value specified for 'state': ${state} (PENDING, FILLED, TRIGGERED, CANCELLED or ALL)`,
        );
      if (state !== 'ALL')
        list = list.filter((o) => o.state === state || (state === 'FILLED' && o.state === 'FILLED'));
      const inst = r.url.searchParams.get('instrument');
      if (inst !== null)
        list = list.filter(
          (o) =>
            o.instrument === inst ||
            (o.tradeID !== undefined && a.tradeBySpec(o.tradeID)?.instrument === inst),
        );
      list = filterByIds(list, r.url);
      const { items, link } = pageOf(list, r.url, 500, 50);
      return ok(
        { orders: items, lastTransactionID: a.broker.ledger.lastTransactionID },
        200,
        link ? { Link: link } : undefined,
      );
    }
    return ok({ orders: list, lastTransactionID: a.broker.ledger.lastTransactionID });
  };
  on('GET', `${A}/orders`, (r, [id]) => ordersList(r, account(id), false));
  on('GET', `${A}/pendingOrders`, (r, [id]) => ordersList(r, account(id), true));
  on('GET', `${A}/orders/{spec}`, (_r, [id, spec]) => {
    const a = account(id);
    return ok({ order: orderSpec(a, spec!), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('PUT', `${A}/orders/{spec}`, async (r, [id, spec]) => {
    const a = account(id);
    const old = orderSpec(a, spec!);
    const request = parseOrder(instruments, r.body);
    const txs = await submitAndWait(a, {
      kind: 'replace',
      id: intentID(),
      orderSpecifier: old.id as string,
      request,
    });
    const { body, rejected } = orderResponse(a, txs);
    if (rejected?.type === 'ORDER_CANCEL_REJECT') {
      // The order to replace is no longer pending (filled, cancelled): v20's 404 names the cancel's reject.
      body.orderCancelRejectTransaction = rejected;
      delete body.orderRejectTransaction;
      return rejectReply(404, body, rejected);
    }
    if (rejected) return rejectReply(400, body, rejected);
    const created = body.orderCreateTransaction as Transaction | undefined;
    return ok(
      body,
      201,
      created ? { Location: `${c.baseUrl()}/v3/accounts/${a.id}/orders/${created.id}` } : undefined,
    );
  });
  on('PUT', `${A}/orders/{spec}/cancel`, (_r, [id, spec]) => {
    const a = account(id);
    const txs = submit(a, { kind: 'cancel', id: intentID(), orderSpecifier: resolveOrder(a, spec!) });
    const t = txs[0];
    const last = a.broker.ledger.lastTransactionID;
    if (!t || t.type === 'ORDER_CANCEL_REJECT') {
      const body: Record<string, unknown> = { relatedTransactionIDs: ids(txs), lastTransactionID: last };
      if (t) body.orderCancelRejectTransaction = t;
      return rejectReply(404, body, t ?? ({ rejectReason: 'ORDER_DOESNT_EXIST' } as unknown as Transaction));
    }
    return ok({ orderCancelTransaction: t, relatedTransactionIDs: ids(txs), lastTransactionID: last });
  });
  on('PUT', `${A}/orders/{spec}/clientExtensions`, (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    if (b.clientExtensions === undefined && b.tradeClientExtensions === undefined)
      throw new HttpError(
        400,
        "Invalid request body: give 'clientExtensions' and/or 'tradeClientExtensions'",
      );
    const intent: OrderIntent = {
      kind: 'clientExtensions',
      id: intentID(),
      orderSpecifier: resolveOrder(a, spec!),
      ...(b.clientExtensions !== undefined
        ? { clientExtensions: objectBody(b.clientExtensions, "'clientExtensions'") }
        : {}),
      ...(b.tradeClientExtensions !== undefined
        ? { tradeClientExtensions: objectBody(b.tradeClientExtensions, "'tradeClientExtensions'") }
        : {}),
    };
    const txs = submit(a, intent);
    const t = txs[0]!;
    const last = a.broker.ledger.lastTransactionID;
    if (isReject(t))
      return rejectReply(
        404,
        {
          orderClientExtensionsModifyRejectTransaction: t,
          lastTransactionID: last,
          relatedTransactionIDs: ids(txs),
        },
        t,
      );
    return ok({
      orderClientExtensionsModifyTransaction: t,
      lastTransactionID: last,
      relatedTransactionIDs: ids(txs),
    });
  });
}
