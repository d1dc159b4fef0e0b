import type { Instrument } from '../../domain/instrument.ts';
import type { LedgerTrade } from '../../domain/ledger.ts';
import { add, convert, convertProduct, formatAmount, scaled, type Amount } from '../../domain/money.ts';
import { formatFactor } from '../../domain/conversion.ts';
import { formatTime, type UnixMs } from '../../domain/time.ts';
import type { ClientExtensions, OrderFillReason, TradeOpen, TradeReduce } from '../../domain/v20/index.ts';
import type { Chunk } from './account.ts';
import type { CommissionModel } from './commission.ts';
import type { SimOrder, SimOrderType } from './orders.ts';
import type { Draft } from './transactions.ts';

/**
 * The money of a fill: the ORDER_FILL transaction of an order filled at `price`, with its realized
 * P/L per closed trade part, half-spread cost, guaranteed-stop fee, commission (commission.ts),
 * the opened trade and the account balance after. Exact: prices and units as integers, one
 * rounding per amount (money.ts). execute.ts `execute` decides whether and at what price; this writes it down.
 */

/** One fill as execute.ts decided it. */
export interface FillArgs {
  orderID: string;
  clientOrderID: string | undefined;
  type: SimOrderType;
  units: number;
  positionFill: string;
  priceBound: number;
  bid: number;
  ask: number;
  px: number;
  t: UnixMs;
  created: Record<string, unknown>;
  tradeClose: { tradeID: string; units: string } | undefined;
  closeout: 1 | -1 | 0;
  order: SimOrder | undefined;
  marginCloseout?: boolean;
}

/**
 * The stamp of the ORDER_FILL (transactions.ts `emit` writes the same fields): its time text (of
 * the clock `at`), account and batch. Given it, `orderFill` returns the transaction stamped, its ID
 * the `fillID` it is given, for `TransactionLog.publish`; without it, the draft for `emit`.
 */
export interface FillStamp {
  readonly at: UnixMs;
  readonly time: string;
  readonly accountID: string;
  readonly batchID: string;
}

const FILL_REASON: Readonly<Record<SimOrderType, OrderFillReason>> = {
  MARKET: 'MARKET_ORDER',
  LIMIT: 'LIMIT_ORDER',
  STOP: 'STOP_ORDER',
  MARKET_IF_TOUCHED: 'MARKET_IF_TOUCHED_ORDER',
  TAKE_PROFIT: 'TAKE_PROFIT_ORDER',
  STOP_LOSS: 'STOP_LOSS_ORDER',
  TRAILING_STOP_LOSS: 'TRAILING_STOP_LOSS_ORDER',
  GUARANTEED_STOP_LOSS: 'GUARANTEED_STOP_LOSS_ORDER',
};

/**
 * The ORDER_FILL draft of fill `a`: closes `chunks`, opens `opening` units (side `buy`) at `pxNum`
 * (its text `price`), with the quote-to-home `factors`, the new trade's ID `fillID`, its initial
 * margin `margin` (4-place integer), on an account whose balance is `balance`. The trades it closes
 * in full are pushed to `closedTrades`. With `stamp`, the transaction comes stamped (ID `fillID`).
 */
