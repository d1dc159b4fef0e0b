/**
 * v20 scalar and enum types (OpenAPI 3.0.25 names). Decimal values stay strings, as on the wire:
 * parse them once, at the edge where they are needed (numbers on the hot path, Decimal in the ledger).
 */
export type DecimalNumber = string;
export type PriceValue = string;
export type AccountUnits = string;
export type DateTime = string;
export type AccountID = string;
export type TransactionID = string;
export type OrderID = string;
export type TradeID = string;
export type InstrumentName = string;
export type Currency = string;

export type TimeInForce = 'GTC' | 'GTD' | 'GFD' | 'FOK' | 'IOC';
/** Pre-GA responses (the recorded fixtures) also carry POSITION_DEFAULT. */
export type OrderPositionFill = 'OPEN_ONLY' | 'REDUCE_FIRST' | 'REDUCE_ONLY' | 'DEFAULT' | 'POSITION_DEFAULT';
/** Pre-GA responses also carry TRIGGER_DEFAULT. */
export type OrderTriggerCondition = 'DEFAULT' | 'INVERSE' | 'BID' | 'ASK' | 'MID' | 'TRIGGER_DEFAULT';
export type OrderType =
  | 'MARKET'
  | 'LIMIT'
  | 'STOP'
  | 'MARKET_IF_TOUCHED'
  | 'TAKE_PROFIT'
  | 'STOP_LOSS'
  | 'TRAILING_STOP_LOSS'
  | 'FIXED_PRICE'
  | 'GUARANTEED_STOP_LOSS';
export type OrderState = 'PENDING' | 'FILLED' | 'TRIGGERED' | 'CANCELLED';
export type TradeState = 'OPEN' | 'CLOSED' | 'CLOSE_WHEN_TRADEABLE';
export type InstrumentType = 'CURRENCY' | 'CFD' | 'METAL';
export type FundingReason =
  'CLIENT_FUNDING' | 'ACCOUNT_TRANSFER' | 'DIVISION_MIGRATION' | 'SITE_MIGRATION' | 'ADJUSTMENT';
export type CandlestickGranularity =
  | 'S5'
  | 'S10'
  | 'S15'
  | 'S30'
  | 'M1'
  | 'M2'
  | 'M4'
  | 'M5'
  | 'M10'
  | 'M15'
  | 'M30'
  | 'H1'
  | 'H2'
  | 'H3'
  | 'H4'
  | 'H6'
  | 'H8'
  | 'H12'
  | 'D'
  | 'W'
  | 'M';

export type OrderFillReason =
  | 'LIMIT_ORDER'
  | 'STOP_ORDER'
  | 'MARKET_IF_TOUCHED_ORDER'
  | 'TAKE_PROFIT_ORDER'
  | 'STOP_LOSS_ORDER'
  | 'GUARANTEED_STOP_LOSS_ORDER'
  | 'TRAILING_STOP_LOSS_ORDER'
  | 'MARKET_ORDER'
  | 'MARKET_ORDER_TRADE_CLOSE'
  | 'MARKET_ORDER_POSITION_CLOSEOUT'
  | 'MARKET_ORDER_MARGIN_CLOSEOUT'
  | 'MARKET_ORDER_DELAYED_TRADE_CLOSE'
  | 'FIXED_PRICE_ORDER'
  | 'FIXED_PRICE_ORDER_PLATFORM_ACCOUNT_MIGRATION'
  | 'FIXED_PRICE_ORDER_DIVISION_ACCOUNT_MIGRATION'
  | 'FIXED_PRICE_ORDER_ADMINISTRATIVE_ACTION';

export type MarketOrderReason =
  'CLIENT_ORDER' | 'TRADE_CLOSE' | 'POSITION_CLOSEOUT' | 'MARGIN_CLOSEOUT' | 'DELAYED_TRADE_CLOSE';

