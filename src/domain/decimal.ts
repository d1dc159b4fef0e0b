import { Decimal as DecimalJs } from 'decimal.js';

/**
 * The ledger's decimal type. A separate clone of decimal.js with 40 significant digits, so
 * account arithmetic never rounds implicitly: amounts are rounded only where v20 rounds them
 * (`toAccountUnits`), half-up as OANDA reports.
 */
export const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_UP });
export type Decimal = InstanceType<typeof Decimal>;

/** Decimal places of account-currency amounts on the v20 wire ("102107.4442"). */
export const ACCOUNT_DECIMALS = 4;

export const ZERO = new Decimal(0);

/** Rounds to the account's 4 places and formats with exactly 4 digits, as v20 does. */
export function toAccountUnits(x: Decimal): string {
  return x.toDecimalPlaces(ACCOUNT_DECIMALS, Decimal.ROUND_HALF_UP).toFixed(ACCOUNT_DECIMALS);
}

/** Parses a v20 decimal string; throws on anything else (a broken invariant, not user input). */
export function dec(x: string | number | Decimal): Decimal {
  return new Decimal(x);
}
