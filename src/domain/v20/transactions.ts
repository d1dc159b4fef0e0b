import type {
  ClientExtensions,
  AccountUnits,
  DateTime,
  DecimalNumber,
  FundingReason,
  InstrumentName,
  MarketOrderReason,
  OrderCancelReason,
  OrderFillReason,
  OrderID,
  OrderPositionFill,
  OrderTriggerCondition,
  PriceValue,
  TimeInForce,
  TradeID,
  TransactionID,
  TransactionRejectReason,
} from './primitives.ts';
import type { OnFillFields } from './orders.ts';
import type { ClientPrice } from './pricing.ts';

/** Fields every v20 transaction carries. Transaction IDs are sequential per account. */
export interface TransactionBase {
  readonly id: TransactionID;
  readonly time: DateTime;
  readonly userID?: number;
  readonly accountID: string;
  /** ID of the first transaction of the batch this one belongs to. */
  readonly batchID: TransactionID;
  readonly requestID?: string;
}

type Tx<T extends string, F> = TransactionBase & { readonly type: T } & F;
type Rejected<T extends string, F> = Tx<T, F & { readonly rejectReason?: TransactionRejectReason }>;

export interface MarketOrderTradeClose {
  readonly tradeID: TradeID;
  readonly clientTradeID?: string;
  readonly units: string;
}
export interface MarketOrderPositionCloseout {
  readonly instrument: InstrumentName;
  readonly units: string;
}
export interface MarketOrderMarginCloseout {
  readonly reason:
    'MARGIN_CHECK_VIOLATION' | 'REGULATORY_MARGIN_CALL_VIOLATION' | 'REGULATORY_MARGIN_CHECK_VIOLATION';
}
export interface MarketOrderDelayedTradeClose {
  readonly tradeID: TradeID;
  readonly clientTradeID?: string;
  readonly sourceTransactionID: TransactionID;
}

type OnFill = OnFillFields;

interface Replacing {
  readonly replacesOrderID?: OrderID;
  readonly cancellingTransactionID?: TransactionID;
}

interface MarketOrderFields extends OnFill {
  readonly instrument: InstrumentName;
  readonly units: DecimalNumber;
  readonly timeInForce: TimeInForce;
  readonly priceBound?: PriceValue;
  readonly positionFill: OrderPositionFill;
  readonly tradeClose?: MarketOrderTradeClose;
  readonly longPositionCloseout?: MarketOrderPositionCloseout;
  readonly shortPositionCloseout?: MarketOrderPositionCloseout;
  readonly marginCloseout?: MarketOrderMarginCloseout;
  readonly delayedTradeClose?: MarketOrderDelayedTradeClose;
  readonly reason: MarketOrderReason;
}

interface PendingEntryFields extends OnFill, Replacing {
  readonly instrument: InstrumentName;
  readonly units: DecimalNumber;
  readonly price: PriceValue;
  readonly priceBound?: PriceValue;
  readonly timeInForce: TimeInForce;
  readonly gtdTime?: DateTime;
  readonly positionFill: OrderPositionFill;
  readonly triggerCondition: OrderTriggerCondition;
  readonly reason: 'CLIENT_ORDER' | 'REPLACEMENT';
}

interface DependentFields extends Replacing {
  readonly tradeID: TradeID;
  readonly clientTradeID?: string;
  readonly timeInForce: TimeInForce;
  readonly gtdTime?: DateTime;
  readonly triggerCondition: OrderTriggerCondition;
  readonly reason: 'CLIENT_ORDER' | 'REPLACEMENT' | 'ON_FILL';
  readonly clientExtensions?: ClientExtensions;
  readonly orderFillTransactionID?: TransactionID;
}

/** A trade opened by a fill. `tradeID` equals the ORDER_FILL's transaction ID. */
export interface TradeOpen {
  readonly tradeID: TradeID;
  readonly units: DecimalNumber;
  readonly price?: PriceValue;
  readonly guaranteedExecutionFee?: AccountUnits;
  readonly clientExtensions?: ClientExtensions;
  readonly halfSpreadCost?: AccountUnits;
  readonly initialMarginRequired?: AccountUnits;
}

