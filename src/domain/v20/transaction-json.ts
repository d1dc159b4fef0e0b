/**
 * The JSON text of a v20 transaction, byte for byte what `JSON.stringify(tx)` writes:
 * transactions.jsonl gets one line per transaction, and writing a backtest's transactions with
 * JSON.stringify cost about 4 µs a fill, 2.3 µs a market order, 1.5 µs an on-fill order and 0.9 µs
 * a cancel. The simulator's ORDER_FILL, ORDER_CANCEL, MARKET_ORDER and on-fill TAKE_PROFIT /
 * STOP_LOSS / TRAILING_STOP_LOSS / GUARANTEED_STOP_LOSS orders are written from one template each,
 * in their key order, once the object is checked to have exactly those keys in that order and
 * values of the kinds the template writes. Every other transaction, and any that fails a check
 * (another key order, a string JSON must escape outside client extensions, a `toJSON`, a number
 * where a string was expected...), is written by JSON.stringify itself, so the text is always its.
 */

/** Whether `s` needs no escape in JSON (no quote, backslash, control character or surrogate). */
function plain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/**
 * The fast path: the commonest transactions of a backtest, each written from its fields as one
 * template, after checking that the object has exactly the keys the template writes, in its order
 * (`keysIn`), and that every value is of the kind the template writes (`str`, `num`: a value that
 * is not sets `odd`, and the transaction goes to the general writer instead).
 */
let odd = false;
/** The last plain string seen in each slot: a run's account ID, a batch's time and ID repeat, and are checked once. */
const seen: string[] = new Array<string>(64).fill('');

/** `v` when it is a string JSON writes as `"v"`; else marks the transaction odd. */
function str(v: unknown, slot: number): unknown {
  if (v === seen[slot]) return v; // a string (every slot holds one)
  if (typeof v !== 'string' || !plain(v)) {
    odd = true;
    return '';
  }
  seen[slot] = v;
  return v;
}

/** `v` when it is a finite number (JSON writes its String); else marks the transaction odd. */
function num(v: unknown): unknown {
  if (typeof v !== 'number' || !Number.isFinite(v)) odd = true;
  return v;
}

/**
 * A part the templates do not know (client extensions, a part of another shape): its own JSON
 * text, which is its text inside the transaction unless it has a `toJSON` (called with its key
 * there) or JSON leaves it out (odd then).
 */
function any(v: unknown): string {
  if (typeof v !== 'object' || v === null || typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    odd = true;
    return '';
  }
  return JSON.stringify(v);
}

/**
 * Whether `o` is a plain object whose enumerable keys are `keys` in order, each of those marked in
 * `optional` present or not (and no `toJSON`, even one JSON would find and for-in would not): -1 when not, else a bit per key present. A template writes an optional
 * key when its bit is set and its value is not undefined (JSON leaves undefined out).
 */
function keysIn(o: object, keys: readonly string[], optional: number): number {
  if (Object.getPrototypeOf(o) !== Object.prototype || (o as { toJSON?: unknown }).toJSON !== undefined)
    return -1;
  let j = 0;
  let present = 0;
  for (const k in o) {
    while (k !== keys[j]) {
      if (j >= keys.length || (optional & (1 << j)) === 0) return -1;
      j++;
    }
    present |= 1 << j;
    j++;
  }
  for (; j < keys.length; j++) if ((optional & (1 << j)) === 0) return -1;
  return present;
}

/** A bit per optional key of `keys`. */
function optionalOf(keys: readonly string[], names: readonly string[]): number {
  let bits = 0;
  for (const n of names) bits |= 1 << keys.indexOf(n);
  return bits;
}

// A market order halted or otherwise cancelled at once carries its client order ID after the reason.
const CANCEL_KEYS = [
  'type',
  'orderID',
  'reason',
  'clientOrderID',
  'id',
  'time',
  'userID',
  'accountID',
  'batchID',
];
const CANCEL_CID = optionalOf(CANCEL_KEYS, ['clientOrderID']);

function cancelJson(t: Record<string, unknown>): string | undefined {
  const has = keysIn(t, CANCEL_KEYS, CANCEL_CID);
  if (has < 0) return undefined;
  const cid =
    (has & CANCEL_CID) === 0 || t.clientOrderID === undefined
      ? ''
      : `,"clientOrderID":"${str(t.clientOrderID, 6)}"`;
  return `{"type":"ORDER_CANCEL","orderID":"${str(t.orderID, 0)}","reason":"${str(t.reason, 1)}"${cid},"id":"${str(t.id, 2)}","time":"${str(t.time, 3)}","userID":${num(t.userID)},"accountID":"${str(t.accountID, 4)}","batchID":"${str(t.batchID, 5)}"}`;
}

