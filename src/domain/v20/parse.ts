import { err, ok, type Result } from '../result.ts';
import { parseRequestTime, parseTime } from '../time.ts';
import type { Account, Position, Trade } from './account.ts';
import type { Instrument } from './instrument.ts';
import type { Order, OrderRequest } from './orders.ts';
import type { Candlestick, CandlesResponse, ClientPrice, PricingHeartbeat } from './pricing.ts';
import type { Transaction, TransactionHeartbeat } from './transactions.ts';

/**
 * Validating parsers for v20 wire objects. They check, they do not transform: a parsed object is
 * the same JSON value, now typed, with decimals still strings. Unknown fields are kept (v20 adds
 * fields over time); known fields are checked wherever they appear, through one table of field
 * parsers keyed by the v20 field name, plus the required fields of each object kind.
 *
 * Errors are values (`Result`) carrying a `V20ParseError` whose `path` names the field, e.g.
 * `orderFillTransaction.tradeOpened.units`.
 */
export class V20ParseError extends Error {
  readonly code = 'V20_PARSE' as const;
  constructor(
    readonly path: string,
    readonly expected: string,
    readonly found: unknown,
  ) {
    super(
      `${path}: expected ${expected}, found ${show(found)} (the v20 definitions in the OpenAPI spec give the field's type)`,
    );
    this.name = 'V20ParseError';
  }
}

