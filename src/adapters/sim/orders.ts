import type { Instrument } from '../../domain/instrument.ts';
import type { LedgerOrder } from '../../domain/ledger.ts';
import type { ClientExtensions, Transaction } from '../../domain/v20/index.ts';
import type { Draft } from './draft.ts';

/** Order types the simulator keeps resting, and MARKET, which waits only for the next price. */
export type SimOrderType =
  | 'MARKET'
  | 'LIMIT'
  | 'STOP'
  | 'MARKET_IF_TOUCHED'
  | 'TAKE_PROFIT'
  | 'STOP_LOSS'
  | 'TRAILING_STOP_LOSS'
  | 'GUARANTEED_STOP_LOSS';

/** How an order compares the market: v20 triggerCondition, resolved to the side it reads. */
export type TriggerSide = 'BID' | 'ASK' | 'MID';

/**
 * The simulator's working form of a pending order: numbers for matching, the creating
 * transaction for everything v20 echoes back. Mutable: trailing stops move `level`.
 *
 * It is also the ledger's pending order (`LedgerOrder`: `id`, `type`, `created`, `instrument`,
 * `tradeID`, `clientExtensions`, the same values the ledger would file): the simulator hands it to
 * the ledger with its create transaction (`TransactionLog.publish`), so `ledger.pendingOrders` is
 * the one index of pending orders by ID (`SimState.order`). Market orders are no working orders:
 * the ledger files its own `LedgerOrder` for them until their fill or cancel.
 */
export interface SimOrder extends LedgerOrder {
  readonly id: string;
  readonly type: SimOrderType;
  /** The instrument (for dependent orders, their trade's). */
  readonly inst: Instrument;
  /** The create transaction's instrument (the ledger's field): undefined for dependent orders. */
  readonly instrument: string | undefined;
  /** +1 buys (fills at the ask), -1 sells (fills at the bid). */
  readonly side: 1 | -1;
  /** Signed units for entry orders; undefined for dependent orders (they close their trade). */
  readonly units: number | undefined;
  /** Trigger level (limit/stop/TP/SL price, or the trailing stop's current value). */
  level: number;
  /** Trailing distance in price units (TRAILING_STOP_LOSS only). */
  readonly distance: number;
  readonly tradeID: string | undefined;
  /** Worst acceptable fill price (priceBound), NaN when unset. */
  readonly priceBound: number;
  readonly trigger: TriggerSide;
  /** For MARKET_IF_TOUCHED: +1 when the level was above the market at creation, -1 below. */
  readonly direction: 1 | -1 | 0;
  /** MARKET_IF_TOUCHED: the price its direction was decided against (v20's initialMarketPrice). */
  readonly initialMarketPrice: number | undefined;
  /** GTD/GFD expiry in ms, Infinity for GTC. */
  readonly expiresAt: number;
  /** Earliest price time this order may act on: nothing fills on a price seen before it existed. */
  readonly activeFrom: number;
  readonly created: Transaction;
  /** Client order ID (clientExtensions.id), for @clientID specifiers; replaced by a client extensions modify. */
  clientID: string | undefined;
  /** The order's client extensions as the ledger keeps them (the ledger's field: a modify replaces them). */
  clientExtensions: ClientExtensions | undefined;
  /** FOK/IOC entry order (LIMIT, STOP): fills at the first price after it was created or is cancelled. */
  readonly immediate: boolean;
  /** `isLimitLike` of the order, fixed at creation (read on every candle by the quick path). */
  readonly limitLike: boolean;
  /** True while the order is pending (cleared when it fills or is cancelled): a field, not a map lookup, on the hot path. */
  live: boolean;
}

/**
 * Whether `o` triggers at a price point. Limit-like orders (LIMIT, TAKE_PROFIT, MIT on the
 * favourable side) trigger when the market reaches the level from the order's good side; stop-like
 * orders (STOP, STOP_LOSS, TRAILING_STOP_LOSS, MIT on the other side) when it is at or beyond it.
 */
export function triggers(o: SimOrder, bid: number, ask: number): boolean {
  const px = o.trigger === 'BID' ? bid : o.trigger === 'ASK' ? ask : (bid + ask) / 2;
  if (o.limitLike) return o.side === 1 ? px <= o.level : px >= o.level;
  return o.side === 1 ? px >= o.level : px <= o.level;
}

/** Limit-like: fills at the level or better. Stop-like: fills at the level or worse. */
export function isLimitLike(o: SimOrder): boolean {
  return limitLikeOf(o.type, o.side, o.direction);
}

/** `isLimitLike` of an order of `type`, `side` and MIT `direction` (before the order object exists). */
export function limitLikeOf(type: SimOrderType, side: 1 | -1, direction: 1 | -1 | 0): boolean {
  switch (type) {
    case 'LIMIT':
    case 'TAKE_PROFIT':
      return true;
    case 'MARKET_IF_TOUCHED':
      // A buy MIT below the market acts like a limit; above, like a stop (and the reverse for sells).
      return side === 1 ? direction === -1 : direction === 1;
    default:
      return false;
  }
}