const FILL_KEYS = [
  'type',
  'orderID',
  'instrument',
  'units',
  'requestedUnits',
  'price',
  'fullVWAP',
  'fullPrice',
  'reason',
  'pl',
  'financing',
  'commission',
  'guaranteedExecutionFee',
  'accountBalance',
  'gainQuoteHomeConversionFactor',
  'lossQuoteHomeConversionFactor',
  'halfSpreadCost',
  'clientOrderID',
  'tradeOpened',
  'tradesClosed',
  'tradeReduced',
  'id',
  'time',
  'userID',
  'accountID',
  'batchID',
];
const FILL_CID = optionalOf(FILL_KEYS, ['clientOrderID']);
const FILL_OPENED = optionalOf(FILL_KEYS, ['tradeOpened']);
const FILL_CLOSED = optionalOf(FILL_KEYS, ['tradesClosed']);
const FILL_REDUCED = optionalOf(FILL_KEYS, ['tradeReduced']);
const FILL_OPTIONAL = FILL_CID | FILL_OPENED | FILL_CLOSED | FILL_REDUCED;
const PRICE_KEYS = ['type', 'bids', 'asks', 'closeoutBid', 'closeoutAsk', 'timestamp'];
const BOOK_KEYS = ['price', 'liquidity'];
const OPEN_KEYS = [
  'tradeID',
  'units',
  'price',
  'halfSpreadCost',
  'initialMarginRequired',
  'clientExtensions',
];
const OPEN_OPTIONAL = optionalOf(OPEN_KEYS, ['clientExtensions']);
const REDUCE_KEYS = [
  'tradeID',
  'units',
  'price',
  'realizedPL',
  'financing',
  'halfSpreadCost',
  'guaranteedExecutionFee',
];
const REDUCE_OPTIONAL = optionalOf(REDUCE_KEYS, ['guaranteedExecutionFee']);

/** A one-entry price list of the fill's full price ([{ price, liquidity }]). */
function book(v: unknown, slot: number): string {
  if (!Array.isArray(v) || v.length !== 1 || Object.getPrototypeOf(v) !== Array.prototype) return any(v);
  const e = v[0] as Record<string, unknown>;
  if (typeof e !== 'object' || e === null || keysIn(e, BOOK_KEYS, 0) < 0) return any(v);
  return `[{"price":"${str(e.price, slot)}","liquidity":${num(e.liquidity)}}]`;
}

function fullPrice(v: unknown): string {
  if (typeof v !== 'object' || v === null || keysIn(v, PRICE_KEYS, 0) < 0) return any(v);
  const p = v as Record<string, unknown>;
  return `{"type":"${str(p.type, 10)}","bids":${book(p.bids, 11)},"asks":${book(p.asks, 12)},"closeoutBid":"${str(p.closeoutBid, 13)}","closeoutAsk":"${str(p.closeoutAsk, 14)}","timestamp":"${str(p.timestamp, 3)}"}`;
}

function tradeOpened(v: unknown): string {
  const has = typeof v === 'object' && v !== null ? keysIn(v, OPEN_KEYS, OPEN_OPTIONAL) : -1;
  if (has < 0) return any(v);
  const o = v as Record<string, unknown>;
  const ce =
    (has & OPEN_OPTIONAL) === 0 || o.clientExtensions === undefined
      ? ''
      : `,"clientExtensions":${any(o.clientExtensions)}`;
  return `{"tradeID":"${str(o.tradeID, 2)}","units":"${str(o.units, 15)}","price":"${str(o.price, 16)}","halfSpreadCost":"${str(o.halfSpreadCost, 17)}","initialMarginRequired":"${str(o.initialMarginRequired, 18)}"${ce}}`;
}

function tradeReduce(v: unknown): string {
  const has = typeof v === 'object' && v !== null ? keysIn(v, REDUCE_KEYS, REDUCE_OPTIONAL) : -1;
  if (has < 0) return any(v);
  const r = v as Record<string, unknown>;
  const fee =
    (has & REDUCE_OPTIONAL) === 0 || r.guaranteedExecutionFee === undefined
      ? ''
      : `,"guaranteedExecutionFee":"${str(r.guaranteedExecutionFee, 19)}"`;
  return `{"tradeID":"${str(r.tradeID, 20)}","units":"${str(r.units, 21)}","price":"${str(r.price, 16)}","realizedPL":"${str(r.realizedPL, 22)}","financing":"${str(r.financing, 23)}","halfSpreadCost":"${str(r.halfSpreadCost, 24)}"${fee}}`;
}

