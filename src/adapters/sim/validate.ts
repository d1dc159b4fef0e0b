import type { Instrument, InstrumentRegistry } from '../../domain/instrument.ts';
import { parseRequestTime as parseTime } from '../../domain/time.ts';
import type { OrderRequest, TransactionRejectReason } from '../../domain/v20/index.ts';
import { decimalsAsStrings } from '../../domain/v20/request.ts';

/**
 * The fields of each OrderRequest type: v20 3.0.25's definitions plus the later guaranteed stop loss
 * (`guaranteedStopLossOnFill`, GUARANTEED_STOP_LOSS). The definitions allow additional properties,
 * and OANDA ignores a field its request type does not define: a LIMIT order's `priceBound` (only
 * MARKET, STOP and MARKET_IF_TOUCHED have one) is neither recorded nor enforced.
 */
const ENTRY = [
  'type',
  'instrument',
  'units',
  'timeInForce',
  'positionFill',
  'clientExtensions',
  'takeProfitOnFill',
  'stopLossOnFill',
  'trailingStopLossOnFill',
  'guaranteedStopLossOnFill',
  'tradeClientExtensions',
];
const PENDING_ENTRY = [...ENTRY, 'price', 'gtdTime', 'triggerCondition'];
const DEPENDENT = [
  'type',
  'tradeID',
  'clientTradeID',
  'price',
  'timeInForce',
  'gtdTime',
  'triggerCondition',
  'clientExtensions',
];
const REQUEST_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  MARKET: new Set([...ENTRY, 'priceBound']),
  LIMIT: new Set(PENDING_ENTRY),
  STOP: new Set([...PENDING_ENTRY, 'priceBound']),
  MARKET_IF_TOUCHED: new Set([...PENDING_ENTRY, 'priceBound']),
  TAKE_PROFIT: new Set(DEPENDENT),
  STOP_LOSS: new Set([...DEPENDENT, 'distance', 'guaranteed']),
  TRAILING_STOP_LOSS: new Set([...DEPENDENT.filter((k) => k !== 'price'), 'distance']),
  GUARANTEED_STOP_LOSS: new Set([...DEPENDENT, 'distance']),
};

/** Whether an order type closes a trade it names by `tradeID` (TP, SL, trailing, guaranteed). */
export function isDependentType(type: string): boolean {
  return (
    type === 'TAKE_PROFIT' ||
    type === 'STOP_LOSS' ||
    type === 'TRAILING_STOP_LOSS' ||
    type === 'GUARANTEED_STOP_LOSS'
  );
}

/**
 * The request as OANDA reads it: decimals given as JSON numbers become decimal strings, and fields
 * its type does not define are dropped (see REQUEST_FIELDS). Returns `req` itself when neither
 * applies (the usual case: no copy on the order path of a backtest).
 */
export function requestAsRead(req: OrderRequest): OrderRequest {
  const r = decimalsAsStrings(req) as OrderRequest & Record<string, unknown>;
  const known = REQUEST_FIELDS[r.type];
  if (known === undefined) return r;
  let unknown = false;
  for (const k in r) {
    if (!known.has(k)) {
      unknown = true;
      break;
    }
  }
  if (!unknown) return r;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(r)) if (known.has(k)) out[k] = r[k];
  return out as unknown as OrderRequest;
}

/** What `checkOrder` needs of the account: the clock and the open trades. */
export interface OrderEnv {
  readonly instruments: InstrumentRegistry;
  /** The simulator's clock (GTD times must be after it). */
  readonly now: number;
  /** The open trade a dependent order names (an ID or `@clientTradeID`), undefined when there is none. */
  trade(spec: string): { readonly id: string; readonly instrument: string } | undefined;
}

/** The outcome of `checkOrder`: the request as read, and its instrument and trade, or the reject reason. */
export type OrderCheck =
  | {
      readonly ok: true;
      readonly request: OrderRequest;
      readonly instrument: Instrument;
      readonly tradeID: string | undefined;
    }
  | { readonly ok: false; readonly request: OrderRequest; readonly reason: TransactionRejectReason };

