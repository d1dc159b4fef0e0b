import { readFileSync } from 'node:fs';
import { packageFile } from './package-root.ts';
import { defaultHours, MarketHours, TradingHoursError, type TradingHours } from './market-hours.ts';
import type { Instrument as WireInstrument } from './v20/index.ts';
import type { UnixMs } from './time.ts';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** One instrument's financing terms: yearly rates (negative: the holder pays) and days charged per weekday (index 0 = Sunday). */
export interface FinancingTerms {
  readonly longRate: number;
  readonly shortRate: number;
  readonly daysCharged: readonly number[];
}

/**
 * Where a rollover's rates come from: the terms of `instrument` for the rollover at `at` (a 17:00
 * New York instant), or undefined for the instrument's own (data/instruments.json). A recorded
 * history (`fxflow backtest --financing-history`) answers with the rates recorded for that day.
 */
export type FinancingRates = (instrument: string, at: UnixMs) => FinancingTerms | undefined;

/**
 * 0 (Sunday) to 6 of a v20 DayOfWeek, -1 when it is none. OANDA writes `MONDAY`; data/instruments.json
 * writes `Monday`: both are read (a rate table with no day it knows would charge nothing).
 */
export function weekdayIndex(name: string): number {
  return WEEKDAYS.findIndex((w) => w.toUpperCase() === String(name).toUpperCase());
}
/** Leading zeros of a price's fraction digits, by count. */
const ZEROS = Array.from({ length: 24 }, (_, i) => '0'.repeat(i));

/** A bad instrument definition or an unknown instrument name. */
export class InstrumentError extends Error {
  readonly code = 'INSTRUMENT' as const;
  constructor(message: string) {
    super(message);
    this.name = 'InstrumentError';
  }
}

/**
 * An instrument with its v20 definition parsed once into numbers. It rounds: `snap(x)` gives the
 * nearest price at the instrument's displayPrecision and `price(x)` its wire string.
 */
export class Instrument {
  readonly name: string;
  readonly type: WireInstrument['type'];
  readonly displayName: string;
  readonly base: string;
  readonly quote: string;
  readonly pipLocation: number;
  /** Size of one pip in price units (10^pipLocation). */
  readonly pip: number;
  readonly displayPrecision: number;
  readonly tradeUnitsPrecision: number;
  readonly minimumTradeSize: number;
  readonly maximumOrderUnits: number;
  readonly marginRate: number;
  readonly minimumTrailingStopDistance: number;
  readonly maximumTrailingStopDistance: number;
  /** Guaranteed stop losses: allowed at all, the premium per unit (price distance) and the minimum distance. */
  readonly guaranteedStopLoss: {
    readonly mode: 'DISABLED' | 'ALLOWED' | 'REQUIRED';
    readonly premium: string;
    readonly minimumDistance: number;
  };
  /** Annual rates (negative: the holder pays) and days charged per weekday, index 0 = Sunday. */
  readonly financing: FinancingTerms;
  readonly wire: WireInstrument;
  /**
   * When it trades: `tradingHours` of data/instruments.json (not a v20 field), else by type (the FX
   * week for currencies, the daily 17:00-18:00 New York break for metals and CFDs).
   */
  readonly hours: MarketHours;
  /** 10^displayPrecision and 10^tradeUnitsPrecision: prices and units as integers (the fill path's money). */
  readonly priceScale: number;
  readonly unitsScale: number;
  readonly #scale: number;

  constructor(w: WireInstrument) {
    this.wire = w;
    this.name = w.name;
    this.type = w.type;
    this.displayName = w.displayName;
    const parts = w.name.split('_');
    this.base = parts[0]!;
    this.quote = parts[parts.length - 1]!;
    this.pipLocation = w.pipLocation;
    this.pip = 10 ** w.pipLocation;
    this.displayPrecision = w.displayPrecision;
    this.tradeUnitsPrecision = w.tradeUnitsPrecision;
    this.minimumTradeSize = Number(w.minimumTradeSize);
    this.maximumOrderUnits = Number(w.maximumOrderUnits);
    this.marginRate = Number(w.marginRate);
    this.minimumTrailingStopDistance = Number(w.minimumTrailingStopDistance);
    this.maximumTrailingStopDistance = Number(w.maximumTrailingStopDistance);
    this.guaranteedStopLoss = {
      mode: w.guaranteedStopLossOrderMode ?? 'DISABLED',
      premium: w.guaranteedStopLossOrderExecutionPremium ?? '0',
      minimumDistance: Number(w.guaranteedStopLossOrderMinimumDistance ?? 0),
    };
    const days = [0, 0, 0, 0, 0, 0, 0];
    for (const d of w.financing?.financingDaysOfWeek ?? []) {
      const i = weekdayIndex(d.dayOfWeek);
      if (i >= 0) days[i] = d.daysCharged;
    }
    this.financing = {
      longRate: Number(w.financing?.longRate ?? 0),
      shortRate: Number(w.financing?.shortRate ?? 0),
      daysCharged: days,
    };
    const own = (w as WireInstrument & { tradingHours?: TradingHours }).tradingHours;
    this.hours = new MarketHours(own ?? defaultHours(w.type), `instrument ${w.name}: tradingHours`);
    this.#scale = 10 ** w.displayPrecision;
    this.priceScale = this.#scale;
    this.unitsScale = 10 ** w.tradeUnitsPrecision;
  }

  /**
   * Rounds to displayPrecision, half away from zero, robust to binary noise: 1.123455 → 1.12346
   * even though its binary value is slightly below the half.
   */
  snap(x: number): number {
    const scaled = x * this.#scale;
    const r = Math.round(Math.abs(scaled) + 1e-12 * Math.max(1, Math.abs(scaled)));
    return (Math.sign(scaled) * r) / this.#scale;
  }