export function orderFill(
  a: FillArgs,
  inst: Instrument,
  chunks: readonly Chunk[],
  opening: number,
  buy: boolean,
  pxNum: number,
  price: string,
  factors: { readonly gain: number; readonly loss: number },
  fillID: string,
  margin: number,
  commission: CommissionModel,
  balance: Amount,
  tce: ClientExtensions | undefined,
  closedTrades: LedgerTrade[],
  stamp?: FillStamp,
): Draft {
  // Money, exact: prices and units as integers (safe integers in numbers: price ticks, units),
  // one rounding per amount; convertProduct multiplies them exactly (money.ts).
  const d = inst.displayPrecision;
  const pScale = inst.priceScale;
  const uPlaces = inst.tradeUnitsPrecision;
  const uScale = inst.unitsScale;
  const pxInt = Math.round(pxNum * pScale);
  // Half the spread, at one more decimal place: (ask - bid) * 5 / 10^(d+1).
  const askSnap = inst.snap(a.ask);
  const bidSnap = inst.snap(a.bid);
  const halfSpreadInt = Math.abs(Math.round(askSnap * pScale) - Math.round(bidSnap * pScale)) * 5;
  const gain = formatFactor(factors.gain);
  const loss = formatFactor(factors.loss);
  let pl: Amount = 0;
  let spreadCost: Amount = 0;
  let fee: Amount = 0;
  // A guaranteed stop charges its premium on the units it closes.
  const premium = a.order?.type === 'GUARANTEED_STOP_LOSS' ? scaled(inst.guaranteedStopLoss.premium) : undefined;
  const closed: TradeReduce[] = [];
  let reduced: TradeReduce | undefined;
  for (const ch of chunks) {
    const closedUnits = ch.trade.unitsNum > 0 ? ch.units : -ch.units; // units of the trade being closed
    const unitsInt = Math.round(closedUnits * uScale);
    const move = pxInt - Math.round(ch.trade.priceNum * pScale);
    // A loss converts with the loss factor (the sign of a double product is always right).
    const realized = convertProduct(move, unitsInt, d + uPlaces, move * unitsInt < 0 ? loss : gain);
    const absUnits = Math.abs(unitsInt);
    const cost = convertProduct(halfSpreadInt, absUnits, d + 1 + uPlaces, loss);
    const chunkFee = premium ? convert(premium.int * BigInt(absUnits), premium.places + uPlaces, loss) : 0;
    pl = add(pl, realized);
    spreadCost = add(spreadCost, cost);
    fee = add(fee, chunkFee);
    const entry: { -readonly [K in keyof TradeReduce]: TradeReduce[K] } = {
      tradeID: ch.trade.id,
      units: String(-closedUnits),
      price,
      realizedPL: formatAmount(realized),
      financing: '0.0000',
      halfSpreadCost: formatAmount(cost),
    };
    if (premium) entry.guaranteedExecutionFee = formatAmount(chunkFee);
    if (ch.units === Math.abs(ch.trade.unitsNum)) {
      closed.push(entry);
      closedTrades.push(ch.trade);
    } else reduced = entry;
  }
  let opened: TradeOpen | undefined;
  if (opening > 0) {
    const signed = buy ? opening : -opening;
    const cost = convertProduct(halfSpreadInt, Math.round(opening * uScale), d + 1 + uPlaces, loss);
    spreadCost = add(spreadCost, cost);
    const o: { -readonly [K in keyof TradeOpen]: TradeOpen[K] } = {
      tradeID: fillID,
      units: String(signed),
      price,
      halfSpreadCost: formatAmount(cost),
      initialMarginRequired: formatAmount(margin),
    };
    if (tce) o.clientExtensions = tce;
    opened = o;
  }
  let filledUnits = opening;
  for (const ch of chunks) filledUnits += ch.units;
  filledUnits = roundUnits(filledUnits);
  const charged = commission.charge(inst, filledUnits, uPlaces);
  const units = buy ? filledUnits : -filledUnits;
  // A market fill is at the bid or the ask: that side's text is the fill price's. (inst.price of a
  // snapped price is its toFixed: snap is idempotent.)
  const bidText = bidSnap === pxNum ? price : inst.price(bidSnap);
  const askText = askSnap === pxNum ? price : inst.price(askSnap);
  const unitsText = String(units);
  const requestedUnits = a.units === units ? unitsText : String(a.units);
  const fullPrice = {
    type: 'PRICE',
    bids: [{ price: bidText, liquidity: 10000000 }],
    asks: [{ price: askText, liquidity: 10000000 }],
    closeoutBid: bidText,
    closeoutAsk: askText,
    timestamp: stamp !== undefined && a.t === stamp.at ? stamp.time : formatTime(a.t),
  };
  const reason = a.marginCloseout
    ? 'MARKET_ORDER_MARGIN_CLOSEOUT'
    : a.tradeClose && a.type === 'MARKET'
      ? 'MARKET_ORDER_TRADE_CLOSE'
      : a.closeout !== 0
        ? 'MARKET_ORDER_POSITION_CLOSEOUT'
        : FILL_REASON[a.type];
  const plText = formatAmount(pl);
  const commissionText = formatAmount(charged);
  const feeText = formatAmount(fee);
  const balanceText = formatAmount(add(balance, pl - charged - fee));
  const spreadText = formatAmount(spreadCost);
  const cid = a.clientOrderID;
  const tradesClosed = closed.length > 0 ? closed : undefined;
  // The commonest fills as one literal each, stamp included, in the field order of the general
  // form below: the transaction gets its final shape at once instead of growing a property at a
  // time (one of these per fill, with up to 25 fields).
  if (stamp !== undefined && reduced === undefined) {
    const { time, accountID, batchID } = stamp;
    if (cid !== undefined && opened !== undefined && tradesClosed === undefined) {
      return {
        type: 'ORDER_FILL', orderID: a.orderID, instrument: inst.name, units: unitsText, requestedUnits, price, fullVWAP: price, fullPrice, reason,
        pl: plText, financing: '0.0000', commission: commissionText, guaranteedExecutionFee: feeText, accountBalance: balanceText,
        gainQuoteHomeConversionFactor: gain, lossQuoteHomeConversionFactor: loss, halfSpreadCost: spreadText,
        clientOrderID: cid, tradeOpened: opened, id: fillID, time, userID: 1, accountID, batchID,
      };
    }
    if (cid !== undefined && opened !== undefined) {
      return {
        type: 'ORDER_FILL', orderID: a.orderID, instrument: inst.name, units: unitsText, requestedUnits, price, fullVWAP: price, fullPrice, reason,
        pl: plText, financing: '0.0000', commission: commissionText, guaranteedExecutionFee: feeText, accountBalance: balanceText,
        gainQuoteHomeConversionFactor: gain, lossQuoteHomeConversionFactor: loss, halfSpreadCost: spreadText,
        clientOrderID: cid, tradeOpened: opened, tradesClosed, id: fillID, time, userID: 1, accountID, batchID,
      };
    }
    if (cid === undefined && opened === undefined && tradesClosed !== undefined) {
      return {
        type: 'ORDER_FILL', orderID: a.orderID, instrument: inst.name, units: unitsText, requestedUnits, price, fullVWAP: price, fullPrice, reason,
        pl: plText, financing: '0.0000', commission: commissionText, guaranteedExecutionFee: feeText, accountBalance: balanceText,
        gainQuoteHomeConversionFactor: gain, lossQuoteHomeConversionFactor: loss, halfSpreadCost: spreadText,
        tradesClosed, id: fillID, time, userID: 1, accountID, batchID,
      };
    }
  }
  const fill: Draft = {
    type: 'ORDER_FILL',
    orderID: a.orderID,
    instrument: inst.name,
    units: unitsText,
    requestedUnits,
    price,
    fullVWAP: price,
    fullPrice,
    reason,
    pl: plText,
    financing: '0.0000',
    commission: commissionText,
    guaranteedExecutionFee: feeText,
    accountBalance: balanceText,
    gainQuoteHomeConversionFactor: gain,
    lossQuoteHomeConversionFactor: loss,
    halfSpreadCost: spreadText,
  };
  if (cid !== undefined) fill.clientOrderID = cid;
  if (opened) fill.tradeOpened = opened;
  if (tradesClosed) fill.tradesClosed = tradesClosed;
  if (reduced) fill.tradeReduced = reduced;
  if (stamp !== undefined) {
    fill.id = fillID;
    fill.time = stamp.time;
    fill.userID = 1;
    fill.accountID = stamp.accountID;
    fill.batchID = stamp.batchID;
  }
  return fill;
}

/** Units rounded to 1e-6: sums of fractional CFD units never carry binary noise. */
export function roundUnits(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
