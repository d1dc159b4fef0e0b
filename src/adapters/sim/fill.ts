import type { Instrument } from '../../domain/instrument.ts';
import type { LedgerTrade } from '../../domain/ledger.ts';
import { add, convert, convertProduct, formatAmount, scaled, type Amount } from '../../domain/money.ts';
import { formatFactor } from '../../domain/conversion.ts';
import { formatTime, parseTime, type UnixMs } from '../../domain/time.ts';
import type { FillNumbers, TransactionNote } from '../../domain/transaction-note.ts';
import type {
  ClientExtensions,
  OrderFillReason,
  TradeOpen,
  TradeReduce,
  Transaction,
} from '../../domain/v20/index.ts';
import type { Chunk } from './account.ts';
import type { CommissionModel } from './commission.ts';
import type { SimOrder, SimOrderType } from './orders.ts';
import type { Draft } from './draft.ts';

/**
 * The money of a fill: the ORDER_FILL of an order filled at a price, with its realized P/L per
 * closed trade part, half-spread cost, guaranteed-stop fee, commission (commission.ts), the opened
 * trade and the account balance after. Exact: prices and units as integers, one rounding per
 * amount (money.ts). execute.ts `execute` decides whether and at what price; this writes it down,
 * as numbers (`setFill`, into a `FillNote`), and as the v20 transaction only when a reader asks.
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
 * The stamp of the ORDER_FILL (transactions.ts `stamp` writes the same fields): its time text (of
 * the clock `at`), account and batch. Its ID is the `fillID` `setFill` is given.
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
 * One ORDER_FILL as the fill path computed it: the numbers the ledger folds (FillNumbers) and the
 * few fields the engine and the order counters read (TransactionNote), plus what its v20 object
 * needs besides, kept as numbers and references. The object, with its two dozen strings, is built
 * only when a reader asks for it (`transaction()`), once per fill: a run with no reader of objects
 * (a sweep's trial, a backtest with no run folder) builds none. The transaction log keeps one note
 * per delivery depth and fills it again for the next fill (`setFill`): no allocation per fill.
 */
export class FillNote implements TransactionNote, FillNumbers {
  readonly type = 'ORDER_FILL';
  id = '';
  idNum = 0;
  /** Its time (of `time`), and the clock's time it was stamped at. */
  at: UnixMs = 0;
  stampAt: UnixMs = 0;
  orderID = '';
  reason: OrderFillReason = 'MARKET_ORDER';
  readonly rejectReason = undefined;
  readonly clientExtensionsID = undefined;
  /** The fill price (snapped). */
  price = Number.NaN;
  instrument = '';
  time = '';
  filledUnits = 0;
  pl: Amount = 0;
  commission: Amount = 0;
  guaranteedExecutionFee: Amount = 0;
  halfSpreadCost: Amount = 0;
  parts = 0;
  readonly partTradeID: string[] = [];
  readonly partUnits: number[] = [];
  readonly partPL: Amount[] = [];
  readonly partSpread: Amount[] = [];
  readonly partFull: boolean[] = [];
  /** Each part's guaranteed execution fee (a guaranteed stop's premium), for the object. */
  readonly partFee: Amount[] = [];
  openUnits = 0;
  openTradeID = '';
  openSpread: Amount = 0;
  openClientExtensions: ClientExtensions | undefined = undefined;
  /** What only the object carries. */
  inst: Instrument | undefined = undefined;
  clientOrderID: string | undefined = undefined;
  /** The units the order asked for, signed, and those filled, signed. */
  requestedUnits = 0;
  units = 0;
  bidSnap = 0;
  askSnap = 0;
  /** The time of the price it filled on. */
  priceAt: UnixMs = 0;
  gain = 1;
  loss = 1;
  margin: Amount = 0;
  accountBalance: Amount = 0;
  guaranteed = false;
  accountID = '';
  batchID = '';
  #priceText: string | undefined = undefined;
  #tx: Transaction | undefined = undefined;

  constructor(private readonly stats: { fillObjects: number }) {}

  get openPriceNum(): number {
    return this.price;
  }