  /**
   * The snapped price as v20 writes it: exactly displayPrecision fraction digits, as
   * `snap(x).toFixed(displayPrecision)` (pinned by a property test) at a third of its cost.
   * Written from the integer `r` of price units: below 2^31 units, the double `r / 10^d` is
   * within far less than half a unit of the decimal `r × 10^-d`, so toFixed writes exactly `r`'s
   * digits; larger (or non-finite) values take toFixed itself.
   */
  price(x: number): string {
    const scaled = x * this.#scale;
    const a = Math.abs(scaled);
    const r = Math.round(a + 1e-12 * Math.max(1, a));
    if (!(r < 2_147_483_648)) return this.snap(x).toFixed(this.displayPrecision);
    const d = this.displayPrecision;
    // Negative zero prints as "0.000", like toFixed.
    const sign = scaled < 0 && r !== 0 ? '-' : '';
    if (d === 0) return `${sign}${r}`;
    const int = Math.floor(r / this.#scale); // exact: r and the scale are small integers
    const frac = `${r - int * this.#scale}`;
    return `${sign}${int}.${ZEROS[d - frac.length]}${frac}`;
  }

  /** Whether a units string respects tradeUnitsPrecision (and is a decimal). */
  unitsOk(units: string): boolean {
    if (!DECIMAL.test(units)) return false;
    const dot = units.indexOf('.');
    return dot < 0 || units.length - dot - 1 <= this.tradeUnitsPrecision;
  }

  /** A price distance expressed in pips. */
  pips(distance: number): number {
    return distance / this.pip;
  }
}

/** The instruments fxflow knows, by name. */
export class InstrumentRegistry {
  readonly #byName = new Map<string, Instrument>();

  constructor(list: readonly Instrument[]) {
    for (const i of list) this.#byName.set(i.name, i);
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  /** The instrument, or an error that names it and suggests the closest known names. */
  get(name: string): Instrument {
    const i = this.#byName.get(name);
    if (i) return i;
    const upper = name.toUpperCase().replace(/[^A-Z0-9]/g, '');
    const close = [...this.#byName.keys()].filter((k) => {
      const kk = k.replace('_', '');
      return kk === upper || kk.includes(upper.slice(0, 3)) || kk.includes(upper.slice(-3));
    });
    throw new InstrumentError(
      `unknown instrument '${name}'${close.length ? `; did you mean ${close.slice(0, 5).join(', ')}?` : ''} (instruments are defined in data/instruments.json)`,
    );
  }

  list(): Instrument[] {
    return [...this.#byName.values()];
  }
}

const DEFAULT_PATH = packageFile('data/instruments.json');

function check(file: string, i: number, w: Record<string, unknown>): WireInstrument {
  const where = `${file}: instrument #${i}${typeof w.name === 'string' ? ` (${w.name})` : ''}`;
  const need = (k: string, test: (v: unknown) => boolean, what: string): void => {
    if (!test(w[k]))
      throw new InstrumentError(`${where}: field '${k}' must be ${what} (got ${JSON.stringify(w[k])})`);
  };
  const dec = (v: unknown): boolean => typeof v === 'string' && DECIMAL.test(v);
  const int = (v: unknown): boolean => Number.isInteger(v);
  need('name', (v) => typeof v === 'string' && /^[A-Z0-9]+_[A-Z0-9]+$/.test(v), 'a name like "EUR_USD"');
  need('type', (v) => v === 'CURRENCY' || v === 'CFD' || v === 'METAL', 'CURRENCY, CFD or METAL');
  need('displayName', (v) => typeof v === 'string', 'a string');
  need('pipLocation', int, 'an integer');
  need('displayPrecision', int, 'an integer');
  need('tradeUnitsPrecision', int, 'an integer');
  for (const k of [
    'minimumTradeSize',
    'maximumTrailingStopDistance',
    'minimumTrailingStopDistance',
    'maximumOrderUnits',
    'marginRate',
  ]) {
    need(k, dec, 'a decimal string');
  }
  if (w.financing !== undefined) {
    const f = w.financing as Record<string, unknown>;
    if (!dec(f.longRate) || !dec(f.shortRate) || !Array.isArray(f.financingDaysOfWeek)) {
      throw new InstrumentError(
        `${where}: field 'financing' must be {longRate, shortRate, financingDaysOfWeek[]} with decimal-string rates`,
      );
    }
  }
  if (w.tradingHours !== undefined) {
    const h = w.tradingHours as TradingHours;
    if (typeof h !== 'object' || h === null || typeof h.timeZone !== 'string') {
      throw new InstrumentError(
        `${where}: field 'tradingHours' must be {"timeZone": "America/New_York", "sessions": ["Sun 17:00-Fri 17:00"]}`,
      );
    }
    try {
      new MarketHours(h, 'tradingHours');
    } catch (e) {
      if (e instanceof TradingHoursError) throw new InstrumentError(`${where}: field ${e.message}`);
      throw e;
    }
  }
  return w as unknown as WireInstrument;
}

/** Loads instrument definitions (an array of v20 Instrument objects). */
export function loadInstruments(path: string = DEFAULT_PATH): InstrumentRegistry {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InstrumentError(`${path}: cannot read instrument definitions: ${(e as Error).message}`);
  }
  if (!Array.isArray(raw))
    throw new InstrumentError(`${path}: must hold a JSON array of v20 Instrument objects`);
  return new InstrumentRegistry(
    raw.map((w, i) => new Instrument(check(path, i, w as Record<string, unknown>))),
  );
}