/** A trade reduced or closed by a fill. `units` is signed against the trade (closing 100 long: "-100"). */
export interface TradeReduce {
  readonly tradeID: TradeID;
  readonly units: DecimalNumber;
  readonly price?: PriceValue;
  readonly realizedPL?: AccountUnits;
  readonly financing?: AccountUnits;
  readonly guaranteedExecutionFee?: AccountUnits;
  readonly halfSpreadCost?: AccountUnits;
}

export interface OpenTradeFinancing {
  readonly tradeID: TradeID;
  readonly financing: AccountUnits;
}

export interface PositionFinancing {
  readonly instrument: InstrumentName;
  readonly financing: AccountUnits;
  readonly openTradeFinancings?: OpenTradeFinancing[];
}

export type CreateTransaction = Tx<
  'CREATE',
  {
    readonly divisionID?: number;
    readonly siteID?: number;
    readonly accountUserID?: number;
    readonly accountNumber?: number;
    readonly homeCurrency?: string;
  }
>;
export type CloseTransaction = Tx<'CLOSE', object>;
export type ReopenTransaction = Tx<'REOPEN', object>;
export type ClientConfigureTransaction = Tx<
  'CLIENT_CONFIGURE',
  { readonly alias?: string; readonly marginRate?: DecimalNumber }
>;
export type ClientConfigureRejectTransaction = Rejected<
  'CLIENT_CONFIGURE_REJECT',
  { readonly alias?: string; readonly marginRate?: DecimalNumber }
>;
export type TransferFundsTransaction = Tx<
  'TRANSFER_FUNDS',
  {
    readonly amount: AccountUnits;
    readonly fundingReason?: FundingReason;
    readonly comment?: string;
    readonly accountBalance?: AccountUnits;
  }
>;
export type TransferFundsRejectTransaction = Rejected<
  'TRANSFER_FUNDS_REJECT',
  { readonly amount?: AccountUnits; readonly fundingReason?: FundingReason; readonly comment?: string }
>;
export type MarketOrderTransaction = Tx<'MARKET_ORDER', MarketOrderFields>;
export type MarketOrderRejectTransaction = Rejected<'MARKET_ORDER_REJECT', Partial<MarketOrderFields>>;
export type FixedPriceOrderTransaction = Tx<
  'FIXED_PRICE_ORDER',
  OnFill & {
    readonly instrument: InstrumentName;
    readonly units: DecimalNumber;
    readonly price: PriceValue;
    readonly positionFill: OrderPositionFill;
    readonly tradeState?: string;
    readonly reason: string;
  }
>;
export type LimitOrderTransaction = Tx<'LIMIT_ORDER', PendingEntryFields>;
export type LimitOrderRejectTransaction = Rejected<
  'LIMIT_ORDER_REJECT',
  Partial<PendingEntryFields> & { readonly intendedReplacesOrderID?: OrderID }
>;
export type StopOrderTransaction = Tx<'STOP_ORDER', PendingEntryFields>;
export type StopOrderRejectTransaction = Rejected<
  'STOP_ORDER_REJECT',
  Partial<PendingEntryFields> & { readonly intendedReplacesOrderID?: OrderID }
>;
export type MarketIfTouchedOrderTransaction = Tx<
  'MARKET_IF_TOUCHED_ORDER',
  PendingEntryFields & { readonly initialMarketPrice?: PriceValue }
>;
export type MarketIfTouchedOrderRejectTransaction = Rejected<
  'MARKET_IF_TOUCHED_ORDER_REJECT',
  Partial<PendingEntryFields> & { readonly intendedReplacesOrderID?: OrderID }
>;
export type TakeProfitOrderTransaction = Tx<
  'TAKE_PROFIT_ORDER',
  DependentFields & { readonly price: PriceValue }