function show(x: unknown): string {
  if (x === undefined) return 'nothing (the field is missing)';
  const s = JSON.stringify(x);
  return s === undefined ? String(x) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

type Check = (v: unknown, path: string) => void;
type Obj = Record<string, unknown>;

const fail = (path: string, expected: string, found: unknown): never => {
  throw new V20ParseError(path, expected, found);
};

const DECIMAL = /^[+-]?\d+(\.\d+)?$/;

const str: Check = (v, p) => void (typeof v === 'string' || fail(p, 'a string', v));
const dec: Check = (v, p) =>
  void ((typeof v === 'string' && DECIMAL.test(v)) || fail(p, 'a decimal string such as "1.10450"', v));
const int: Check = (v, p) => void (Number.isInteger(v) || fail(p, 'an integer', v));
const bool: Check = (v, p) => void (typeof v === 'boolean' || fail(p, 'true or false', v));
const time: Check = (v, p) =>
  void (
    (typeof v === 'string' && !Number.isNaN(parseTime(v))) ||
    fail(p, 'an RFC 3339 time or UNIX seconds', v)
  );
/** Request times may omit the zone (read as New York time, as v20 does). */
const requestTime: Check = (v, p) =>
  void (
    (typeof v === 'string' && !Number.isNaN(parseRequestTime(v))) ||
    fail(p, 'an RFC 3339 time or UNIX seconds', v)
  );
const numOrDec: Check = (v, p) =>
  void (
    (typeof v === 'number' && Number.isFinite(v)) ||
    (typeof v === 'string' && DECIMAL.test(v)) ||
    fail(p, 'a number or decimal string', v)
  );
const enumOf = (...values: string[]): Check => {
  const set = new Set(values);
  return (v, p) =>
    void (
      (typeof v === 'string' && set.has(v)) ||
      fail(p, `one of ${values.slice(0, 8).join(', ')}${values.length > 8 ? ', …' : ''}`, v)
    );
};
const arr =
  (c: Check): Check =>
  (v, p) => {
    if (!Array.isArray(v)) fail(p, 'an array', v);
    (v as unknown[]).forEach((x, i) => c(x, `${p}[${i}]`));
  };
const either =
  (...cs: Check[]): Check =>
  (v, p) => {
    let first: unknown;
    for (const c of cs) {
      try {
        c(v, p);
        return;
      } catch (e) {
        first ??= e;
      }
    }
    throw first;
  };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// Enumerations (OpenAPI 3.0.25, the values recorded before v20's GA, and later additions).
const TIME_IN_FORCE = enumOf('GTC', 'GTD', 'GFD', 'FOK', 'IOC');
const POSITION_FILL = enumOf('OPEN_ONLY', 'REDUCE_FIRST', 'REDUCE_ONLY', 'DEFAULT', 'POSITION_DEFAULT');
const TRIGGER = enumOf('DEFAULT', 'INVERSE', 'BID', 'ASK', 'MID', 'TRIGGER_DEFAULT');
const ORDER_TYPES = [
  'MARKET',
  'LIMIT',
  'STOP',
  'MARKET_IF_TOUCHED',
  'TAKE_PROFIT',
  'STOP_LOSS',
  'TRAILING_STOP_LOSS',
  'FIXED_PRICE',
  'GUARANTEED_STOP_LOSS',
];
/** The types a client may request: v20 defines no FixedPriceOrderRequest (FIXED_PRICE orders are OANDA's own). */
const REQUEST_TYPES = ORDER_TYPES.filter((t) => t !== 'FIXED_PRICE');
const GRANULARITY = enumOf(
  'S5',
  'S10',
  'S15',
  'S30',
  'M1',
  'M2',
  'M4',
  'M5',
  'M10',
  'M15',
  'M30',
  'H1',
  'H2',
  'H3',
  'H4',
  'H6',
  'H8',
  'H12',
  'D',
  'W',
  'M',
);
const TRANSACTION_TYPES = [
  'CREATE',
  'CLOSE',
  'REOPEN',
  'CLIENT_CONFIGURE',
  'CLIENT_CONFIGURE_REJECT',
  'TRANSFER_FUNDS',
  'TRANSFER_FUNDS_REJECT',
  'MARKET_ORDER',
  'MARKET_ORDER_REJECT',
  'FIXED_PRICE_ORDER',
  'LIMIT_ORDER',
  'LIMIT_ORDER_REJECT',
  'STOP_ORDER',
  'STOP_ORDER_REJECT',
  'MARKET_IF_TOUCHED_ORDER',
  'MARKET_IF_TOUCHED_ORDER_REJECT',
  'TAKE_PROFIT_ORDER',
  'TAKE_PROFIT_ORDER_REJECT',
  'STOP_LOSS_ORDER',
  'STOP_LOSS_ORDER_REJECT',
  'TRAILING_STOP_LOSS_ORDER',
  'TRAILING_STOP_LOSS_ORDER_REJECT',
  'GUARANTEED_STOP_LOSS_ORDER',
  'GUARANTEED_STOP_LOSS_ORDER_REJECT',
  'ORDER_FILL',
  'ORDER_CANCEL',
  'ORDER_CANCEL_REJECT',
  'ORDER_CLIENT_EXTENSIONS_MODIFY',
  'ORDER_CLIENT_EXTENSIONS_MODIFY_REJECT',
  'TRADE_CLIENT_EXTENSIONS_MODIFY',
  'TRADE_CLIENT_EXTENSIONS_MODIFY_REJECT',
  'MARGIN_CALL_ENTER',
  'MARGIN_CALL_EXTEND',
  'MARGIN_CALL_EXIT',
  'DELAYED_TRADE_CLOSURE',
  'DAILY_FINANCING',
  'DIVIDEND_ADJUSTMENT',
  'RESET_RESETTABLE_PL',
];

/** Required fields of each object kind (beyond what the field table checks when present). */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  Transaction: ['id', 'time', 'type'],
  ORDER_FILL: ['orderID', 'instrument', 'units', 'pl', 'financing', 'accountBalance', 'reason'],
  ORDER_CANCEL: ['orderID', 'reason'],
  MARKET_ORDER: ['instrument', 'units', 'timeInForce', 'positionFill', 'reason'],
  LIMIT_ORDER: ['instrument', 'units', 'price', 'timeInForce', 'positionFill', 'reason'],
  STOP_ORDER: ['instrument', 'units', 'price', 'timeInForce', 'positionFill', 'reason'],
  MARKET_IF_TOUCHED_ORDER: ['instrument', 'units', 'price', 'timeInForce', 'positionFill', 'reason'],
  TAKE_PROFIT_ORDER: ['tradeID', 'price', 'timeInForce', 'reason'],
  STOP_LOSS_ORDER: ['tradeID', 'timeInForce', 'reason'],
  TRAILING_STOP_LOSS_ORDER: ['tradeID', 'distance', 'timeInForce', 'reason'],
  TRANSFER_FUNDS: ['amount'],
  DAILY_FINANCING: ['financing'],
  ORDER_CLIENT_EXTENSIONS_MODIFY: ['orderID'],
  TRADE_CLIENT_EXTENSIONS_MODIFY: ['tradeID'],
  Order: ['id', 'type', 'createTime', 'state'],
  OrderRequest: ['type'],
  LIMIT: ['instrument', 'units', 'price'],
  STOP: ['instrument', 'units', 'price'],
  MARKET_IF_TOUCHED: ['instrument', 'units', 'price'],
  MARKET: ['instrument', 'units'],
  TAKE_PROFIT: ['tradeID', 'price'],
  STOP_LOSS: ['tradeID'],
  TRAILING_STOP_LOSS: ['tradeID', 'distance'],
  Trade: ['id', 'instrument', 'price', 'openTime', 'initialUnits', 'currentUnits', 'realizedPL'],
  TradeReduce: ['tradeID', 'units'],
  TradeOpen: ['tradeID', 'units'],
  Position: ['instrument', 'long', 'short'],
  PositionSide: ['units'],
  Account: ['id', 'currency', 'balance', 'lastTransactionID'],
  Instrument: [
    'name',
    'type',
    'displayName',
    'pipLocation',
    'displayPrecision',
    'tradeUnitsPrecision',
    'minimumTradeSize',
    'maximumTrailingStopDistance',
    'minimumTrailingStopDistance',
    'maximumOrderUnits',
    'marginRate',
  ],
  Candlestick: ['time', 'volume', 'complete'],
  CandlestickData: ['o', 'h', 'l', 'c'],
  ClientPrice: ['bids', 'asks', 'closeoutBid', 'closeoutAsk'],
  PriceBucket: ['price'],
  Heartbeat: ['type', 'time'],
  CandlesResponse: ['instrument', 'granularity', 'candles'],
};

