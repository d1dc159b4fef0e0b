/**
 * The legacy calls that change orders and trades (create, change an order; change a trade's take
 * profit, stop loss and trailing stop): form fields into the v20 intent the simulator takes, and its
 * transactions back into the legacy answer.
 */
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { SandboxAccount } from '../account.ts';
import type { SandboxReply } from '../route.ts';
import {
  LegacyError,
  expiryTime,
  failure,
  isReject,
  number,
  v20Order,
  type LegacyContext,
  type Obj,
} from './common.ts';
import {
  LEGACY_ORDER_TYPES,
  legacyAccountID,
  legacyOrder,
  legacyTrade,
  num,
  type LegacyOrderIDs,
} from './shapes.ts';

/** What the order and trade calls need of the legacy route: its context, the legacy order IDs per account, and its look-ups. */
export interface LegacyEnv {
  readonly ctx: LegacyContext;
  readonly ids: ReadonlyMap<string, LegacyOrderIDs>;
  /** A fresh number of the route (intent IDs, history file names). */
  nextSeq(): number;
  /** A fresh intent ID (`legacy-N`). */
  nextIntentID(): string;
  /** The pending legacy order of a legacy ID (404 otherwise). */
  pendingView(a: SandboxAccount, legacyID: string): Obj;
  /** The open trade of an ID (404 otherwise), as the v20 trade JSON. */
  openTrade(a: SandboxAccount, id: string): Obj;
}