>;
export type TakeProfitOrderRejectTransaction = Rejected<
  'TAKE_PROFIT_ORDER_REJECT',
  Partial<DependentFields> & { readonly price?: PriceValue; readonly intendedReplacesOrderID?: OrderID }
>;
export type StopLossOrderTransaction = Tx<
  'STOP_LOSS_ORDER',
  DependentFields & {
    readonly price?: PriceValue;
    readonly distance?: DecimalNumber;
    readonly guaranteed?: boolean;
    readonly guaranteedExecutionPremium?: DecimalNumber;
  }
>;
export type StopLossOrderRejectTransaction = Rejected<
  'STOP_LOSS_ORDER_REJECT',
  Partial<DependentFields> & {
    readonly price?: PriceValue;
    readonly distance?: DecimalNumber;
    readonly intendedReplacesOrderID?: OrderID;
  }
>;
export type TrailingStopLossOrderTransaction = Tx<
  'TRAILING_STOP_LOSS_ORDER',
  DependentFields & { readonly distance: DecimalNumber }
>;
export type TrailingStopLossOrderRejectTransaction = Rejected<
  'TRAILING_STOP_LOSS_ORDER_REJECT',
  Partial<DependentFields> & { readonly distance?: DecimalNumber; readonly intendedReplacesOrderID?: OrderID }
>;
/** @since after 3.0.25 */
export type GuaranteedStopLossOrderTransaction = Tx<
  'GUARANTEED_STOP_LOSS_ORDER',
  DependentFields & {
    readonly price?: PriceValue;
    readonly distance?: DecimalNumber;
    readonly guaranteedExecutionPremium?: DecimalNumber;
  }
>;
/** @since after 3.0.25 */
export type GuaranteedStopLossOrderRejectTransaction = Rejected<
  'GUARANTEED_STOP_LOSS_ORDER_REJECT',
  Partial<DependentFields> & { readonly price?: PriceValue; readonly distance?: DecimalNumber }
>;

export type OrderFillTransaction = Tx<
  'ORDER_FILL',
  {
    readonly orderID: OrderID;
    readonly clientOrderID?: string;
    readonly instrument: InstrumentName;
    readonly units: DecimalNumber;
    /** @since after 3.0.25 */
    readonly requestedUnits?: DecimalNumber;
    readonly gainQuoteHomeConversionFactor?: DecimalNumber;
    readonly lossQuoteHomeConversionFactor?: DecimalNumber;
    readonly price?: PriceValue;
    readonly fullVWAP?: PriceValue;
    readonly fullPrice?: ClientPrice;
    readonly reason: OrderFillReason;
    readonly pl: AccountUnits;
    readonly financing: AccountUnits;
    readonly commission?: AccountUnits;
    readonly guaranteedExecutionFee?: AccountUnits;
    readonly accountBalance: AccountUnits;
    readonly tradeOpened?: TradeOpen;
    readonly tradesClosed?: TradeReduce[];
    readonly tradeReduced?: TradeReduce;
    readonly halfSpreadCost?: AccountUnits;
  }
>;

export type OrderCancelTransaction = Tx<
  'ORDER_CANCEL',
  {
    readonly orderID: OrderID;
    readonly clientOrderID?: string;
    readonly reason: OrderCancelReason;
    readonly replacedByOrderID?: OrderID;
  }
>;
export type OrderCancelRejectTransaction = Rejected<
  'ORDER_CANCEL_REJECT',
  { readonly orderID?: OrderID; readonly clientOrderID?: string }
>;
export type OrderClientExtensionsModifyTransaction = Tx<
  'ORDER_CLIENT_EXTENSIONS_MODIFY',
  {
    readonly orderID: OrderID;
    readonly clientOrderID?: string;
    readonly clientExtensionsModify?: ClientExtensions;
    readonly tradeClientExtensionsModify?: ClientExtensions;
  }
>;
export type OrderClientExtensionsModifyRejectTransaction = Rejected<
  'ORDER_CLIENT_EXTENSIONS_MODIFY_REJECT',
  {
    readonly orderID?: OrderID;
    readonly clientOrderID?: string;
    readonly clientExtensionsModify?: ClientExtensions;
    readonly tradeClientExtensionsModify?: ClientExtensions;
  }