function required(o: Obj, kind: string, path: string): void {
  for (const k of REQUIRED[kind] ?? [])
    if (o[k] === undefined) fail(`${path}.${k}`, `a value (required in ${kind})`, undefined);
}

/** Checks every known field present in `o` with the field table. */
function fields(o: Obj, path: string): void {
  for (const k in o) {
    // Own keys only: '__proto__' or 'constructor' in a request must not find Object.prototype's.
    const c =
      (Object.hasOwn(FIELD, k) ? FIELD[k] : undefined) ??
      (k.endsWith('Transaction') ? transaction : undefined);
    if (c !== undefined) c(o[k], `${path}.${k}`);
  }
}

const object =
  (kind: string): Check =>
  (v, p) => {
    if (!isObj(v)) fail(p, `an object (${kind})`, v);
    required(v as Obj, kind, p);
    fields(v as Obj, p);
  };

const generic: Check = (v, p) => {
  if (!isObj(v)) fail(p, 'an object', v);
  fields(v as Obj, p);
};

const transaction: Check = (v, p) => {
  if (!isObj(v)) fail(p, 'an object (Transaction)', v);
  const o = v as Obj;
  required(o, 'Transaction', p);
  enumOf(...TRANSACTION_TYPES)(o.type, `${p}.type`);
  required(o, o.type as string, p);
  fields(o, p);
};

const order: Check = (v, p) => {
  if (!isObj(v)) fail(p, 'an object (Order)', v);
  const o = v as Obj;
  required(o, 'Order', p);
  enumOf(...ORDER_TYPES)(o.type, `${p}.type`);
  required(o, o.type as string, p);
  fields(o, p);
};

const orderRequest: Check = (v, p) => {
  if (!isObj(v)) fail(p, 'an object (OrderRequest)', v);
  const o = v as Obj;
  required(o, 'OrderRequest', p);
  enumOf(...REQUEST_TYPES)(o.type, `${p}.type`);
  required(o, o.type as string, p);
  fields(o, p);
};

/** A Trade (has `id`) or a TradeReduce/TradeOpen (has `tradeID`): v20 uses the same names for both in different places. */
const tradeLike: Check = (v, p) => {
  if (!isObj(v)) fail(p, 'an object (Trade or TradeReduce)', v);
  const o = v as Obj;
  required(o, o.id !== undefined ? 'Trade' : 'TradeReduce', p);
  fields(o, p);
};

const candlestick = object('Candlestick');
const clientPrice = object('ClientPrice');
const positionSide = object('PositionSide');

