import type { Instrument } from '../../domain/instrument.ts';
import { roundTo4, scaled, type Amount } from '../../domain/money.ts';

/**
 * Commission: what a fill costs on top of the spread, in the home currency, charged on every
 * fill's units (each leg: opening and closing). OANDA's default (spread-only pricing) is none.
 */
export interface CommissionModel {
  /** How the model is named in the config, the report and config.json. */
  readonly name: string;
  /** The commission of filling `units` (> 0, at most `unitsPlaces` decimals) of `inst`: a 4-place integer amount. */
  charge(inst: Instrument, units: number, unitsPlaces: number): Amount;
}

/** A rate per million units as an exact decimal, and the charge it makes. */
function perMillionCharge(rate: string): (units: number, unitsPlaces: number) => Amount {
  const r = scaled(rate);
  if (r.int === 0n) return () => 0;
  return (units, places) => roundTo4(r.int * BigInt(Math.round(units * 10 ** places)), r.places + places + 6);
}

/** A flat rate in the home currency per million units filled (`costs.commissionPerMillion`). */
export function perMillionCommission(rate: string): CommissionModel {
  const charge = perMillionCharge(rate);
  return {
    name: Number(rate) === 0 ? 'none' : `per-million:${rate}`,
    charge: (_inst, units, places) => charge(units, places),
  };
}

/**
 * OANDA's core spreads + commission pricing (OANDA Corporation, US division), per instrument group:
 * currency pairs pay 0.70 USD per 10,000 units on each leg (70 per million), or the amount its
 * schedule gives for the account's currency; metals and CFDs are spread-only (no commission).
 * Source: help.oanda.com/us/en/faqs/spreads-commission.htm.
 */
export const OANDA_CORE_PER_MILLION: Readonly<Record<string, string>> = {
  USD: '70',
  CAD: '100',
  AUD: '120',
  CHF: '70',
  GBP: '60',
  EUR: '70',
  HKD: '550',
  JPY: '10750',
  SGD: '100',
};

/** OANDA's core pricing schedule for an account in `currency` (one of OANDA_CORE_PER_MILLION's). */
export function oandaCoreCommission(currency: string): CommissionModel {
  const rate = OANDA_CORE_PER_MILLION[currency];
  if (rate === undefined) {
    throw new RangeError(
      `commission oanda-core has no schedule for an account in ${currency}; OANDA lists ${Object.keys(OANDA_CORE_PER_MILLION).join(', ')} (use a rate per million instead)`,
    );
  }
  const fx = perMillionCharge(rate);
  return {
    name: 'oanda-core',
    charge: (inst, units, places) => (inst.type === 'CURRENCY' ? fx(units, places) : 0),
  };
}

/** A commission model from the config: `oanda-core`, or a decimal rate per million units ("0": none). */
export function parseCommission(spec: string, currency: string): CommissionModel {
  if (spec === 'oanda-core') return oandaCoreCommission(currency);
  if (/^\d+(\.\d+)?$/.test(spec)) return perMillionCommission(spec);
  throw new RangeError(
    `commission must be a rate per million units (e.g. "50") or "oanda-core", got "${spec}"`,
  );
}