/**
 * The one validation every order goes through before the simulator creates it, whichever way it
 * came (order create, replace, a trade's dependent orders, and the on-fill details these carry): the
 * request as OANDA reads it (`requestAsRead`), then its instrument, which for a dependent order
 * (TAKE_PROFIT, STOP_LOSS, TRAILING_STOP_LOSS, GUARANTEED_STOP_LOSS) is the instrument of the trade it
 * names, then every field against that instrument (`validateOrderRequest`). A dependent order's
 * price precision and trailing distance bounds are therefore checked as on the trade-orders path.
 */
export function checkOrder(request: OrderRequest, env: OrderEnv): OrderCheck {
  const req = requestAsRead(request);
  const r = req as OrderRequest & { instrument?: string; tradeID?: string };
  // A type with no v20 request definition (FIXED_PRICE, which only OANDA creates, or a misspelling)
  // is refused as OANDA refuses it: an error to the caller, no transaction, no ID used.
  if (!Object.hasOwn(REQUEST_FIELDS, r.type)) {
    throw new RangeError(
      `order type ${JSON.stringify(r.type)} cannot be requested: give one of ${Object.keys(REQUEST_FIELDS).join(', ')} (FIXED_PRICE orders are made by OANDA only)`,
    );
  }
  let inst: Instrument;
  let tradeID: string | undefined;
  if (isDependentType(r.type)) {
    if (r.tradeID === undefined) return { ok: false, request: req, reason: 'TRADE_ID_UNSPECIFIED' };
    const trade = env.trade(r.tradeID);
    if (trade === undefined) return { ok: false, request: req, reason: 'TRADE_DOESNT_EXIST' };
    inst = env.instruments.get(trade.instrument);
    tradeID = trade.id;
  } else {
    if (r.instrument === undefined) return { ok: false, request: req, reason: 'INSTRUMENT_MISSING' };
    if (!env.instruments.has(r.instrument)) return { ok: false, request: req, reason: 'INSTRUMENT_UNKNOWN' };
    inst = env.instruments.get(r.instrument);
  }
  const reason = validateOrderRequest(req, inst, env.now);
  return reason === undefined
    ? { ok: true, request: req, instrument: inst, tradeID }
    : { ok: false, request: req, reason };
}

/** Time-in-force values of on-fill orders. */
const ON_FILL_TIF: readonly string[] = ['GTC', 'GTD', 'GFD'];

/** Time-in-force values v20 accepts per order type. */
const TIF_ALLOWED: Readonly<Record<string, readonly string[]>> = {
  MARKET: ['FOK', 'IOC'],
  LIMIT: ['GTC', 'GTD', 'GFD', 'FOK', 'IOC'],
  STOP: ['GTC', 'GTD', 'GFD', 'FOK', 'IOC'],
  MARKET_IF_TOUCHED: ['GTC', 'GTD', 'GFD'],
  TAKE_PROFIT: ['GTC', 'GTD', 'GFD'],
  STOP_LOSS: ['GTC', 'GTD', 'GFD'],
  TRAILING_STOP_LOSS: ['GTC', 'GTD', 'GFD'],
  GUARANTEED_STOP_LOSS: ['GTC', 'GTD', 'GFD'],
};

const POSITION_FILL = new Set(['DEFAULT', 'REDUCE_FIRST', 'REDUCE_ONLY', 'OPEN_ONLY', 'POSITION_DEFAULT']);
const TRIGGER = new Set(['DEFAULT', 'INVERSE', 'BID', 'ASK', 'MID', 'TRIGGER_DEFAULT']);

/**
 * The number of fraction digits of a decimal string (`/^[+-]?\d+(\.\d+)?$/`: "-12", "0.0015"),
 * or -1 when the string is not such a decimal. A scan instead of a regular expression: every
 * order request checks several fields, on the order path of every backtest.
 */
