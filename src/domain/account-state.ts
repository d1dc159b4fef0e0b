import type { InstrumentRegistry } from './instrument.ts';
import type { Ledger, LedgerOrder, LedgerTrade } from './ledger.ts';
import { amount, formatAmount, MoneyError } from './money.ts';
import { parseTime } from './time.ts';
import type { ClientExtensions, Order, Transaction } from './v20/index.ts';

// An account state (v20's Account form) restored into a ledger: one code path for the simulator
// (`SimBroker.seed`, adapters/sim/seed.ts) and the live runner's portfolio (its reconciled or
// journaled baseline), and the conversions between a ledger and that form.

/**
 * An open trade as v20 lists it: a TradeSummary (`GET /accounts/{id}`: dependent orders by ID) or a
 * Trade (`GET /trades`: dependent orders inline). Only the fields that make the state are read.
 */
export interface AccountTrade {
  readonly id: string;
  readonly instrument: string;
  readonly price: string;
  readonly openTime: string;
  /** Defaults to `currentUnits` (a trade never reduced). */
  readonly initialUnits?: string;
  /** Signed, as v20 reports it (negative = short). */
  readonly currentUnits: string;
  readonly realizedPL?: string;
  readonly financing?: string;
  readonly clientExtensions?: ClientExtensions;
  readonly takeProfitOrderID?: string;
  readonly stopLossOrderID?: string;
  readonly trailingStopLossOrderID?: string;
  readonly guaranteedStopLossOrderID?: string;
  readonly takeProfitOrder?: Order;
  readonly stopLossOrder?: Order;
  readonly trailingStopLossOrder?: Order;
  readonly guaranteedStopLossOrder?: Order;
}

/**
 * An account state a ledger can be restored from: the fields of v20's Account (`GET /v3/accounts/{id}`)
 * that make the state. The runner's reconciled baseline has this shape, and so has
 * `SimBroker.snapshot()`, so a simulator can be saved and started again from its own state.
 */
export interface AccountState {
  /** The account's last transaction: the simulator's own IDs continue after it. */
  readonly lastTransactionID: string;
  readonly balance: string;
  /** Account totals (realized P/L, financing, commission, fees); 0 when absent. */
  readonly pl?: string;
  readonly financing?: string;
  readonly commission?: string;
  readonly guaranteedExecutionFees?: string;
  readonly trades?: readonly AccountTrade[];
  /** Pending orders, the trades' dependent orders included (v20 lists them here). Orders in another state are ignored. */
  readonly orders?: readonly Order[];
  /** Realized P/L per instrument (from the account's positions, `pl`); reporting only. */
  readonly positions?: readonly { readonly instrument: string; readonly pl?: string }[];
  /** fxflow: the simulator's clock when the state was taken (v20 time); absent in a v20 Account. */
  readonly time?: string;
  /**
   * fxflow: the latest prices the simulator had seen; absent in a v20 Account. They are the market
   * until the next price: a MARKET_IF_TOUCHED order's initial price, a trailing stop's first level,
   * margin and conversion of other instruments.
   */
  readonly quotes?: readonly { readonly instrument: string; readonly bid: number; readonly ask: number }[];
}

/**
 * An account state that cannot be restored (a broken field): names the field and what is wrong.
 * The simulator exports it as `SimSeedError` (the same class).
 */
export class AccountStateError extends Error {
  readonly code = 'ACCOUNT_STATE' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AccountStateError';
  }
}

/** Order types that rest in the simulator's books (MARKET and FIXED_PRICE never do). */
const RESTING = new Set([
  'LIMIT',
  'STOP',
  'MARKET_IF_TOUCHED',
  'TAKE_PROFIT',
  'STOP_LOSS',
  'TRAILING_STOP_LOSS',
  'GUARANTEED_STOP_LOSS',
]);
const DEPENDENT = new Set(['TAKE_PROFIT', 'STOP_LOSS', 'TRAILING_STOP_LOSS', 'GUARANTEED_STOP_LOSS']);