  /** The fill price's text (made once, when the opened trade or the object needs it). */
  get openPrice(): string {
    return (this.#priceText ??= this.inst!.price(this.price));
  }

  transaction(): Transaction {
    if (this.#tx === undefined) {
      this.#tx = orderFillTransaction(this) as unknown as Transaction;
      this.stats.fillObjects++;
    }
    return this.#tx;
  }

  /** Forgets the last fill's object and text (the note is about to hold another fill). */
  reset(): void {
    this.#priceText = undefined;
    this.#tx = undefined;
    this.parts = 0;
  }
}

/**
 * Writes the fill `a` into `note`: closes `chunks`, opens `opening` units (side `buy`) at `pxNum`,
 * with the quote-to-home `factors`, the new trade's ID `fillID` (the transaction's own, its number
 * `idNum`), its initial margin `margin` (4-place integer), on an account whose balance is
 * `balance`, stamped `stamp`. The trades it closes in full are pushed to `closedTrades`. Numbers
 * only: no string is made here but the factors' (which the conversion reads).
 */
export function setFill(
  note: FillNote,
  a: FillArgs,
  inst: Instrument,
  chunks: readonly Chunk[],
  opening: number,
  buy: boolean,
  pxNum: number,
  factors: { readonly gain: number; readonly loss: number },
  fillID: string,
  idNum: number,
  margin: number,
  commission: CommissionModel,
  balance: Amount,
  tce: ClientExtensions | undefined,
  closedTrades: LedgerTrade[],
  stamp: FillStamp,
): void {
  note.reset();
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
  const premium =
    a.order?.type === 'GUARANTEED_STOP_LOSS' ? scaled(inst.guaranteedStopLoss.premium) : undefined;
  let filledUnits = opening;
  for (let i = 0; i < chunks.length; i++) {
    const ch = chunks[i]!;
    filledUnits += ch.units;
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
    const full = ch.units === Math.abs(ch.trade.unitsNum);
    note.partTradeID[i] = ch.trade.id;
    note.partUnits[i] = -closedUnits;
    note.partPL[i] = realized;
    note.partSpread[i] = cost;
    note.partFee[i] = chunkFee;
    note.partFull[i] = full;
    if (full) closedTrades.push(ch.trade);
  }
  note.parts = chunks.length;
  note.openUnits = 0;
  if (opening > 0) {
    const cost = convertProduct(halfSpreadInt, Math.round(opening * uScale), d + 1 + uPlaces, loss);
    spreadCost = add(spreadCost, cost);
    note.openUnits = buy ? opening : -opening;
    note.openSpread = cost;
  }
  note.openTradeID = fillID;
  note.openClientExtensions = tce;
  filledUnits = roundUnits(filledUnits);
  const charged = commission.charge(inst, filledUnits, uPlaces);
  note.id = fillID;
  note.idNum = idNum;
  note.at = parseTime(stamp.time); // the text the clock's time was just written to: cached
  note.stampAt = stamp.at;
  note.time = stamp.time;
  note.accountID = stamp.accountID;
  note.batchID = stamp.batchID;
  note.orderID = a.orderID;
  note.reason = a.marginCloseout
    ? 'MARKET_ORDER_MARGIN_CLOSEOUT'
    : a.tradeClose && a.type === 'MARKET'
      ? 'MARKET_ORDER_TRADE_CLOSE'
      : a.closeout !== 0
        ? 'MARKET_ORDER_POSITION_CLOSEOUT'
        : FILL_REASON[a.type];
  note.price = pxNum;
  note.instrument = inst.name;
  note.filledUnits = filledUnits;
  note.units = buy ? filledUnits : -filledUnits;
  note.requestedUnits = a.units;
  note.pl = pl;
  note.commission = charged;
  note.guaranteedExecutionFee = fee;
  note.halfSpreadCost = spreadCost;
  note.accountBalance = add(balance, pl - charged - fee);
  note.inst = inst;
  note.clientOrderID = a.clientOrderID;
  note.bidSnap = bidSnap;
  note.askSnap = askSnap;
  note.priceAt = a.t;
  note.gain = factors.gain;
  note.loss = factors.loss;
  note.margin = margin;
  note.guaranteed = premium !== undefined;
}

/**
 * The v20 ORDER_FILL of `f`, stamped, every amount in its text: the transaction the simulator
 * delivers to readers of objects, byte for byte what the fill path built before fills were notes.
 */
function orderFillTransaction(f: FillNote): Draft {
  const inst = f.inst!;
  const price = f.openPrice;
  const pxNum = f.price;
  const gain = formatFactor(f.gain);
  const loss = formatFactor(f.loss);
  const closed: TradeReduce[] = [];
  let reduced: TradeReduce | undefined;
  for (let i = 0; i < f.parts; i++) {
    const entry: { -readonly [K in keyof TradeReduce]: TradeReduce[K] } = {
      tradeID: f.partTradeID[i]!,
      units: String(f.partUnits[i]!),
      price,
      realizedPL: formatAmount(f.partPL[i]!),
      financing: '0.0000',
      halfSpreadCost: formatAmount(f.partSpread[i]!),
    };
    if (f.guaranteed) entry.guaranteedExecutionFee = formatAmount(f.partFee[i]!);
    if (f.partFull[i]) closed.push(entry);
    else reduced = entry;
  }
  let opened: TradeOpen | undefined;
  if (f.openUnits !== 0) {
    const o: { -readonly [K in keyof TradeOpen]: TradeOpen[K] } = {
      tradeID: f.openTradeID,
      units: String(f.openUnits),
      price,
      halfSpreadCost: formatAmount(f.openSpread),
      initialMarginRequired: formatAmount(f.margin),
    };
    if (f.openClientExtensions) o.clientExtensions = f.openClientExtensions;
    opened = o;
  }
  const units = f.units;
  // A market fill is at the bid or the ask: that side's text is the fill price's. (inst.price of a
  // snapped price is its toFixed: snap is idempotent.)
  const bidText = f.bidSnap === pxNum ? price : inst.price(f.bidSnap);
  const askText = f.askSnap === pxNum ? price : inst.price(f.askSnap);
  const unitsText = String(units);
  const requestedUnits = f.requestedUnits === units ? unitsText : String(f.requestedUnits);
  const time = f.time;
  const fullPrice = {
    type: 'PRICE',
    bids: [{ price: bidText, liquidity: 10000000 }],
    asks: [{ price: askText, liquidity: 10000000 }],
    closeoutBid: bidText,
    closeoutAsk: askText,
    timestamp: f.priceAt === f.stampAt ? time : formatTime(f.priceAt),
  };
  const reason = f.reason;
  const plText = formatAmount(f.pl);
  const commissionText = formatAmount(f.commission);
  const feeText = formatAmount(f.guaranteedExecutionFee);
  const balanceText = formatAmount(f.accountBalance);
  const spreadText = formatAmount(f.halfSpreadCost);
  const cid = f.clientOrderID;
  const tradesClosed = closed.length > 0 ? closed : undefined;
  const fillID = f.id;
  const { accountID, batchID } = f;
  // The commonest fills as one literal each, stamp included, in the field order of the general
  // form below: the transaction gets its final shape at once instead of growing a property at a
  // time (one of these per fill, with up to 25 fields).
  if (reduced === undefined) {
    if (cid !== undefined && opened !== undefined && tradesClosed === undefined) {
      return {
        type: 'ORDER_FILL',
        orderID: f.orderID,
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
        clientOrderID: cid,
        tradeOpened: opened,
        id: fillID,
        time,
        userID: 1,
        accountID,
        batchID,
      };
    }
    if (cid !== undefined && opened !== undefined) {
      return {
        type: 'ORDER_FILL',
        orderID: f.orderID,
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
        clientOrderID: cid,
        tradeOpened: opened,
        tradesClosed,
        id: fillID,
        time,
        userID: 1,
        accountID,
        batchID,
      };
    }
    if (cid === undefined && opened === undefined && tradesClosed !== undefined) {
      return {
        type: 'ORDER_FILL',
        orderID: f.orderID,
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
        tradesClosed,
        id: fillID,
        time,
        userID: 1,
        accountID,
        batchID,
      };
    }
  }
  const fill: Draft = {
    type: 'ORDER_FILL',
    orderID: f.orderID,
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
  fill.id = fillID;
  fill.time = time;
  fill.userID = 1;
  fill.accountID = accountID;
  fill.batchID = batchID;
  return fill;
}

/** Units rounded to 1e-6: sums of fractional CFD units never carry binary noise. */
export function roundUnits(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