export function decimalPlaces(s: string): number {
  const n = s.length;
  let i = 0;
  if (n > 0) {
    const c = s.charCodeAt(0);
    if (c === 43 || c === 45) i = 1; // '+' or '-'
  }
  const intStart = i;
  while (i < n && isDigit(s.charCodeAt(i))) i++;
  if (i === intStart) return -1;
  if (i === n) return 0;
  if (s.charCodeAt(i) !== 46) return -1; // '.'
  const fracStart = ++i;
  while (i < n && isDigit(s.charCodeAt(i))) i++;
  return i === n && i > fracStart ? n - fracStart : -1;
}

/**
 * The fraction digits a decimal string needs (trailing zeros do not count: "1000.0" needs none),
 * or -1 when it is not a decimal. Units are checked against the instrument's precision by value.
 */
export function valuePlaces(s: string): number {
  const places = decimalPlaces(s);
  let zeros = 0;
  while (zeros < places && s.charCodeAt(s.length - 1 - zeros) === 48) zeros++;
  return places - zeros;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Checks a price field: present, a decimal, within the instrument's precision. */
function checkPrice(
  value: string | undefined,
  inst: Instrument,
  missing: TransactionRejectReason,
  invalid: TransactionRejectReason,
  precision: TransactionRejectReason,
): TransactionRejectReason | undefined {
  if (value === undefined) return missing;
  const places = decimalPlaces(value);
  if (places < 0 || Number(value) <= 0) return invalid;
  if (places > inst.displayPrecision) return precision;
  return undefined;
}

interface OnFillLike {
  price?: string;
  distance?: string;
  timeInForce?: string;
  gtdTime?: string;
  triggerCondition?: string;
}

/**
 * Validates an order request as v20 does before creating the order. Returns the v20 reject reason
 * (the request becomes a `*_REJECT` transaction and an HTTP 400) or undefined when it is valid.
 * Price-dependent checks (margin, on-fill loss, bounds) happen at fill time and cancel instead.
 */
export function validateOrderRequest(
  req: OrderRequest,
  inst: Instrument | undefined,
  now: number,
): TransactionRejectReason | undefined {
  const r = req as OrderRequest & {
    instrument?: string;
    units?: string;
    price?: string;
    distance?: string;
    priceBound?: string;
    timeInForce?: string;
    gtdTime?: string;
    positionFill?: string;
    triggerCondition?: string;
    tradeID?: string;
    takeProfitOnFill?: OnFillLike;
    stopLossOnFill?: OnFillLike;
    trailingStopLossOnFill?: OnFillLike;
    guaranteedStopLossOnFill?: OnFillLike;
  };
  const dependent =
    r.type === 'TAKE_PROFIT' ||
    r.type === 'STOP_LOSS' ||
    r.type === 'TRAILING_STOP_LOSS' ||
    r.type === 'GUARANTEED_STOP_LOSS';
  if (!dependent) {
    if (r.instrument === undefined) return 'INSTRUMENT_MISSING';
    if (!inst) return 'INSTRUMENT_UNKNOWN';
    if (r.units === undefined) return 'UNITS_MISSING';
    const unitPlaces = valuePlaces(r.units);
    if (unitPlaces < 0 || Number(r.units) === 0) return 'UNITS_INVALID';
    if (unitPlaces > inst.tradeUnitsPrecision) return 'UNITS_PRECISION_EXCEEDED';
    const abs = Math.abs(Number(r.units));
    if (abs < inst.minimumTradeSize) return 'UNITS_MIMIMUM_NOT_MET';
    if (abs > inst.maximumOrderUnits) return 'UNITS_LIMIT_EXCEEDED';
    if (r.positionFill !== undefined && !POSITION_FILL.has(r.positionFill))
      return 'ORDER_FILL_POSITION_ACTION_INVALID';
  } else if (r.tradeID === undefined) {
    return 'TRADE_ID_UNSPECIFIED';
  }
  if (r.triggerCondition !== undefined && !TRIGGER.has(r.triggerCondition))
    return 'TRIGGER_CONDITION_INVALID';
  const tif = r.timeInForce ?? (r.type === 'MARKET' ? 'FOK' : 'GTC');
  const allowed = TIF_ALLOWED[r.type];
  if (!allowed || !allowed.includes(tif)) return 'TIME_IN_FORCE_INVALID';
  if (tif === 'GTD') {
    if (r.gtdTime === undefined) return 'TIME_IN_FORCE_GTD_TIMESTAMP_MISSING';
    const t = parseTime(r.gtdTime);
    if (Number.isNaN(t)) return 'TIME_IN_FORCE_MISSING';
    if (t <= now) return 'TIME_IN_FORCE_GTD_TIMESTAMP_IN_PAST';
  }
  if (inst) {
    switch (r.type) {
      case 'LIMIT':
      case 'STOP':
      case 'MARKET_IF_TOUCHED':
      case 'TAKE_PROFIT': {
        const bad = checkPrice(r.price, inst, 'PRICE_MISSING', 'PRICE_INVALID', 'PRICE_PRECISION_EXCEEDED');
        if (bad) return bad;
        break;
      }
      case 'STOP_LOSS':
      case 'GUARANTEED_STOP_LOSS': {
        if (r.price !== undefined && r.distance !== undefined)
          return 'STOP_LOSS_ORDER_PRICE_AND_DISTANCE_BOTH_SPECIFIED';
        if (r.price === undefined && r.distance === undefined)
          return 'STOP_LOSS_ORDER_PRICE_AND_DISTANCE_BOTH_MISSING';
        if (r.price !== undefined) {
          const bad = checkPrice(r.price, inst, 'PRICE_MISSING', 'PRICE_INVALID', 'PRICE_PRECISION_EXCEEDED');
          if (bad) return bad;
        } else {
          const places = decimalPlaces(r.distance!);
          if (places < 0 || Number(r.distance) <= 0) return 'PRICE_DISTANCE_INVALID';
          if (places > inst.displayPrecision) return 'PRICE_DISTANCE_PRECISION_EXCEEDED';
        }
        break;
      }
      case 'TRAILING_STOP_LOSS': {
        if (r.distance === undefined) return 'PRICE_DISTANCE_MISSING';
        const places = decimalPlaces(r.distance);
        if (places < 0 || Number(r.distance) <= 0) return 'PRICE_DISTANCE_INVALID';
        if (places > inst.displayPrecision) return 'PRICE_DISTANCE_PRECISION_EXCEEDED';
        const d = Number(r.distance);
        if (d < inst.minimumTrailingStopDistance) return 'PRICE_DISTANCE_MINIMUM_NOT_MET';
        if (d > inst.maximumTrailingStopDistance) return 'PRICE_DISTANCE_MAXIMUM_EXCEEDED';
        break;
      }
      default:
        break;
    }
    if (r.priceBound !== undefined) {
      const places = decimalPlaces(r.priceBound);
      if (places < 0) return 'PRICE_BOUND_INVALID';
      if (places > inst.displayPrecision) return 'PRICE_BOUND_PRECISION_EXCEEDED';
    }
    const tp = r.takeProfitOnFill;
    if (tp) {
      if (tp.price === undefined && tp.distance === undefined) return 'TAKE_PROFIT_ON_FILL_PRICE_MISSING';
      if (tp.price !== undefined) {
        const bad = checkPrice(
          tp.price,
          inst,
          'TAKE_PROFIT_ON_FILL_PRICE_MISSING',
          'TAKE_PROFIT_ON_FILL_PRICE_INVALID',
          'TAKE_PROFIT_ON_FILL_PRICE_PRECISION_EXCEEDED',
        );
        if (bad) return bad;
      }
      if (tp.timeInForce !== undefined && !ON_FILL_TIF.includes(tp.timeInForce))
        return 'TAKE_PROFIT_ON_FILL_TIME_IN_FORCE_INVALID';
      if (tp.timeInForce === 'GTD' && tp.gtdTime === undefined)
        return 'TAKE_PROFIT_ON_FILL_GTD_TIMESTAMP_MISSING';
    }
    const sl = r.stopLossOnFill;
    if (sl) {
      if (sl.price !== undefined && sl.distance !== undefined)
        return 'STOP_LOSS_ON_FILL_PRICE_AND_DISTANCE_BOTH_SPECIFIED';
      if (sl.price === undefined && sl.distance === undefined)
        return 'STOP_LOSS_ON_FILL_PRICE_AND_DISTANCE_BOTH_MISSING';
      if (sl.price !== undefined) {
        const bad = checkPrice(
          sl.price,
          inst,
          'STOP_LOSS_ON_FILL_PRICE_MISSING',
          'STOP_LOSS_ON_FILL_PRICE_INVALID',
          'STOP_LOSS_ON_FILL_PRICE_PRECISION_EXCEEDED',
        );
        if (bad) return bad;
      } else {
        const places = decimalPlaces(sl.distance!);
        if (places < 0 || Number(sl.distance) <= 0) return 'STOP_LOSS_ON_FILL_DISTANCE_INVALID';
        if (places > inst.displayPrecision) return 'STOP_LOSS_ON_FILL_DISTANCE_PRECISION_EXCEEDED';
      }
      if (sl.timeInForce !== undefined && !ON_FILL_TIF.includes(sl.timeInForce))
        return 'STOP_LOSS_ON_FILL_TIME_IN_FORCE_INVALID';
      if (sl.timeInForce === 'GTD' && sl.gtdTime === undefined)
        return 'STOP_LOSS_ON_FILL_GTD_TIMESTAMP_MISSING';
    }
    const gsl = r.guaranteedStopLossOnFill;
    if (gsl) {
      if (inst.guaranteedStopLoss.mode === 'DISABLED') return 'STOP_LOSS_ON_FILL_GUARANTEED_NOT_ALLOWED';
      if (gsl.price !== undefined && gsl.distance !== undefined)
        return 'STOP_LOSS_ON_FILL_PRICE_AND_DISTANCE_BOTH_SPECIFIED';
      if (gsl.price === undefined && gsl.distance === undefined)
        return 'STOP_LOSS_ON_FILL_PRICE_AND_DISTANCE_BOTH_MISSING';
      if (gsl.price !== undefined) {
        const bad = checkPrice(
          gsl.price,
          inst,
          'STOP_LOSS_ON_FILL_PRICE_MISSING',
          'STOP_LOSS_ON_FILL_PRICE_INVALID',
          'STOP_LOSS_ON_FILL_PRICE_PRECISION_EXCEEDED',
        );
        if (bad) return bad;
      } else if (decimalPlaces(gsl.distance!) < 0 || Number(gsl.distance) <= 0)
        return 'STOP_LOSS_ON_FILL_DISTANCE_INVALID';
    } else if (
      inst.guaranteedStopLoss.mode === 'REQUIRED' &&
      (r.type === 'MARKET' || r.type === 'LIMIT' || r.type === 'STOP' || r.type === 'MARKET_IF_TOUCHED')
    ) {
      return 'STOP_LOSS_ON_FILL_GUARANTEED_REQUIRED';
    }
    if (r.type === 'GUARANTEED_STOP_LOSS' && inst.guaranteedStopLoss.mode === 'DISABLED')
      return 'STOP_LOSS_ORDER_GUARANTEED_NOT_ALLOWED';
    const ts = r.trailingStopLossOnFill;
    if (ts) {
      if (ts.distance === undefined) return 'TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MISSING';
      const places = decimalPlaces(ts.distance);
      if (places < 0 || Number(ts.distance) <= 0) return 'TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_INVALID';
      if (places > inst.displayPrecision)
        return 'TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_PRECISION_EXCEEDED';
      const d = Number(ts.distance);
      if (d < inst.minimumTrailingStopDistance)
        return 'TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MINIMUM_NOT_MET';
      if (d > inst.maximumTrailingStopDistance)
        return 'TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MAXIMUM_EXCEEDED';
      if (ts.timeInForce !== undefined && !ON_FILL_TIF.includes(ts.timeInForce))
        return 'TRAILING_STOP_LOSS_ON_FILL_TIME_IN_FORCE_INVALID';
    }
  }
  return undefined;
}