export type OrderCancelReason =
  | 'INTERNAL_SERVER_ERROR'
  | 'ACCOUNT_LOCKED'
  | 'ACCOUNT_NEW_POSITIONS_LOCKED'
  | 'ACCOUNT_ORDER_CREATION_LOCKED'
  | 'ACCOUNT_ORDER_FILL_LOCKED'
  | 'CLIENT_REQUEST'
  | 'MIGRATION'
  | 'MARKET_HALTED'
  | 'LINKED_TRADE_CLOSED'
  | 'TIME_IN_FORCE_EXPIRED'
  | 'INSUFFICIENT_MARGIN'
  | 'FIFO_VIOLATION'
  | 'BOUNDS_VIOLATION'
  | 'CLIENT_REQUEST_REPLACED'
  | 'INSUFFICIENT_LIQUIDITY'
  | 'TAKE_PROFIT_ON_FILL_GTD_TIMESTAMP_IN_PAST'
  | 'TAKE_PROFIT_ON_FILL_LOSS'
  | 'LOSING_TAKE_PROFIT'
  | 'STOP_LOSS_ON_FILL_GTD_TIMESTAMP_IN_PAST'
  | 'STOP_LOSS_ON_FILL_LOSS'
  | 'STOP_LOSS_ON_FILL_PRICE_DISTANCE_MAXIMUM_EXCEEDED'
  | 'STOP_LOSS_ON_FILL_REQUIRED'
  | 'STOP_LOSS_ON_FILL_GUARANTEED_REQUIRED'
  | 'STOP_LOSS_ON_FILL_GUARANTEED_NOT_ALLOWED'
  | 'STOP_LOSS_ON_FILL_GUARANTEED_MINIMUM_DISTANCE_NOT_MET'
  | 'STOP_LOSS_ON_FILL_GUARANTEED_LEVEL_RESTRICTION_EXCEEDED'
  | 'STOP_LOSS_ON_FILL_GUARANTEED_HEDGING_NOT_ALLOWED'
  | 'STOP_LOSS_ON_FILL_TIME_IN_FORCE_INVALID'
  | 'STOP_LOSS_ON_FILL_TRIGGER_CONDITION_INVALID'
  | 'TAKE_PROFIT_ON_FILL_PRICE_DISTANCE_MAXIMUM_EXCEEDED'
  | 'TRAILING_STOP_LOSS_ON_FILL_GTD_TIMESTAMP_IN_PAST'
  | 'CLIENT_TRADE_ID_ALREADY_EXISTS'
  | 'POSITION_CLOSEOUT_FAILED'
  | 'OPEN_TRADES_ALLOWED_EXCEEDED'
  | 'PENDING_ORDERS_ALLOWED_EXCEEDED'
  | 'TAKE_PROFIT_ON_FILL_CLIENT_ORDER_ID_ALREADY_EXISTS'
  | 'STOP_LOSS_ON_FILL_CLIENT_ORDER_ID_ALREADY_EXISTS'
  | 'TRAILING_STOP_LOSS_ON_FILL_CLIENT_ORDER_ID_ALREADY_EXISTS'
  | 'POSITION_SIZE_EXCEEDED'
  | 'HEDGING_GSLO_VIOLATION'
  | 'ACCOUNT_POSITION_VALUE_LIMIT_EXCEEDED'
  | 'INSTRUMENT_BID_REDUCE_ONLY'
  | 'INSTRUMENT_ASK_REDUCE_ONLY'
  | 'INSTRUMENT_BID_HALTED'
  | 'INSTRUMENT_ASK_HALTED'
  | 'STOP_LOSS_ON_FILL_GUARANTEED_BID_HALTED'
  | 'STOP_LOSS_ON_FILL_GUARANTEED_ASK_HALTED';

/** v20 TransactionRejectReason (143 values in 3.0.25, plus later ones); kept open as a string. */
export type TransactionRejectReason = string;

export interface ClientExtensions {
  readonly id?: string;
  readonly tag?: string;
  readonly comment?: string;
}

export interface TakeProfitDetails {
  readonly price?: PriceValue;
  /** @since after 3.0.25: a distance from the fill price. */
  readonly distance?: DecimalNumber;
  readonly timeInForce?: TimeInForce;
  readonly gtdTime?: DateTime;
  readonly clientExtensions?: ClientExtensions;
}

export interface StopLossDetails {
  readonly price?: PriceValue;
  readonly distance?: DecimalNumber;
  readonly timeInForce?: TimeInForce;
  readonly gtdTime?: DateTime;
  readonly clientExtensions?: ClientExtensions;
  /** Deprecated in favour of guaranteedStopLossOnFill. */
  readonly guaranteed?: boolean;
}

export interface TrailingStopLossDetails {
  readonly distance?: DecimalNumber;
  readonly timeInForce?: TimeInForce;
  readonly gtdTime?: DateTime;
  readonly clientExtensions?: ClientExtensions;
}

/** @since after 3.0.25. */
export interface GuaranteedStopLossDetails {
  readonly price?: PriceValue;
  readonly distance?: DecimalNumber;
  readonly timeInForce?: TimeInForce;
  readonly gtdTime?: DateTime;
  readonly clientExtensions?: ClientExtensions;
}
