import type {
  CandlestickGranularity,
  DateTime,
  DecimalNumber,
  InstrumentName,
  PriceValue,
} from './primitives.ts';

export interface PriceBucket {
  readonly price: PriceValue;
  /** An integer on the wire in old responses, a string in newer ones. */
  readonly liquidity?: number | string;
}

export interface QuoteHomeConversionFactors {
  readonly positiveUnits: DecimalNumber;
  readonly negativeUnits: DecimalNumber;
}

export interface HomeConversions {
  readonly currency: string;
  readonly accountGain: DecimalNumber;
  readonly accountLoss: DecimalNumber;
  readonly positionValue: DecimalNumber;
}

/** A price of the pricing endpoint and stream (`type: 'PRICE'` on the stream). */
export interface ClientPrice {
  readonly type?: 'PRICE';
  readonly instrument?: InstrumentName;
  readonly time?: DateTime;
  /** Deprecated, still sent. */
  readonly status?: string;
  readonly tradeable?: boolean;
  readonly bids: PriceBucket[];
  readonly asks: PriceBucket[];
  readonly closeoutBid: PriceValue;
  readonly closeoutAsk: PriceValue;
  readonly quoteHomeConversionFactors?: QuoteHomeConversionFactors;
  readonly unitsAvailable?: unknown;
  /** Present on ORDER_FILL.fullPrice. */
  readonly timestamp?: DateTime;
}

export interface PricingHeartbeat {
  readonly type: 'HEARTBEAT';
  readonly time: DateTime;
}

export interface CandlestickData {
  readonly o: PriceValue;
  readonly h: PriceValue;
  readonly l: PriceValue;
  readonly c: PriceValue;
}

export interface Candlestick {
  readonly time: DateTime;
  readonly bid?: CandlestickData;
  readonly ask?: CandlestickData;
  readonly mid?: CandlestickData;
  readonly volume: number;
  readonly complete: boolean;
}

export interface CandlesResponse {
  readonly instrument: InstrumentName;
  readonly granularity: CandlestickGranularity;
  readonly candles: Candlestick[];
}