/** POST /v1/accounts/:account_id/orders: a legacy order (form fields) as a v20 order request through the simulator. */
export function createOrder(env: LegacyEnv, a: SandboxAccount, f: Map<string, string>): SandboxReply {
  const { ctx, ids } = env;
  const missing = ['instrument', 'units', 'side', 'type'].filter((k) => !f.has(k));
  const type = f.get('type') ?? '';
  const v20Type = LEGACY_ORDER_TYPES[type];
  if (f.has('type') && v20Type === undefined)
    throw new LegacyError(
      400,
      `Invalid or malformed argument: type=${type} (market, limit, stop or marketIfTouched)`,
      'INVALID_ARGUMENT',
    );
  if (type !== 'market') for (const k of ['price', 'expiry']) if (!f.has(k)) missing.push(k);
  if (missing.length > 0)
    throw new LegacyError(
      400,
      `Missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
      'MISSING_ARGUMENT',
    );
  const side = f.get('side');
  if (side !== 'buy' && side !== 'sell')
    throw new LegacyError(
      400,
      `Invalid or malformed argument: side=${side} (buy or sell)`,
      'INVALID_ARGUMENT',
    );
  const instrument = f.get('instrument')!;
  if (!ctx.instruments.has(instrument))
    throw new LegacyError(
      400,
      `Invalid or malformed argument: instrument=${instrument} is not a known instrument`,
      'INVALID_INSTRUMENT',
    );
  const units = number(f, 'units', { min: 1, integer: true })!;
  // The simulator would hold the order until the first price (and fill it then); a legacy client
  // waits for its answer, so the order is refused instead of left in flight.
  if (!a.broker.quotes.has(instrument))
    throw new LegacyError(
      400,
      `No price for ${instrument} yet: the sandbox has not seen a tick of it (replay starts it; with --manual push one through POST /sandbox/prices)`,
      'MARKET_HALTED',
    );
  const req: Obj = {
    type: v20Type,
    instrument,
    units: String(side === 'sell' ? -units : units),
    positionFill: 'DEFAULT',
  };
  if (type === 'market') req.timeInForce = 'FOK';
  else {
    req.price = String(number(f, 'price', { min: 0 }));
    req.timeInForce = 'GTD';
    req.gtdTime = expiryTime(f.get('expiry')!);
    if (type !== 'limit') req.triggerCondition = 'DEFAULT';
  }
  applyOrderFields(env, req, instrument, side === 'sell' ? -1 : 1, f);
  const txs = ctx.submit(a, { kind: 'order', id: env.nextIntentID(), request: v20Order(req) });
  const created = txs.find((t) => !isReject(t) && t.type.endsWith('_ORDER')) as
    (Transaction & Obj) | undefined;
  const err = failure(txs, created?.id);
  if (err || !created) throw err ?? new LegacyError(400, 'The order was not accepted');
  if (type === 'market') {
    const fill = txs.find(
      (t) => t.type === 'ORDER_FILL' && (t as { orderID?: string }).orderID === created.id,
    ) as (Transaction & Obj) | undefined;
    if (!fill)
      throw new LegacyError(
        400,
        'The market order did not fill (no price for the instrument yet?)',
        'ORDER_NOT_FILLED',
      );
    const opened = fill.tradeOpened as Obj | undefined;
    const reduced = fill.tradeReduced as Obj | undefined;
    const closedSide = Number(fill.units) > 0 ? 'sell' : 'buy';
    const trade = opened ? a.findTrade(opened.tradeID as string) : undefined;
    const t = trade ? legacyTrade(ctx.instruments, a.tradeJSON(trade)) : undefined;
    return {
      status: 200,
      body: {
        instrument,
        time: fill.time,
        price: num(fill.price),
        tradeOpened: opened
          ? {
              id: Number(opened.tradeID),
              units: Math.abs(Number(opened.units)),
              side,
              takeProfit: t?.takeProfit ?? 0,
              stopLoss: t?.stopLoss ?? 0,
              trailingStop: t?.trailingStop ?? 0,
            }
          : {},
        tradesClosed: ((fill.tradesClosed as Obj[] | undefined) ?? []).map((c) => ({
          id: Number(c.tradeID),
          units: Math.abs(Number(c.units)),
          side: closedSide,
        })),
        tradeReduced: reduced
          ? {
              id: Number(reduced.tradeID),
              units: Math.abs(Number(reduced.units)),
              side: closedSide,
              pl: num(reduced.realizedPL),
              interest: num(reduced.financing),
            }
          : {},
      },
    };
  }
  const o = a.findOrder(created.id);
  const view = legacyOrder(
    ctx.instruments,
    ids.get(a.id)!,
    o ?? { ...created, createTime: created.time, type: v20Type },
  );
  const { instrument: _i, time: _t, price: _p, type: _ty, ...opened } = view;
  return {
    status: 201,
    headers: {
      Location: `${ctx.baseUrl()}/v1/accounts/${legacyAccountID(a.id)}/orders/${view.id as number}`,
    },
    body: { instrument, time: created.time, price: view.price, orderOpened: opened },
  };
}

/** Sets the optional order fields given (0 removes one): bounds, take profit, stop loss, trailing stop. */
function applyOrderFields(
  env: LegacyEnv,
  req: Obj,
  instrument: string,
  sign: number,
  f: Map<string, string>,
): void {
  const { ctx } = env;
  const inst = ctx.instruments.get(instrument);
  const bound = sign > 0 ? 'upperBound' : 'lowerBound';
  const b = number(f, bound);
  if (b !== undefined) {
    if (req.type === 'LIMIT') {
      if (b !== 0)
        throw new LegacyError(
          400,
          `Invalid argument: ${bound} is not supported on a limit order by the sandbox (v20 limit orders have no price bound)`,
          'INVALID_ARGUMENT',
        );
    } else if (b === 0) delete req.priceBound;
    else req.priceBound = String(b);
  }
  const other = sign > 0 ? 'lowerBound' : 'upperBound';
  if (number(f, other) !== undefined && number(f, other) !== 0)
    throw new LegacyError(
      400,
      `Invalid argument: ${other} does not apply to a ${sign > 0 ? 'buy' : 'sell'} (a ${sign > 0 ? 'buy' : 'sell'} is bounded by ${bound})`,
      'INVALID_ARGUMENT',
    );
  const tp = number(f, 'takeProfit');
  if (tp !== undefined) {
    if (tp === 0) delete req.takeProfitOnFill;
    else req.takeProfitOnFill = { price: String(tp) };
  }
  const sl = number(f, 'stopLoss');
  if (sl !== undefined) {
    if (sl === 0) delete req.stopLossOnFill;
    else req.stopLossOnFill = { price: String(sl) };
  }
  const ts = number(f, 'trailingStop');
  if (ts !== undefined) {
    if (Math.round(ts * 10) !== ts * 10)
      throw new LegacyError(
        400,
        `Invalid or malformed argument: trailingStop=${f.get('trailingStop')} (pips, at most one decimal)`,
        'INVALID_ARGUMENT',
      );
    if (ts === 0) delete req.trailingStopLossOnFill;
    else req.trailingStopLossOnFill = { distance: inst.price(ts * inst.pip) };
  }
}

/** PATCH /v1/accounts/:account_id/orders/:order_id: the changed fields as a v20 replacement of the pending order. */
export function patchOrder(
  env: LegacyEnv,
  a: SandboxAccount,
  legacyID: string,
  f: Map<string, string>,
): SandboxReply {
  const { ctx, ids } = env;
  const allowed = [
    'units',
    'price',
    'expiry',
    'lowerBound',
    'upperBound',
    'stopLoss',
    'takeProfit',
    'trailingStop',
  ];
  for (const k of f.keys())
    if (!allowed.includes(k))
      throw new LegacyError(
        400,
        `Invalid argument: '${k}' cannot be changed (give ${allowed.join(', ')})`,
        'INVALID_ARGUMENT',
      );
  const o = env.pendingView(a, legacyID);
  const sign = Number(o.units) < 0 ? -1 : 1;
  const req: Obj = {};
  for (const k of [
    'type',
    'instrument',
    'units',
    'price',
    'timeInForce',
    'gtdTime',
    'positionFill',
    'triggerCondition',
    'priceBound',
    'takeProfitOnFill',
    'stopLossOnFill',
    'trailingStopLossOnFill',
    'guaranteedStopLossOnFill',
    'clientExtensions',
    'tradeClientExtensions',
  ]) {
    if (o[k] !== undefined) req[k] = o[k];
  }
  const units = number(f, 'units', { min: 1, integer: true });
  if (units !== undefined) req.units = String(sign * units);
  const price = number(f, 'price');
  if (price !== undefined) req.price = String(price);
  const expiry = f.get('expiry');
  if (expiry !== undefined) {
    req.timeInForce = 'GTD';
    req.gtdTime = expiryTime(expiry);
  }
  applyOrderFields(env, req, o.instrument as string, sign, f);
  if (f.size > 0) {
    const txs = ctx.submit(a, {
      kind: 'replace',
      id: env.nextIntentID(),
      orderSpecifier: o.id as string,
      request: v20Order(req),
    });
    const err = failure(txs);
    if (err) throw err;
  }
  return { status: 200, body: legacyOrder(ctx.instruments, ids.get(a.id)!, env.pendingView(a, legacyID)) };
}

/** PATCH /v1/accounts/:account_id/trades/:trade_id: take profit, stop loss and trailing stop as the trade's dependent orders. */
export function patchTrade(
  env: LegacyEnv,
  a: SandboxAccount,
  id: string,
  f: Map<string, string>,
): SandboxReply {
  const { ctx } = env;
  const allowed = ['stopLoss', 'takeProfit', 'trailingStop'];
  for (const k of f.keys())
    if (!allowed.includes(k))
      throw new LegacyError(
        400,
        `Invalid argument: '${k}' cannot be changed on a trade (give ${allowed.join(', ')})`,
        'INVALID_ARGUMENT',
      );
  const t = env.openTrade(a, id);
  const inst = ctx.instruments.get(t.instrument as string);
  const intent: {
    -readonly [K in keyof Extract<OrderIntent, { kind: 'tradeOrders' }>]: Extract<
      OrderIntent,
      { kind: 'tradeOrders' }
    >[K];
  } = { kind: 'tradeOrders', id: env.nextIntentID(), tradeSpecifier: t.id as string };
  const tp = number(f, 'takeProfit');
  if (tp !== undefined && (tp !== 0 || t.takeProfitOrder))
    intent.takeProfit = tp === 0 ? null : { price: String(tp) };
  const sl = number(f, 'stopLoss');
  if (sl !== undefined && (sl !== 0 || t.stopLossOrder))
    intent.stopLoss = sl === 0 ? null : { price: String(sl) };
  const ts = number(f, 'trailingStop');
  if (ts !== undefined) {
    if (Math.round(ts * 10) !== ts * 10)
      throw new LegacyError(
        400,
        `Invalid or malformed argument: trailingStop=${f.get('trailingStop')} (pips, at most one decimal)`,
        'INVALID_ARGUMENT',
      );
    if (ts !== 0 || t.trailingStopLossOrder)
      intent.trailingStopLoss = ts === 0 ? null : { distance: inst.price(ts * inst.pip) };
  }
  if (
    intent.takeProfit !== undefined ||
    intent.stopLoss !== undefined ||
    intent.trailingStopLoss !== undefined
  ) {
    const err = failure(ctx.submit(a, intent as OrderIntent));
    if (err) throw err;
  }
  return { status: 200, body: legacyTrade(ctx.instruments, env.openTrade(a, id)) };
}
