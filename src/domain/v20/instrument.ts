import type { DecimalNumber, InstrumentName, InstrumentType } from './primitives.ts';

export interface InstrumentCommission {
  readonly commission: DecimalNumber;
  readonly unitsTraded: DecimalNumber;
  readonly minimumCommission: DecimalNumber;
}

/** @since after 3.0.25 */
export interface InstrumentFinancing {
  readonly longRate: DecimalNumber;
  readonly shortRate: DecimalNumber;
  readonly financingDaysOfWeek: readonly { readonly dayOfWeek: string; readonly daysCharged: number }[];
}

/** A v20 Instrument (GET /accounts/{id}/instruments). */
export interface Instrument {
  readonly name: InstrumentName;
  readonly type: InstrumentType;
  readonly displayName: string;
  readonly pipLocation: number;
  readonly displayPrecision: number;
  readonly tradeUnitsPrecision: number;
  readonly minimumTradeSize: DecimalNumber;
  readonly maximumTrailingStopDistance: DecimalNumber;
  readonly minimumTrailingStopDistance: DecimalNumber;
  readonly maximumPositionSize: DecimalNumber;
  readonly maximumOrderUnits: DecimalNumber;
  readonly marginRate: DecimalNumber;
  readonly commission?: InstrumentCommission;
  readonly guaranteedStopLossOrderMode?: 'DISABLED' | 'ALLOWED' | 'REQUIRED';
  /** @since after 3.0.25: price distance charged per unit when a guaranteed stop loss fills. */
  readonly guaranteedStopLossOrderExecutionPremium?: DecimalNumber;
  /** @since after 3.0.25 */
  readonly guaranteedStopLossOrderMinimumDistance?: DecimalNumber;
  readonly financing?: InstrumentFinancing;
}