function tradesClosed(v: unknown): string {
  if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return any(v);
  let s = '[';
  for (let i = 0; i < v.length; i++) s += i === 0 ? tradeReduce(v[i]) : `,${tradeReduce(v[i])}`;
  return `${s}]`;
}

function fillJson(t: Record<string, unknown>): string | undefined {
  const has = keysIn(t, FILL_KEYS, FILL_OPTIONAL);
  if (has < 0) return undefined;
  const cid =
    (has & FILL_CID) === 0 || t.clientOrderID === undefined
      ? ''
      : `,"clientOrderID":"${str(t.clientOrderID, 25)}"`;
  const opened =
    (has & FILL_OPENED) === 0 || t.tradeOpened === undefined
      ? ''
      : `,"tradeOpened":${tradeOpened(t.tradeOpened)}`;
  const closed =
    (has & FILL_CLOSED) === 0 || t.tradesClosed === undefined
      ? ''
      : `,"tradesClosed":${tradesClosed(t.tradesClosed)}`;
  const reduced =
    (has & FILL_REDUCED) === 0 || t.tradeReduced === undefined
      ? ''
      : `,"tradeReduced":${tradeReduce(t.tradeReduced)}`;
  return `{"type":"ORDER_FILL","orderID":"${str(t.orderID, 0)}","instrument":"${str(t.instrument, 26)}","units":"${str(t.units, 27)}","requestedUnits":"${str(t.requestedUnits, 28)}","price":"${str(t.price, 16)}","fullVWAP":"${str(t.fullVWAP, 16)}","fullPrice":${fullPrice(t.fullPrice)},"reason":"${str(t.reason, 1)}","pl":"${str(t.pl, 29)}","financing":"${str(t.financing, 23)}","commission":"${str(t.commission, 30)}","guaranteedExecutionFee":"${str(t.guaranteedExecutionFee, 31)}","accountBalance":"${str(t.accountBalance, 32)}","gainQuoteHomeConversionFactor":"${str(t.gainQuoteHomeConversionFactor, 33)}","lossQuoteHomeConversionFactor":"${str(t.lossQuoteHomeConversionFactor, 34)}","halfSpreadCost":"${str(t.halfSpreadCost, 35)}"${cid}${opened}${closed}${reduced},"id":"${str(t.id, 2)}","time":"${str(t.time, 3)}","userID":${num(t.userID)},"accountID":"${str(t.accountID, 4)}","batchID":"${str(t.batchID, 5)}"}`;
}

// Client extensions as the simulator keeps them: an ID, a tag, a comment, each optional.
const EXT_KEYS = ['id', 'tag', 'comment'];
const EXT_OPTIONAL = optionalOf(EXT_KEYS, EXT_KEYS);

function clientExtensions(v: unknown, slot: number): string {
  const has = typeof v === 'object' && v !== null ? keysIn(v, EXT_KEYS, EXT_OPTIONAL) : -1;
  if (has < 0) return any(v);
  const e = v as Record<string, unknown>;
  let s = '';
  if ((has & 1) !== 0 && e.id !== undefined) s += `"id":${quoted(e.id, slot)}`;
  if ((has & 2) !== 0 && e.tag !== undefined) s += `${s === '' ? '' : ','}"tag":${quoted(e.tag, 36)}`;
  if ((has & 4) !== 0 && e.comment !== undefined)
    s += `${s === '' ? '' : ','}"comment":${quoted(e.comment, 37)}`;
  return `{${s}}`;
}

/** A string's JSON text: `"v"` when plain, JSON.stringify's escapes otherwise (a client's tag or comment may hold any text); odd when not a string. */
function quoted(v: unknown, slot: number): string {
  if (v === seen[slot]) return `"${v as string}"`;
  if (typeof v !== 'string') {
    odd = true;
    return '';
  }
  if (!plain(v)) return JSON.stringify(v);
  seen[slot] = v;
  return `"${v}"`;
}

/** An optional key's `,"key":value` text (its writer given the value), or '' when absent or undefined. */
function opt(has: number, bit: number, key: string, v: unknown, write: (v: unknown) => string): string {
  return (has & bit) === 0 || v === undefined ? '' : `,"${key}":${write(v)}`;
}

/** A string value's JSON text (`"v"`), in slot `slot`. */
function strIn(slot: number): (v: unknown) => string {
  return (v) => `"${str(v, slot)}"`;
}