/**
 * The fields an order shares with the transaction that created it (v20's Order definitions against
 * its *_ORDER transactions): what is carried between the two forms. Order-only fields (state,
 * createTime, fill and cancel references, trailingStopValue) and transaction-only fields (time,
 * batchID, userID, accountID, reason, orderFillTransactionID) are not.
 */
const SHARED_FIELDS = [
  'instrument',
  'units',
  'price',
  'distance',
  'tradeID',
  'clientTradeID',
  'timeInForce',
  'gtdTime',
  'priceBound',
  'positionFill',
  'triggerCondition',
  'initialMarketPrice',
  'guaranteed',
  'guaranteedExecutionPremium',
  'replacesOrderID',
  'clientExtensions',
  'takeProfitOnFill',
  'stopLossOnFill',
  'trailingStopLossOnFill',
  'guaranteedStopLossOnFill',
  'tradeClientExtensions',
] as const;

type Obj = Record<string, unknown>;

/** A non-negative whole transaction ID, or an error naming `where`. */
function transactionID(v: unknown, where: string): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n))
    throw new AccountStateError(
      `${where}: ${JSON.stringify(v)} is not a transaction ID (a whole number as a string, e.g. "1234")`,
    );
  return n;
}

function decimalAmount(v: unknown, where: string): number {
  if (typeof v !== 'string')
    throw new AccountStateError(
      `${where}: expected a decimal string (e.g. "100000.0000"), got ${JSON.stringify(v)}`,
    );
  try {
    return amount(v);
  } catch (e) {
    if (e instanceof MoneyError)
      throw new AccountStateError(
        `${where}: ${JSON.stringify(v)} is not a decimal amount in the account currency (e.g. "-12.3400")`,
        { cause: e },
      );
    throw e;
  }
}

function finiteNumber(v: unknown, where: string, what: string): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) throw new AccountStateError(`${where}: ${JSON.stringify(v)} is not ${what}`);
  return n;
}

function time(v: unknown, where: string): number {
  const ms = typeof v === 'string' ? parseTime(v) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new AccountStateError(
      `${where}: ${JSON.stringify(v)} is not a v20 time (RFC 3339, e.g. "2024-01-02T10:00:00.000000000Z", or UNIX seconds)`,
    );
  return ms;
}

/**
 * The transaction that would have created `order` (v20's `<TYPE>_ORDER`), with the order's own ID
 * and creation time: folding it gives the ledger the pending order exactly as folding the original
 * would have (the fields a fill later reads, on-fill details and trade extensions among them).
 */
export function orderCreateOf(order: Order, accountID: string): Transaction {
  const o = order as unknown as Obj;
  const tx: Obj = {
    id: order.id,
    time: order.createTime,
    type: `${order.type}_ORDER`,
    accountID,
    userID: 1,
    batchID: order.id,
  };
  for (const k of SHARED_FIELDS) if (o[k] !== undefined) tx[k] = o[k];
  return tx as unknown as Transaction;
}

/** A pending order back in v20's Order form, from the transaction that created it (the inverse of `orderCreateOf`). */
export function orderOf(o: LedgerOrder, trailingStopValue: string | undefined): Order {
  const c = o.created as unknown as Obj;
  const out: Obj = { id: o.id, createTime: c.time, type: o.type, state: 'PENDING' };
  for (const k of SHARED_FIELDS) if (c[k] !== undefined) out[k] = c[k];
  // The ledger keeps the current extensions (a modify changes them, not the create transaction).
  if (o.clientExtensions !== undefined) out.clientExtensions = o.clientExtensions;
  else delete out.clientExtensions;
  if (trailingStopValue !== undefined) out.trailingStopValue = trailingStopValue;
  return out as unknown as Order;
}