/** Parsers of v20 field names, wherever they appear. */
const FIELD: Readonly<Record<string, Check>> = {
  // identity and time
  id: str,
  accountID: str,
  batchID: str,
  requestID: str,
  userID: either(int, str),
  orderID: str,
  tradeID: str,
  clientOrderID: str,
  clientTradeID: str,
  lastTransactionID: str,
  replacesOrderID: str,
  replacedByOrderID: str,
  cancellingTransactionID: str,
  fillingTransactionID: str,
  orderFillTransactionID: str,
  tradeOpenedID: str,
  tradeReducedID: str,
  sourceTransactionID: str,
  time: time,
  createTime: time,
  openTime: time,
  closeTime: time,
  filledTime: time,
  cancelledTime: time,
  triggeredTime: time,
  gtdTime: requestTime,
  createdTime: time,
  timestamp: time,
  // order fields
  instrument: str,
  units: either(dec, enumOf('ALL', 'NONE')),
  price: dec,
  priceBound: dec,
  distance: dec,
  trailingStopValue: dec,
  initialMarketPrice: dec,
  timeInForce: TIME_IN_FORCE,
  positionFill: POSITION_FILL,
  triggerCondition: TRIGGER,
  reason: str,
  partialFill: str,
  rejectReason: str,
  requestedUnits: dec,
  guaranteed: bool,
  clientExtensions: generic,
  tradeClientExtensions: generic,
  clientExtensionsModify: generic,
  tradeClientExtensionsModify: generic,
  takeProfitOnFill: generic,
  stopLossOnFill: generic,
  trailingStopLossOnFill: generic,
  guaranteedStopLossOnFill: generic,
  takeProfit: generic,
  stopLoss: generic,
  trailingStopLoss: generic,
  guaranteedStopLoss: generic,
  tradeClose: generic,
  longPositionCloseout: generic,
  shortPositionCloseout: generic,
  marginCloseout: generic,
  delayedTradeClose: generic,
  takeProfitOrder: order,
  stopLossOrder: order,
  trailingStopLossOrder: order,
  guaranteedStopLossOrder: order,
  tradeClosedIDs: arr(str),
  tradeIDs: either(arr(str), str),
  relatedTransactionIDs: arr(str),
  pages: arr(str),
  // money
  pl: dec,
  unrealizedPL: dec,
  realizedPL: dec,
  resettablePL: dec,
  accountBalance: dec,
  balance: dec,
  amount: dec,
  NAV: dec,
  halfSpreadCost: dec,
  guaranteedExecutionFee: dec,
  marginUsed: dec,
  marginAvailable: dec,
  positionValue: dec,
  marginCloseoutUnrealizedPL: dec,
  marginCloseoutNAV: dec,
  marginCloseoutMarginUsed: dec,
  marginCloseoutPercent: dec,
  marginCloseoutPositionValue: dec,
  withdrawalLimit: dec,
  marginCallMarginUsed: dec,
  marginCallPercent: dec,
  averagePrice: dec,
  initialUnits: dec,
  currentUnits: dec,
  initialMarginRequired: dec,
  fullVWAP: dec,
  dividendAdjustment: dec,
  gainQuoteHomeConversionFactor: dec,
  lossQuoteHomeConversionFactor: dec,
  marginRate: dec,
  financing: either(dec, generic),
  commission: either(dec, generic),
  // nested objects
  tradeOpened: object('TradeOpen'),
  tradeReduced: object('TradeReduce'),
  tradesClosed: arr(tradeLike),
  tradesOpened: arr(tradeLike),
  tradesReduced: arr(tradeLike),
  trades: arr(tradeLike),
  trade: tradeLike,
  order: order,
  orders: arr(order),
  ordersCreated: arr(order),
  ordersCancelled: arr(order),
  ordersFilled: arr(order),
  ordersTriggered: arr(order),
  positions: arr(object('Position')),
  position: object('Position'),
  long: either(dec, positionSide),
  short: either(dec, positionSide),
  transactions: arr(transaction),
  transaction: transaction,
  account: object('Account'),
  accounts: arr(generic),
  changes: generic,
  state: either(
    enumOf('PENDING', 'FILLED', 'TRIGGERED', 'CANCELLED', 'OPEN', 'CLOSED', 'CLOSE_WHEN_TRADEABLE'),
    generic,
  ),
  instruments: arr(object('Instrument')),
  candles: arr(candlestick),
  granularity: GRANULARITY,
  volume: int,
  complete: bool,
  bid: object('CandlestickData'),
  ask: object('CandlestickData'),
  mid: object('CandlestickData'),
  o: dec,
  h: dec,
  l: dec,
  c: dec,
  prices: arr(clientPrice),
  fullPrice: clientPrice,
  bids: arr(object('PriceBucket')),
  asks: arr(object('PriceBucket')),
  closeoutBid: dec,
  closeoutAsk: dec,
  liquidity: numOrDec,
  tradeable: bool,
  quoteHomeConversionFactors: generic,
  positiveUnits: dec,
  negativeUnits: dec,
  unitsAvailable: generic,
  pipLocation: int,
  displayPrecision: int,
  tradeUnitsPrecision: int,
  minimumTradeSize: dec,
  maximumTrailingStopDistance: dec,
  minimumTrailingStopDistance: dec,
  maximumPositionSize: dec,
  maximumOrderUnits: dec,
  count: int,
  pageSize: int,
  openTradeCount: int,
  openPositionCount: int,
  pendingOrderCount: int,
  hedgingEnabled: bool,
  errorMessage: str,
  errorCode: str,
  longCountPercent: dec,
  shortCountPercent: dec,
  bucketWidth: dec,
  buckets: arr(generic),
};