// A market order's on-fill details as the simulator records them (the request's fields in its
// order, timeInForce after them when the request had none).
const DETAILS_KEYS = ['price', 'distance', 'timeInForce', 'gtdTime', 'clientExtensions'];
const DETAILS_OPTIONAL = optionalOf(DETAILS_KEYS, DETAILS_KEYS);
const detailsPrice = strIn(38);
const detailsDistance = strIn(39);
const detailsTif = strIn(40);
const detailsGtd = strIn(41);
const detailsExt = (v: unknown): string => clientExtensions(v, 42);

function details(v: unknown): string {
  const has = typeof v === 'object' && v !== null ? keysIn(v, DETAILS_KEYS, DETAILS_OPTIONAL) : -1;
  if (has < 0) return any(v);
  const d = v as Record<string, unknown>;
  const text =
    opt(has, 1, 'price', d.price, detailsPrice) +
    opt(has, 2, 'distance', d.distance, detailsDistance) +
    opt(has, 4, 'timeInForce', d.timeInForce, detailsTif) +
    opt(has, 8, 'gtdTime', d.gtdTime, detailsGtd) +
    opt(has, 16, 'clientExtensions', d.clientExtensions, detailsExt);
  return `{${text.slice(1)}}`;
}

// A MARKET_ORDER as the simulator creates it: a client's order, a trade close or a position
// closeout (the request's fields in the order the simulator builds them), then the stamp.
const MARKET_KEYS = [
  'type',
  'instrument',
  'units',
  'timeInForce',
  'positionFill',
  'reason',
  'priceBound',
  'tradeClose',
  'longPositionCloseout',
  'shortPositionCloseout',
  'clientExtensions',
  'takeProfitOnFill',
  'stopLossOnFill',
  'trailingStopLossOnFill',
  'guaranteedStopLossOnFill',
  'tradeClientExtensions',
  'id',
  'time',
  'userID',
  'accountID',
  'batchID',
];
const MARKET_OPTIONAL = optionalOf(MARKET_KEYS, [
  'priceBound',
  'tradeClose',
  'longPositionCloseout',
  'shortPositionCloseout',
  'clientExtensions',
  'takeProfitOnFill',
  'stopLossOnFill',
  'trailingStopLossOnFill',
  'guaranteedStopLossOnFill',
  'tradeClientExtensions',
]);
const bit = (keys: readonly string[], k: string): number => 1 << keys.indexOf(k);
const M_BOUND = bit(MARKET_KEYS, 'priceBound');
const M_CLOSE = bit(MARKET_KEYS, 'tradeClose');
const M_LONG = bit(MARKET_KEYS, 'longPositionCloseout');
const M_SHORT = bit(MARKET_KEYS, 'shortPositionCloseout');
const M_EXT = bit(MARKET_KEYS, 'clientExtensions');
const M_TP = bit(MARKET_KEYS, 'takeProfitOnFill');
const M_SL = bit(MARKET_KEYS, 'stopLossOnFill');
const M_TSL = bit(MARKET_KEYS, 'trailingStopLossOnFill');
const M_GSL = bit(MARKET_KEYS, 'guaranteedStopLossOnFill');
const M_TRADE_EXT = bit(MARKET_KEYS, 'tradeClientExtensions');
const priceBound = strIn(43);
const orderExt = (v: unknown): string => clientExtensions(v, 44);
const tradeExt = (v: unknown): string => clientExtensions(v, 45);

function marketJson(t: Record<string, unknown>): string | undefined {
  const has = keysIn(t, MARKET_KEYS, MARKET_OPTIONAL);
  if (has < 0) return undefined;
  const rest =
    opt(has, M_BOUND, 'priceBound', t.priceBound, priceBound) +
    opt(has, M_CLOSE, 'tradeClose', t.tradeClose, any) +
    opt(has, M_LONG, 'longPositionCloseout', t.longPositionCloseout, any) +
    opt(has, M_SHORT, 'shortPositionCloseout', t.shortPositionCloseout, any) +
    opt(has, M_EXT, 'clientExtensions', t.clientExtensions, orderExt) +
    opt(has, M_TP, 'takeProfitOnFill', t.takeProfitOnFill, details) +
    opt(has, M_SL, 'stopLossOnFill', t.stopLossOnFill, details) +
    opt(has, M_TSL, 'trailingStopLossOnFill', t.trailingStopLossOnFill, details) +
    opt(has, M_GSL, 'guaranteedStopLossOnFill', t.guaranteedStopLossOnFill, details) +
    opt(has, M_TRADE_EXT, 'tradeClientExtensions', t.tradeClientExtensions, tradeExt);
  return `{"type":"MARKET_ORDER","instrument":"${str(t.instrument, 26)}","units":"${str(t.units, 27)}","timeInForce":"${str(t.timeInForce, 46)}","positionFill":"${str(t.positionFill, 47)}","reason":"${str(t.reason, 48)}"${rest},"id":"${str(t.id, 2)}","time":"${str(t.time, 3)}","userID":${num(t.userID)},"accountID":"${str(t.accountID, 4)}","batchID":"${str(t.batchID, 5)}"}`;
}