/** A ledger trade in v20's TradeSummary form. */
export function tradeSummaryOf(t: LedgerTrade): AccountTrade {
  const out: { -readonly [K in keyof AccountTrade]: AccountTrade[K] } = {
    id: t.id,
    instrument: t.instrument,
    price: t.price,
    openTime: t.openTime,
    initialUnits: t.initialUnits,
    currentUnits: String(t.unitsNum),
    realizedPL: formatAmount(t.realizedPL),
    financing: formatAmount(t.financing),
  };
  if (t.clientExtensions !== undefined) out.clientExtensions = t.clientExtensions;
  if (t.takeProfitOrderID !== undefined) out.takeProfitOrderID = t.takeProfitOrderID;
  if (t.stopLossOrderID !== undefined) out.stopLossOrderID = t.stopLossOrderID;
  if (t.trailingStopLossOrderID !== undefined) out.trailingStopLossOrderID = t.trailingStopLossOrderID;
  if (t.guaranteedStopLossOrderID !== undefined) out.guaranteedStopLossOrderID = t.guaranteedStopLossOrderID;
  return out;
}

/** What `restoreAccount` hands back (for a simulator's books). */
export interface Restored {
  /** A pending trailing stop's current level (v20 trailingStopValue) by order ID, where the state gives it. */
  readonly trailing: Map<string, number>;
}

/**
 * Restores an account state into an empty ledger, as a fold would have left it. Use it wherever
 * an account is restored rather than folded from its first transaction: a simulator started from an
 * account (`SimBroker.seed`), the runner's portfolio from the reconciled account or its journal's
 * baseline.
 *
 * What transactions can express goes through `Ledger.apply`: every pending order (dependent orders
 * included) is folded as the transaction that created it (`orderCreateOf`), in ID order, which links
 * each dependent order to its trade exactly as a live fold does. What no single transaction can
 * express is written directly, as a documented restore: the open trades (a trade's current size,
 * realized P/L and financing are the sum of its history, which the account does not list) and the
 * account totals (balance, P/L, financing, commission, fees). Finally a no-op transaction at the
 * account's `lastTransactionID` moves the ledger's mark there, so older transactions are ignored.
 *
 * Checks every field it reads and throws `AccountStateError` naming it (`trades[2] (id 57).currentUnits`):
 * instruments not in `instruments` (when given: a simulator can only trade those; a live account's
 * portfolio passes none and takes any), broken numbers or times, a dependent order whose trade is
 * not open, IDs above `lastTransactionID`, a trade naming a dependent order that is not among the
 * pending orders. Orders of types that never rest (MARKET, FIXED_PRICE: in flight at the broker)
 * are left out.
 */