/** The trigger side of v20's DEFAULT condition: buys compare the ask, sells the bid; INVERSE swaps. */
export function resolveTrigger(condition: string | undefined, side: 1 | -1): TriggerSide {
  switch (condition) {
    case 'BID':
      return 'BID';
    case 'ASK':
      return 'ASK';
    case 'MID':
      return 'MID';
    case 'INVERSE':
      return side === 1 ? 'BID' : 'ASK';
    default:
      return side === 1 ? 'ASK' : 'BID';
  }
}

/** What a working order needs of its simulator to build its transaction (SimState has it). */
export interface OrderEnv {
  readonly accountID: string;
  readonly stats: { orderObjects: number };
}

/** The create transaction type of each order type. */
const CREATE_TYPE: Readonly<Record<SimOrderType, string>> = {
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
 * The one class of every working order (one shape: the matching loop's reads stay monomorphic).
 * Its create transaction is given (`setCreated`), or, for the common on-fill dependent order (no
 * client IDs, no GTD time, no premium), kept as the few values it is made of (`setOnFill`) and
 * built at the first read of `created`, the same object for every later reader: a run in which
 * nobody reads it (a sweep's trial, a backtest without a run folder) builds none.
 */
export class WorkingOrder implements SimOrder {
  id = '';
  type: SimOrderType = 'MARKET';
  instrument: string | undefined = undefined;
  side: 1 | -1 = 1;
  units: number | undefined = undefined;
  level = 0;
  distance = 0;
  tradeID: string | undefined = undefined;
  priceBound = Number.NaN;
  trigger: TriggerSide = 'ASK';
  direction: 1 | -1 | 0 = 0;
  initialMarketPrice: number | undefined = undefined;
  expiresAt = Infinity;
  activeFrom = 0;
  clientID: string | undefined = undefined;
  clientExtensions: ClientExtensions | undefined = undefined;
  immediate = false;
  limitLike = false;
  live = true;
  /** The create transaction, once given or built. */
  #created: Transaction | undefined = undefined;
  /** What a lazy on-fill order's transaction is made of besides the fields above: its time in force, distance text, time and batch. */
  #timeInForce = '';
  #distanceText: string | undefined = undefined;
  #time = '';
  #batchID = '';

  constructor(
    readonly inst: Instrument,
    /** The simulator: its account ID (the stamp) and where orders whose transaction was built when asked for are counted. */
    private readonly sim: OrderEnv | undefined,
  ) {}

  /** The create transaction: given, or built now from its values (once). */
  get created(): Transaction {
    if (this.#created === undefined) {
      this.#created = this.#onFillTransaction();
      this.sim!.stats.orderObjects++;
    }
    return this.#created;
  }

  /** Whether the create transaction exists yet (given, or built by a reader). */
  get createdBuilt(): boolean {
    return this.#created !== undefined;
  }

  setCreated(tx: Transaction): this {
    this.#created = tx;
    return this;
  }

  /**
   * A common on-fill order of the trade its fill opened (`tradeID`, the fill's ID), its fields set:
   * its transaction (the type's, ON_FILL) with `timeInForce`, `distanceText` (kept as the request
   * wrote it, or undefined), its price (the level, but for a trailing stop), stamped `id`, `time`,
   * the account and `batchID`, built when read.
   */
  setOnFill(timeInForce: string, distanceText: string | undefined, time: string, batchID: string): this {
    this.#timeInForce = timeInForce;
    this.#distanceText = distanceText;
    this.#time = time;
    this.#batchID = batchID;
    return this;
  }

  /** The on-fill order's v20 transaction, byte for byte the literal the fill path wrote before orders were notes. */
  #onFillTransaction(): Transaction {
    const type = CREATE_TYPE[this.type];
    const fillID = this.tradeID!;
    const timeInForce = this.#timeInForce;
    const id = this.id;
    const time = this.#time;
    const accountID = this.sim!.accountID;
    const batchID = this.#batchID;
    const distance = this.#distanceText;
    // A trailing stop's level moves and its transaction has no price; the others' level is their price.
    const price = this.type === 'TRAILING_STOP_LOSS' ? undefined : this.inst.price(this.level);
    let tx: Draft;
    if (distance === undefined) {
      tx =
        price === undefined
          ? {
              type,
              tradeID: fillID,
              reason: 'ON_FILL',
              orderFillTransactionID: fillID,
              timeInForce,
              triggerCondition: 'DEFAULT',
              id,
              time,
              userID: 1,
              accountID,
              batchID,
            }
          : {
              type,
              tradeID: fillID,
              reason: 'ON_FILL',
              orderFillTransactionID: fillID,
              timeInForce,
              price,
              triggerCondition: 'DEFAULT',
              id,
              time,
              userID: 1,
              accountID,
              batchID,
            };
    } else {
      tx =
        price === undefined
          ? {
              type,
              tradeID: fillID,
              reason: 'ON_FILL',
              orderFillTransactionID: fillID,
              timeInForce,
              distance,
              triggerCondition: 'DEFAULT',
              id,
              time,
              userID: 1,
              accountID,
              batchID,
            }
          : {
              type,
              tradeID: fillID,
              reason: 'ON_FILL',
              orderFillTransactionID: fillID,
              timeInForce,
              distance,
              price,
              triggerCondition: 'DEFAULT',
              id,
              time,
              userID: 1,
              accountID,
              batchID,
            };
    }
    return tx as unknown as Transaction;
  }
}