// A dependent order the simulator creates on a fill (reason ON_FILL), in its field order.
const ON_FILL_KEYS = [
  'type',
  'tradeID',
  'reason',
  'orderFillTransactionID',
  'clientTradeID',
  'timeInForce',
  'gtdTime',
  'clientExtensions',
  'distance',
  'price',
  'guaranteedExecutionPremium',
  'triggerCondition',
  'id',
  'time',
  'userID',
  'accountID',
  'batchID',
];
const ON_FILL_OPTIONAL = optionalOf(ON_FILL_KEYS, [
  'clientTradeID',
  'gtdTime',
  'clientExtensions',
  'distance',
  'price',
  'guaranteedExecutionPremium',
]);
const F_TRADE_CID = bit(ON_FILL_KEYS, 'clientTradeID');
const F_GTD = bit(ON_FILL_KEYS, 'gtdTime');
const F_EXT = bit(ON_FILL_KEYS, 'clientExtensions');
const F_DISTANCE = bit(ON_FILL_KEYS, 'distance');
const F_PRICE = bit(ON_FILL_KEYS, 'price');
const F_PREMIUM = bit(ON_FILL_KEYS, 'guaranteedExecutionPremium');
const onFillTradeCid = strIn(49);
const onFillGtd = strIn(41);
const onFillExt = (v: unknown): string => clientExtensions(v, 50);
const onFillDistance = strIn(39);
const onFillPrice = strIn(51);
const onFillPremium = strIn(52);

function onFillJson(t: Record<string, unknown>): string | undefined {
  const has = keysIn(t, ON_FILL_KEYS, ON_FILL_OPTIONAL);
  if (has < 0 || t.reason !== 'ON_FILL') return undefined;
  return `{"type":"${str(t.type, 53)}","tradeID":"${str(t.tradeID, 54)}","reason":"ON_FILL","orderFillTransactionID":"${str(t.orderFillTransactionID, 54)}"${opt(has, F_TRADE_CID, 'clientTradeID', t.clientTradeID, onFillTradeCid)},"timeInForce":"${str(t.timeInForce, 40)}"${opt(has, F_GTD, 'gtdTime', t.gtdTime, onFillGtd)}${opt(has, F_EXT, 'clientExtensions', t.clientExtensions, onFillExt)}${opt(has, F_DISTANCE, 'distance', t.distance, onFillDistance)}${opt(has, F_PRICE, 'price', t.price, onFillPrice)}${opt(has, F_PREMIUM, 'guaranteedExecutionPremium', t.guaranteedExecutionPremium, onFillPremium)},"triggerCondition":"${str(t.triggerCondition, 55)}","id":"${str(t.id, 2)}","time":"${str(t.time, 3)}","userID":${num(t.userID)},"accountID":"${str(t.accountID, 4)}","batchID":"${str(t.batchID, 5)}"}`;
}

/** The template of each transaction type the simulator makes often. */
function templated(t: Record<string, unknown>): string | undefined {
  switch (t.type) {
    case 'ORDER_FILL':
      return fillJson(t);
    case 'ORDER_CANCEL':
      return cancelJson(t);
    case 'MARKET_ORDER':
      return marketJson(t);
    case 'TAKE_PROFIT_ORDER':
    case 'STOP_LOSS_ORDER':
    case 'TRAILING_STOP_LOSS_ORDER':
    case 'GUARANTEED_STOP_LOSS_ORDER':
      return onFillJson(t);
    default:
      return undefined;
  }
}

/**
 * `JSON.stringify(tx)`, the same text, written without it: ORDER_FILL, ORDER_CANCEL, MARKET_ORDER
 * and on-fill orders of the simulator's shapes from one template each, other transactions of plain data by the general
 * writer, anything else by JSON.stringify.
 */
export function transactionJson(tx: object): string {
  return transactionJsonFast(tx) ?? JSON.stringify(tx);
}

/** The template's text of `tx`, or undefined when it is not a shape the templates write (`transactionJson` then uses JSON.stringify). */
export function transactionJsonFast(tx: object): string | undefined {
  const t = tx as Record<string, unknown>;
  const fast = templated(t);
  if (!odd) return fast;
  odd = false;
  return undefined;
}