>;
export type TradeClientExtensionsModifyTransaction = Tx<
  'TRADE_CLIENT_EXTENSIONS_MODIFY',
  {
    readonly tradeID: TradeID;
    readonly clientTradeID?: string;
    readonly tradeClientExtensionsModify?: ClientExtensions;
  }
>;
export type TradeClientExtensionsModifyRejectTransaction = Rejected<
  'TRADE_CLIENT_EXTENSIONS_MODIFY_REJECT',
  {
    readonly tradeID?: TradeID;
    readonly clientTradeID?: string;
    readonly tradeClientExtensionsModify?: ClientExtensions;
  }
>;
export type MarginCallEnterTransaction = Tx<'MARGIN_CALL_ENTER', object>;
export type MarginCallExtendTransaction = Tx<'MARGIN_CALL_EXTEND', { readonly extensionNumber?: number }>;
export type MarginCallExitTransaction = Tx<'MARGIN_CALL_EXIT', object>;
export type DelayedTradeClosureTransaction = Tx<
  'DELAYED_TRADE_CLOSURE',
  { readonly reason?: string; readonly tradeIDs?: TradeID }
>;
export type DailyFinancingTransaction = Tx<
  'DAILY_FINANCING',
  {
    readonly financing: AccountUnits;
    readonly accountBalance?: AccountUnits;
    readonly accountFinancingMode?: 'NO_FINANCING' | 'SECOND_BY_SECOND' | 'DAILY';
    readonly positionFinancings?: PositionFinancing[];
  }
>;
/** @since after 3.0.25 */
export type DividendAdjustmentTransaction = Tx<
  'DIVIDEND_ADJUSTMENT',
  {
    readonly instrument: InstrumentName;
    readonly dividendAdjustment: AccountUnits;
    readonly accountBalance?: AccountUnits;
  }
>;
export type ResetResettablePLTransaction = Tx<'RESET_RESETTABLE_PL', object>;

/** Every v20 transaction, a discriminated union on `type`. */
export type Transaction =
  | CreateTransaction
  | CloseTransaction
  | ReopenTransaction
  | ClientConfigureTransaction
  | ClientConfigureRejectTransaction
  | TransferFundsTransaction
  | TransferFundsRejectTransaction
  | MarketOrderTransaction
  | MarketOrderRejectTransaction
  | FixedPriceOrderTransaction
  | LimitOrderTransaction
  | LimitOrderRejectTransaction
  | StopOrderTransaction
  | StopOrderRejectTransaction
  | MarketIfTouchedOrderTransaction
  | MarketIfTouchedOrderRejectTransaction
  | TakeProfitOrderTransaction
  | TakeProfitOrderRejectTransaction
  | StopLossOrderTransaction
  | StopLossOrderRejectTransaction
  | TrailingStopLossOrderTransaction
  | TrailingStopLossOrderRejectTransaction
  | GuaranteedStopLossOrderTransaction
  | GuaranteedStopLossOrderRejectTransaction
  | OrderFillTransaction
  | OrderCancelTransaction
  | OrderCancelRejectTransaction
  | OrderClientExtensionsModifyTransaction
  | OrderClientExtensionsModifyRejectTransaction
  | TradeClientExtensionsModifyTransaction
  | TradeClientExtensionsModifyRejectTransaction
  | MarginCallEnterTransaction
  | MarginCallExtendTransaction
  | MarginCallExitTransaction
  | DelayedTradeClosureTransaction
  | DailyFinancingTransaction
  | DividendAdjustmentTransaction
  | ResetResettablePLTransaction;

export type TransactionType = Transaction['type'];

/** The heartbeat of the transaction stream. */
export interface TransactionHeartbeat {
  readonly type: 'HEARTBEAT';
  readonly lastTransactionID: TransactionID;
  readonly time: DateTime;
}