function run<T>(check: Check, v: unknown, path: string): Result<T, V20ParseError> {
  try {
    check(v, path);
    return ok(v as T);
  } catch (e) {
    if (e instanceof V20ParseError) return err(e);
    throw e;
  }
}

export const parseTransaction = (v: unknown, path = 'transaction'): Result<Transaction, V20ParseError> =>
  run(transaction, v, path);
export const parseOrder = (v: unknown, path = 'order'): Result<Order, V20ParseError> => run(order, v, path);
export const parseOrderRequest = (v: unknown, path = 'order'): Result<OrderRequest, V20ParseError> =>
  run(orderRequest, v, path);
export const parseTrade = (v: unknown, path = 'trade'): Result<Trade, V20ParseError> =>
  run(object('Trade'), v, path);
export const parsePosition = (v: unknown, path = 'position'): Result<Position, V20ParseError> =>
  run(object('Position'), v, path);
export const parseAccount = (v: unknown, path = 'account'): Result<Account, V20ParseError> =>
  run(object('Account'), v, path);
export const parseInstrument = (v: unknown, path = 'instrument'): Result<Instrument, V20ParseError> =>
  run(object('Instrument'), v, path);
export const parseCandlestick = (v: unknown, path = 'candle'): Result<Candlestick, V20ParseError> =>
  run(candlestick, v, path);
export const parseCandlesResponse = (v: unknown, path = 'response'): Result<CandlesResponse, V20ParseError> =>
  run(object('CandlesResponse'), v, path);
export const parseClientPrice = (v: unknown, path = 'price'): Result<ClientPrice, V20ParseError> =>
  run(clientPrice, v, path);

/** Any v20 response body: every known field is checked wherever it appears (transactions, orders, trades, …). */
export const parseResponse = (v: unknown, path = 'response'): Result<Obj, V20ParseError> =>
  run(generic, v, path);

function fromLine(line: string | unknown, path: string): unknown {
  if (typeof line !== 'string') return line;
  try {
    return JSON.parse(line);
  } catch {
    throw new V20ParseError(path, 'one JSON object per line', line);
  }
}

/** One line of the pricing stream: a PRICE or a HEARTBEAT. Accepts the raw text line or a parsed object. */
export function parsePricingStreamLine(
  line: string | unknown,
  path = 'line',
): Result<ClientPrice | PricingHeartbeat, V20ParseError> {
  try {
    const v = fromLine(line, path);
    if (isObj(v) && v.type === 'HEARTBEAT') return run(object('Heartbeat'), v, path);
    if (isObj(v) && v.type !== undefined && v.type !== 'PRICE')
      fail(`${path}.type`, 'PRICE or HEARTBEAT', v.type);
    return run(clientPrice, v, path);
  } catch (e) {
    if (e instanceof V20ParseError) return err(e);
    throw e;
  }
}

/** One line of the transaction stream: a Transaction or a HEARTBEAT. */
export function parseTransactionStreamLine(
  line: string | unknown,
  path = 'line',
): Result<Transaction | TransactionHeartbeat, V20ParseError> {
  try {
    const v = fromLine(line, path);
    if (isObj(v) && v.type === 'HEARTBEAT') {
      const r = run<TransactionHeartbeat>(object('Heartbeat'), v, path);
      if (r.ok) str((v as Obj).lastTransactionID, `${path}.lastTransactionID`);
      return r;
    }
    return run(transaction, v, path);
  } catch (e) {
    if (e instanceof V20ParseError) return err(e);
    throw e;
  }
}
