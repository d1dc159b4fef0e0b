import type {
  ClientExtensions,
  DateTime,
  DecimalNumber,
  GuaranteedStopLossDetails,
  InstrumentName,
  OrderID,
  OrderPositionFill,
  OrderState,
  OrderTriggerCondition,
  PriceValue,
  StopLossDetails,
  TakeProfitDetails,
  TimeInForce,
  TradeID,
  TrailingStopLossDetails,
  TransactionID,
} from './primitives.ts';

/** What an entry order does when it fills: dependent orders and the new trade's extensions. */
export interface OnFillFields {
  readonly clientExtensions?: ClientExtensions;
  readonly takeProfitOnFill?: TakeProfitDetails;
  readonly stopLossOnFill?: StopLossDetails;
  readonly trailingStopLossOnFill?: TrailingStopLossDetails;
  /** @since after 3.0.25 */
  readonly guaranteedStopLossOnFill?: GuaranteedStopLossDetails;
  readonly tradeClientExtensions?: ClientExtensions;
}

/** Fields shared by the entry order requests (MARKET, LIMIT, STOP, MARKET_IF_TOUCHED). */
interface EntryRequest extends OnFillFields {
  readonly instrument: InstrumentName;
  readonly units: DecimalNumber;
  readonly timeInForce?: TimeInForce;
  readonly positionFill?: OrderPositionFill;
}

export interface MarketOrderRequest extends EntryRequest {
  readonly type: 'MARKET';
  readonly priceBound?: PriceValue;
}

export interface LimitOrderRequest extends EntryRequest {
  readonly type: 'LIMIT';
  readonly price: PriceValue;
  readonly gtdTime?: DateTime;
  readonly triggerCondition?: OrderTriggerCondition;
}

export interface StopOrderRequest extends EntryRequest {
  readonly type: 'STOP';
  readonly price: PriceValue;
  readonly priceBound?: PriceValue;
  readonly gtdTime?: DateTime;
  readonly triggerCondition?: OrderTriggerCondition;
}

export interface MarketIfTouchedOrderRequest extends EntryRequest {
  readonly type: 'MARKET_IF_TOUCHED';
  readonly price: PriceValue;
  readonly priceBound?: PriceValue;
  readonly gtdTime?: DateTime;
  readonly triggerCondition?: OrderTriggerCondition;
}

/** Fields shared by the dependent order requests (attached to a trade). */
interface DependentRequest {
  readonly tradeID: TradeID;
  readonly clientTradeID?: string;
  readonly timeInForce?: TimeInForce;
  readonly gtdTime?: DateTime;
  readonly triggerCondition?: OrderTriggerCondition;
  readonly clientExtensions?: ClientExtensions;
}

export interface TakeProfitOrderRequest extends DependentRequest {
  readonly type: 'TAKE_PROFIT';
  readonly price: PriceValue;
}

export interface StopLossOrderRequest extends DependentRequest {
  readonly type: 'STOP_LOSS';
  readonly price?: PriceValue;
  readonly distance?: DecimalNumber;
  readonly guaranteed?: boolean;
}

export interface TrailingStopLossOrderRequest extends DependentRequest {
  readonly type: 'TRAILING_STOP_LOSS';
  readonly distance: DecimalNumber;
}

/** @since after 3.0.25 */
export interface GuaranteedStopLossOrderRequest extends DependentRequest {
  readonly type: 'GUARANTEED_STOP_LOSS';
  readonly price?: PriceValue;
  readonly distance?: DecimalNumber;
}

/** The body of POST /v3/accounts/{id}/orders (`{ order: OrderRequest }`), a union on `type`. */
export type OrderRequest =
  | MarketOrderRequest
  | LimitOrderRequest
  | StopOrderRequest
  | MarketIfTouchedOrderRequest
  | TakeProfitOrderRequest
  | StopLossOrderRequest
  | TrailingStopLossOrderRequest
  | GuaranteedStopLossOrderRequest;

/** Fields every Order carries (GET orders). */
interface OrderBase {
  readonly id: OrderID;
  readonly createTime: DateTime;
  readonly state: OrderState;
  readonly clientExtensions?: ClientExtensions;
  readonly fillingTransactionID?: TransactionID;
  readonly filledTime?: DateTime;
  readonly tradeOpenedID?: TradeID;
  readonly tradeReducedID?: TradeID;
  readonly tradeClosedIDs?: TradeID[];
  readonly cancellingTransactionID?: TransactionID;
  readonly cancelledTime?: DateTime;
  readonly replacesOrderID?: OrderID;
  readonly replacedByOrderID?: OrderID;
}

type AsOrder<R, T extends string> = Omit<R, 'type'> & OrderBase & { readonly type: T };

export type MarketOrder = AsOrder<MarketOrderRequest, 'MARKET'>;
export type LimitOrder = AsOrder<LimitOrderRequest, 'LIMIT'>;
export type StopOrder = AsOrder<StopOrderRequest, 'STOP'>;
export type MarketIfTouchedOrder = AsOrder<MarketIfTouchedOrderRequest, 'MARKET_IF_TOUCHED'> & {
  readonly initialMarketPrice?: PriceValue;
};
export type TakeProfitOrder = AsOrder<TakeProfitOrderRequest, 'TAKE_PROFIT'>;
export type StopLossOrder = AsOrder<StopLossOrderRequest, 'STOP_LOSS'>;
export type TrailingStopLossOrder = AsOrder<TrailingStopLossOrderRequest, 'TRAILING_STOP_LOSS'> & {
  readonly trailingStopValue?: PriceValue;
};
export type GuaranteedStopLossOrder = AsOrder<GuaranteedStopLossOrderRequest, 'GUARANTEED_STOP_LOSS'>;

/** An order as GET /orders returns it, a union on `type`. */
export type Order =
  | MarketOrder
  | LimitOrder
  | StopOrder
  | MarketIfTouchedOrder
  | TakeProfitOrder
  | StopLossOrder
  | TrailingStopLossOrder
  | GuaranteedStopLossOrder;