export function restoreAccount(
  ledger: Ledger,
  state: AccountState,
  instruments: InstrumentRegistry | undefined,
  accountID: string,
): Restored {
  if (ledger.applied > 0 || ledger.trades.size > 0 || ledger.pendingOrders.size > 0)
    throw new AccountStateError(
      'account state: the ledger is not empty; restore into a new ledger (a new simulator or portfolio)',
    );
  const last = transactionID(state.lastTransactionID, 'account state.lastTransactionID');
  const balance = decimalAmount(state.balance, 'account state.balance');

  // Trades, oldest first (v20's reduction order): IDs grow with time.
  const trades = [...(state.trades ?? [])]
    .map((t, i) => ({ t, i }))
    .sort((a, b) => Number(a.t.id) - Number(b.t.id));
  const orders: Order[] = [];
  const seenOrders = new Set<string>();
  const addOrder = (o: Order): void => {
    if (seenOrders.has(o.id)) return;
    seenOrders.add(o.id);
    orders.push(o);
  };
  const named: {
    trade: string;
    slot: 'takeProfitOrderID' | 'stopLossOrderID' | 'trailingStopLossOrderID' | 'guaranteedStopLossOrderID';
    id: string;
  }[] = [];
  for (const { t, i } of trades) {
    const where = `account state.trades[${i}] (id ${t.id})`;
    const id = transactionID(t.id, `account state.trades[${i}].id`);
    if (id > last)
      throw new AccountStateError(
        `${where}: the trade ID is above lastTransactionID ${state.lastTransactionID}; the state is not one account's`,
      );
    if (ledger.trades.has(t.id)) throw new AccountStateError(`${where}: a second trade with this ID`);
    if (typeof t.instrument !== 'string' || (instruments !== undefined && !instruments.has(t.instrument)))
      throw new AccountStateError(
        `${where}.instrument: ${JSON.stringify(t.instrument)} is not a known instrument`,
      );
    const price = finiteNumber(t.price, `${where}.price`, 'a price');
    const units = finiteNumber(t.currentUnits, `${where}.currentUnits`, 'a signed number of units');
    if (units === 0)
      throw new AccountStateError(
        `${where}.currentUnits: 0 (a closed trade is not an open one; leave it out)`,
      );
    const initial = t.initialUnits ?? t.currentUnits;
    finiteNumber(initial, `${where}.initialUnits`, 'a signed number of units');
    const openMs = time(t.openTime, `${where}.openTime`);
    const trade: LedgerTrade = {
      id: t.id,
      instrument: t.instrument,
      price: t.price,
      priceNum: price,
      openTime: t.openTime,
      openMs,
      initialUnits: initial,
      unitsNum: units,
      realizedPL: t.realizedPL !== undefined ? decimalAmount(t.realizedPL, `${where}.realizedPL`) : 0,
      financing: t.financing !== undefined ? decimalAmount(t.financing, `${where}.financing`) : 0,
      halfSpreadCost: 0,
      commission: 0,
      // The slots exist from the start, filled by the orders' fold below (the ledger's own shape).
      takeProfitOrderID: undefined,
      stopLossOrderID: undefined,
      trailingStopLossOrderID: undefined,
      guaranteedStopLossOrderID: undefined,
      clientExtensions: t.clientExtensions || undefined,
    };
    ledger.trades.set(t.id, trade);
    for (const o of [t.takeProfitOrder, t.stopLossOrder, t.trailingStopLossOrder, t.guaranteedStopLossOrder])
      if (o !== undefined) addOrder(o);
    for (const [slot, oid] of [
      ['takeProfitOrderID', t.takeProfitOrderID],
      ['stopLossOrderID', t.stopLossOrderID],
      ['trailingStopLossOrderID', t.trailingStopLossOrderID],
      ['guaranteedStopLossOrderID', t.guaranteedStopLossOrderID],
    ] as const) {
      if (oid !== undefined) named.push({ trade: t.id, slot, id: oid });
    }
  }
  for (const o of state.orders ?? []) addOrder(o);

  // Pending orders as their create transactions, folded in ID order.
  const creates: { id: number; tx: Transaction }[] = [];
  const trailing = new Map<string, number>();
  const state_ = (o: Order): string | undefined => (o as { state?: string }).state;
  for (let i = 0; i < orders.length; i++) {
    const o = orders[i]!;
    const where = `account state.orders (id ${String(o.id)}, ${String(o.type)})`;
    if (state_(o) !== undefined && state_(o) !== 'PENDING') continue;
    if (o.type === 'MARKET' || (o.type as string) === 'FIXED_PRICE') continue;
    if (!RESTING.has(o.type))
      throw new AccountStateError(
        `${where}.type: ${JSON.stringify(o.type)} is not a v20 order type the simulator can hold (${[...RESTING].join(', ')})`,
      );
    const id = transactionID(o.id, `${where}.id`);
    if (id > last)
      throw new AccountStateError(
        `${where}: the order ID is above lastTransactionID ${state.lastTransactionID}; the state is not one account's`,
      );
    time(o.createTime, `${where}.createTime`);
    const x = o as unknown as Obj;
    if (DEPENDENT.has(o.type)) {
      const trade = typeof x.tradeID === 'string' ? ledger.trades.get(x.tradeID) : undefined;
      if (trade === undefined)
        throw new AccountStateError(
          `${where}.tradeID: ${JSON.stringify(x.tradeID)} is not among the open trades (a dependent order needs its trade)`,
        );
    } else {
      if (typeof x.instrument !== 'string' || (instruments !== undefined && !instruments.has(x.instrument)))
        throw new AccountStateError(
          `${where}.instrument: ${JSON.stringify(x.instrument)} is not a known instrument`,
        );
      if (finiteNumber(x.units, `${where}.units`, 'a signed number of units') === 0)
        throw new AccountStateError(`${where}.units: 0`);
    }
    if (o.type === 'TRAILING_STOP_LOSS') {
      finiteNumber(x.distance, `${where}.distance`, 'a price distance');
      if (x.trailingStopValue !== undefined)
        trailing.set(o.id, finiteNumber(x.trailingStopValue, `${where}.trailingStopValue`, 'a price'));
    } else if (x.price !== undefined) finiteNumber(x.price, `${where}.price`, 'a price');
    else if (o.type !== 'STOP_LOSS' && o.type !== 'GUARANTEED_STOP_LOSS')
      throw new AccountStateError(`${where}.price: missing`);
    else finiteNumber(x.distance, `${where}.distance`, 'a price distance (the order has no price)');
    creates.push({ id, tx: orderCreateOf(o, accountID) });
  }
  creates.sort((a, b) => a.id - b.id);
  for (let i = 1; i < creates.length; i++)
    if (creates[i]!.id === creates[i - 1]!.id)
      throw new AccountStateError(`account state.orders: two orders with ID ${creates[i]!.id}`);
  for (const c of creates) {
    if (ledger.trades.has(c.tx.id))
      throw new AccountStateError(
        `account state.orders (id ${c.tx.id}): a trade has the same ID (each ID is one transaction)`,
      );
    const before = ledger.pendingOrders.size;
    ledger.apply(c.tx);
    if (ledger.pendingOrders.size === before)
      throw new AccountStateError(`account state.orders (id ${c.tx.id}): not folded (IDs must be above 0)`);
  }
  // A dependent order that a trade names must be pending, and be the one in the trade's slot.
  for (const n of named) {
    const trade = ledger.trades.get(n.trade)!;
    if (trade[n.slot] !== n.id) {
      throw new AccountStateError(
        `account state.trades (id ${n.trade}).${n.slot}: order ${n.id} is not among the pending orders of that trade${trade[n.slot] !== undefined ? ` (order ${String(trade[n.slot])} is)` : ''}`,
      );
    }
  }

  ledger.balance = balance;
  ledger.pl = state.pl !== undefined ? decimalAmount(state.pl, 'account state.pl') : 0;
  ledger.financing =
    state.financing !== undefined ? decimalAmount(state.financing, 'account state.financing') : 0;
  ledger.commission =
    state.commission !== undefined ? decimalAmount(state.commission, 'account state.commission') : 0;
  ledger.guaranteedExecutionFees =
    state.guaranteedExecutionFees !== undefined
      ? decimalAmount(state.guaranteedExecutionFees, 'account state.guaranteedExecutionFees')
      : 0;
  for (const [i, p] of (state.positions ?? []).entries()) {
    if (p.pl !== undefined && p.pl !== '0.0000' && p.pl !== '0')
      ledger.instrumentPL.set(p.instrument, decimalAmount(p.pl, `account state.positions[${i}].pl`));
  }
  ledger.version++;
  // A no-op transaction (it carries no money and no state) moves the ledger's mark to the account's last ID.
  if (last > Number(ledger.lastTransactionID))
    ledger.apply({
      id: state.lastTransactionID,
      type: 'CLIENT_CONFIGURE',
      time: '',
      accountID,
      userID: 1,
      batchID: state.lastTransactionID,
    } as unknown as Transaction);
  return { trailing };
}
