import type { Order } from './orders.ts';
import type {
  AccountUnits,
  ClientExtensions,
  Currency,
  DateTime,
  DecimalNumber,
  InstrumentName,
  PriceValue,
  TradeID,
  TradeState,
  TransactionID,
} from './primitives.ts';
import type { Transaction } from './transactions.ts';

/** A trade as GET /trades returns it (with its dependent orders inline). */
export interface Trade {
  readonly id: TradeID;
  readonly instrument: InstrumentName;
  readonly price: PriceValue;
  readonly openTime: DateTime;
  readonly state?: TradeState;
  readonly initialUnits: DecimalNumber;
  readonly initialMarginRequired?: AccountUnits;
  readonly currentUnits: DecimalNumber;
  readonly realizedPL: AccountUnits;
  readonly unrealizedPL?: AccountUnits;
  readonly marginUsed?: AccountUnits;
  readonly averageClosePrice?: PriceValue;
  readonly closingTransactionIDs?: TransactionID[];
  readonly financing?: AccountUnits;
  readonly closeTime?: DateTime;
  readonly clientExtensions?: ClientExtensions;
  readonly takeProfitOrder?: Order;
  readonly stopLossOrder?: Order;
  readonly trailingStopLossOrder?: Order;
}

/** A trade with its dependent orders as IDs (in Account and AccountChanges). */
export interface TradeSummary extends Omit<
  Trade,
  'takeProfitOrder' | 'stopLossOrder' | 'trailingStopLossOrder'
> {
  readonly takeProfitOrderID?: string;
  readonly stopLossOrderID?: string;
  readonly trailingStopLossOrderID?: string;
}

export interface PositionSide {
  readonly units: DecimalNumber;
  readonly averagePrice?: PriceValue;
  readonly tradeIDs?: TradeID[];
  readonly pl: AccountUnits;
  readonly unrealizedPL?: AccountUnits;
  readonly resettablePL?: AccountUnits;
  readonly financing?: AccountUnits;
  readonly guaranteedExecutionFees?: AccountUnits;
}

export interface Position {
  readonly instrument: InstrumentName;
  readonly pl: AccountUnits;
  readonly unrealizedPL?: AccountUnits;
  readonly marginUsed?: AccountUnits;
  readonly resettablePL?: AccountUnits;
  readonly financing?: AccountUnits;
  readonly commission?: AccountUnits;
  readonly guaranteedExecutionFees?: AccountUnits;
  readonly long: PositionSide;
  readonly short: PositionSide;
}

/** The account figures shared by Account and AccountSummary. */
export interface AccountSummary {
  readonly id: string;
  readonly alias?: string;
  readonly currency: Currency;
  readonly balance: AccountUnits;
  readonly createdByUserID?: number;
  readonly createdTime?: DateTime;
  readonly pl?: AccountUnits;
  readonly resettablePL?: AccountUnits;
  readonly financing?: AccountUnits;
  readonly commission?: AccountUnits;
  readonly marginRate?: DecimalNumber;
  readonly openTradeCount?: number;
  readonly openPositionCount?: number;
  readonly pendingOrderCount?: number;
  readonly hedgingEnabled?: boolean;
  readonly unrealizedPL?: AccountUnits;
  readonly NAV?: AccountUnits;
  readonly marginUsed?: AccountUnits;
  readonly marginAvailable?: AccountUnits;
  readonly positionValue?: AccountUnits;
  readonly marginCloseoutUnrealizedPL?: AccountUnits;
  readonly marginCloseoutNAV?: AccountUnits;
  readonly marginCloseoutMarginUsed?: AccountUnits;
  readonly marginCloseoutPercent?: DecimalNumber;
  readonly marginCloseoutPositionValue?: DecimalNumber;
  readonly withdrawalLimit?: AccountUnits;
  readonly marginCallMarginUsed?: AccountUnits;
  readonly marginCallPercent?: DecimalNumber;
  readonly lastTransactionID: TransactionID;
}

/** GET /accounts/{id}: the summary plus open trades, positions and pending orders. */
export interface Account extends AccountSummary {
  readonly trades?: TradeSummary[];
  readonly positions?: Position[];
  readonly orders?: Order[];
}

/** GET /accounts/{id}/changes. */
export interface AccountChanges {
  readonly ordersCreated?: Order[];
  readonly ordersCancelled?: Order[];
  readonly ordersFilled?: Order[];
  readonly ordersTriggered?: Order[];
  readonly tradesOpened?: TradeSummary[];
  readonly tradesReduced?: TradeSummary[];
  readonly tradesClosed?: TradeSummary[];
  readonly positions?: Position[];
  readonly transactions?: Transaction[];
}
