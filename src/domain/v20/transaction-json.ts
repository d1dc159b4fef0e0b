/**
 * The JSON text of a v20 transaction, byte for byte what `JSON.stringify(tx)` writes:
 * transactions.jsonl gets one line per transaction, and writing a backtest's fills and cancels with
 * JSON.stringify cost about 4 and 0.9 µs each. The simulator's ORDER_FILL and ORDER_CANCEL are
 * written from one template each, in their key order, once the object is checked to have exactly
 * those keys in that order and values of the kinds the template writes. Every other transaction,
 * and any that fails a check (another key order, a string JSON must escape, a `toJSON`, a number
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
const seen: string[] = new Array<string>(40).fill('');

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

/**
 * `JSON.stringify(tx)`, the same text, written without it: ORDER_FILL and ORDER_CANCEL of the
 * simulator's shapes from one template each, other transactions of plain data by the general
 * writer, anything else by JSON.stringify.
 */
export function transactionJson(tx: object): string {
  return transactionJsonFast(tx) ?? JSON.stringify(tx);
}

/** The template's text of `tx`, or undefined when it is not a shape the templates write (`transactionJson` then uses JSON.stringify). */
export function transactionJsonFast(tx: object): string | undefined {
  const t = tx as Record<string, unknown>;
  const fast = t.type === 'ORDER_FILL' ? fillJson(t) : t.type === 'ORDER_CANCEL' ? cancelJson(t) : undefined;
  if (!odd) return fast;
  odd = false;
  return undefined;
}
