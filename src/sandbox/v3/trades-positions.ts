/** The /v3 trade and position routes: list, get, close, client extensions, a trade's dependent orders. */
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { SandboxAccount } from '../account.ts';
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
  units,
  type On,
  type Req,
  type V3Context,
} from './context.ts';
import { orderResponse, rejectReply } from './orders.ts';

/** Mounts the trade and position routes on `on`. */
export function tradePositionRoutes(c: V3Context, on: On): void {
  const { account, instruments, submit, submitAndWait, intentID } = c;
  const tradesList = (r: Req, a: SandboxAccount, openOnly: boolean): SandboxReply => {
    let list = (openOnly ? a.openTrades() : a.allTrades()) as ({ id: string } & Record<string, unknown>)[];
    if (openOnly) return ok({ trades: list, lastTransactionID: a.broker.ledger.lastTransactionID });
    const state = r.url.searchParams.get('state') ?? 'OPEN';
    if (!['OPEN', 'CLOSED', 'CLOSE_WHEN_TRADEABLE', 'ALL'].includes(state))
      throw new HttpError(
        400,
        `Invalid value specified for 'state': ${state} (OPEN, CLOSED, CLOSE_WHEN_TRADEABLE or ALL)`,
      );
    if (state !== 'ALL') list = list.filter((t) => t.state === state);
    const inst = r.url.searchParams.get('instrument');
    if (inst !== null) list = list.filter((t) => t.instrument === inst);
    list = filterByIds(list, r.url);
    const { items, link } = pageOf(list, r.url, 500, 50);
    return ok(
      { trades: items, lastTransactionID: a.broker.ledger.lastTransactionID },
      200,
      link ? { Link: link } : undefined,
    );
  };
  on('GET', `${A}/trades`, (r, [id]) => tradesList(r, account(id), false));
  on('GET', `${A}/openTrades`, (r, [id]) => tradesList(r, account(id), true));
  const tradeSpec = (a: SandboxAccount, spec: string): Record<string, unknown> => {
    const t = a.tradeBySpec(spec);
    if (!t) throw new HttpError(404, 'The Trade specified does not exist', 'NO_SUCH_TRADE');
    return t;
  };
  on('GET', `${A}/trades/{spec}`, (_r, [id, spec]) => {
    const a = account(id);
    return ok({ trade: tradeSpec(a, spec!), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('PUT', `${A}/trades/{spec}/close`, async (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    const u = units(b.units, 'units', false) ?? 'ALL';
    const s = spec!;
    if (!a.findTrade(s)) throw new HttpError(404, 'The Trade specified does not exist', 'NO_SUCH_TRADE');
    const txs = await submitAndWait(a, { kind: 'closeTrade', id: intentID(), tradeSpecifier: s, units: u });
    const { body, rejected } = orderResponse(a, txs);
    if (rejected) return rejectReply(400, body, rejected);
    return ok(body);
  });
  on('PUT', `${A}/trades/{spec}/clientExtensions`, (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    if (b.clientExtensions === undefined)
      throw new HttpError(400, "Invalid request body: field 'clientExtensions' is missing");
    const txs = submit(a, {
      kind: 'clientExtensions',
      id: intentID(),
      tradeSpecifier: spec!,
      tradeClientExtensions: objectBody(b.clientExtensions, "'clientExtensions'"),
    });
    const t = txs[0]!;
    const last = a.broker.ledger.lastTransactionID;
    if (isReject(t))
      return rejectReply(
        404,
        {
          tradeClientExtensionsModifyRejectTransaction: t,
          lastTransactionID: last,
          relatedTransactionIDs: ids(txs),
        },
        t,
      );
    return ok({
      tradeClientExtensionsModifyTransaction: t,
      lastTransactionID: last,
      relatedTransactionIDs: ids(txs),
    });
  });
  on('PUT', `${A}/trades/{spec}/orders`, (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    const s = spec!;
    if (!a.findTrade(s)) throw new HttpError(404, 'The Trade specified does not exist', 'NO_SUCH_TRADE');
    const dep = (k: string): Record<string, unknown> | null | undefined => {
      const v = b[k];
      if (v === undefined || v === null) return v as null | undefined;
      return objectBody(v, `'${k}'`);
    };
    const intent = {
      kind: 'tradeOrders',
      id: intentID(),
      tradeSpecifier: s,
      ...(b.takeProfit !== undefined ? { takeProfit: dep('takeProfit') } : {}),
      ...(b.stopLoss !== undefined ? { stopLoss: dep('stopLoss') } : {}),
      ...(b.trailingStopLoss !== undefined ? { trailingStopLoss: dep('trailingStopLoss') } : {}),
      ...(b.guaranteedStopLoss !== undefined ? { guaranteedStopLoss: dep('guaranteedStopLoss') } : {}),
    } as OrderIntent;
    const txs = submit(a, intent);
    const body: Record<string, unknown> = {};
    let rejected: Transaction | undefined;
    const names: Record<string, string> = {
      TAKE_PROFIT: 'takeProfit',
      STOP_LOSS: 'stopLoss',
      TRAILING_STOP_LOSS: 'trailingStopLoss',
      GUARANTEED_STOP_LOSS: 'guaranteedStopLoss',
    };
    const createdType = new Map<string, string>();
    for (const t of txs) {
      const x = t as Transaction & { orderID?: string };
      const m1 = /^(TAKE_PROFIT|STOP_LOSS|TRAILING_STOP_LOSS|GUARANTEED_STOP_LOSS)_ORDER(_REJECT)?$/.exec(
        t.type,
      );
      if (m1) {
        const n = names[m1[1]!]!;
        if (m1[2]) {
          rejected ??= t;
          body[`${n}OrderRejectTransaction`] = t;
        } else {
          body[`${n}OrderTransaction`] = t;
          createdType.set(t.id, n);
        }
      } else if (t.type === 'ORDER_CANCEL') {
        const o = a.findOrder(x.orderID ?? '');
        const n = o ? names[o.type] : undefined;
        if (n) body[`${n}OrderCancelTransaction`] = t;
      } else if (t.type === 'ORDER_FILL') {
        const n = createdType.get(x.orderID ?? '');
        if (n) body[`${n}OrderFillTransaction`] = t;
      }
    }
    body.relatedTransactionIDs = ids(txs);
    body.lastTransactionID = a.broker.ledger.lastTransactionID;
    // The refused field is under the dependent order's key of the request (takeProfit.price …).
    if (rejected)
      return rejectReply(
        400,
        body,
        rejected,
        names[/^[A-Z_]+?(?=_ORDER_REJECT$)/.exec(rejected.type)?.[0] ?? ''] ?? 'order',
      );
    return ok(body);
  });

  // Positions
  on('GET', `${A}/positions`, (_r, [id]) => {
    const a = account(id);
    return ok({ positions: a.positions(false), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/openPositions`, (_r, [id]) => {
    const a = account(id);
    return ok({ positions: a.positions(true), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/positions/{instrument}`, (_r, [id, inst]) => {
    const a = account(id);
    if (!instruments.has(inst!))
      throw new HttpError(400, `Invalid value specified for 'instrument': ${inst}`, 'INVALID_INSTRUMENT');
    return ok({ position: a.position(inst!), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('PUT', `${A}/positions/{instrument}/close`, async (r, [id, inst]) => {
    const a = account(id);
    if (!instruments.has(inst!))
      throw new HttpError(400, `Invalid value specified for 'instrument': ${inst}`, 'INVALID_INSTRUMENT');
    const b = objectBody(r.body, 'the body');
    const longUnits = units(b.longUnits, 'longUnits', true);
    const shortUnits = units(b.shortUnits, 'shortUnits', true);
    const intent: OrderIntent = {
      kind: 'closePosition',
      id: intentID(),
      instrument: inst!,
      ...(longUnits !== undefined ? { longUnits } : {}),
      ...(shortUnits !== undefined ? { shortUnits } : {}),
    };
    const txs = await submitAndWait(a, intent);
    const body: Record<string, unknown> = {};
    let rejected: Transaction | undefined;
    const sideOf = new Map<string, 'long' | 'short'>();
    for (const t of txs) {
      const x = t as Transaction & {
        orderID?: string;
        longPositionCloseout?: unknown;
        shortPositionCloseout?: unknown;
      };
      if (isReject(t)) {
        // Under the side it refuses (an incomplete request names neither side: under long).
        rejected ??= t;
        body[
          x.shortPositionCloseout !== undefined ? 'shortOrderRejectTransaction' : 'longOrderRejectTransaction'
        ] = t;
      } else if (t.type === 'MARKET_ORDER') {
        const side = x.longPositionCloseout !== undefined ? 'long' : 'short';
        sideOf.set(t.id, side);
        body[`${side}OrderCreateTransaction`] = t;
      } else if (t.type === 'ORDER_FILL' && sideOf.has(x.orderID ?? '')) {
        body[`${sideOf.get(x.orderID!)}OrderFillTransaction`] = t;
      } else if (t.type === 'ORDER_CANCEL' && sideOf.has(x.orderID ?? '')) {
        body[`${sideOf.get(x.orderID!)}OrderCancelTransaction`] = t;
      }
    }
    body.relatedTransactionIDs = ids(txs);
    body.lastTransactionID = a.broker.ledger.lastTransactionID;
    if (rejected) return rejectReply(400, body, rejected);
    // v20 declares a Location header (the position just closed out) on this 200.
    return ok(body, 200, { Location: `${c.baseUrl()}/v3/accounts/${a.id}/positions/${inst}` });
  });
}
