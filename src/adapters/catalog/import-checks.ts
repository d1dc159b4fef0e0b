import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Candle } from '../../domain/candle.ts';
import { GRANULARITIES, granularityMs, type Granularity } from '../../domain/granularity.ts';
import type { MarketHours } from '../../domain/market-hours.ts';
import type { Tick } from '../../domain/tick.ts';
import { ClockWatch, clockFits, clockProblem, describeClosed, type ClockReport } from './clock-check.ts';
import { headText } from './compressed.ts';
import { DataError } from './errors.ts';

/**
 * What an import is told (instrument, granularity) checked against what the data says: the file's
 * name and fields, its own spacing, and its prices against the instrument. Each check is an error
 * naming the file and what to pass instead; nothing is written when one fails (the catalog writes
 * its month files only when the whole import has been read).
 */

/**
 * A wide band of prices each instrument has traded in (long-run lows and highs with a margin). It
 * is not a forecast: its job is to tell one instrument from another (EUR_USD at 150 is a yen
 * cross, USD_JPY at 1.1 is a dollar pair).
 */
export const PLAUSIBLE: Readonly<Record<string, readonly [number, number]>> = {
  EUR_USD: [0.7, 1.8],
  GBP_USD: [0.9, 2.3],
  USD_JPY: [60, 200],
  AUD_USD: [0.4, 1.2],
  NZD_USD: [0.35, 1.0],
  USD_CAD: [0.85, 1.75],
  USD_CHF: [0.6, 1.9],
  EUR_GBP: [0.5, 1.05],
  EUR_JPY: [80, 200],
  GBP_JPY: [110, 280],
  EUR_CHF: [0.8, 1.8],
  AUD_JPY: [50, 120],
  EUR_AUD: [1.05, 2.3],
  GBP_CHF: [1.0, 2.7],
  EUR_CAD: [1.1, 1.9],
  AUD_NZD: [0.95, 1.45],
  CAD_JPY: [60, 130],
  CHF_JPY: [55, 200],
  GBP_AUD: [1.4, 2.8],
  EUR_NZD: [1.35, 2.7],
  XAU_USD: [200, 6000],
  XAG_USD: [3, 100],
  XAU_EUR: [200, 6000],
  SPX500_USD: [200, 15000],
  US30_USD: [2000, 80000],
  DE30_EUR: [1000, 40000],
  EU50_EUR: [1000, 9000],
  FR40_EUR: [1500, 12000],
  UK100_GBP: [2500, 13000],
  BCO_USD: [5, 250],
};

const LEAN_WORDS: Readonly<Record<string, Granularity>> = { MINUTE: 'M1', HOUR: 'H1', DAILY: 'D' };

/** The known instruments whose name (EUR_USD, EURUSD, eurusd) a file's path names. */
export function instrumentsInName(path: string, known: readonly string[]): string[] {
  const base = basename(path)
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '');
  const parent = basename(dirname(path))
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '');
  const hits = known.filter((k) => base.includes(k.replace('_', '')));
  if (hits.length > 0) return hits;
  return known.filter((k) => parent === k.replace('_', ''));
}

/** The granularity a file's path names (`_M1`, `-m1-`, `_D.csv`, Lean's minute/hour/daily), if any. */
export function granularityInName(path: string): Granularity | undefined {
  const tokens = basename(path)
    .replace(/\.[a-z]+$/i, '')
    .toUpperCase()
    .split(/[^A-Z0-9]+/);
  const long = tokens.find((t) => t.length >= 2 && (GRANULARITIES as readonly string[]).includes(t));
  if (long) return long as Granularity;
  for (const t of tokens) if (LEAN_WORDS[t]) return LEAN_WORDS[t];
  const parent = basename(dirname(path)).toUpperCase();
  if (LEAN_WORDS[parent]) return LEAN_WORDS[parent];
  const grand = basename(dirname(dirname(path))).toUpperCase();
  if (LEAN_WORDS[grand]) return LEAN_WORDS[grand];
  if (tokens.includes('D')) return 'D';
  if (tokens.includes('W')) return 'W';
  return undefined;
}

/** The instrument and granularity the file's own fields state (OANDA JSON, the OANDA mid CSV's Pair column). */
export function fieldsOf(file: string): { instrument?: string; granularity?: string } {
  const head = headText(file, 4096);
  const out: { instrument?: string; granularity?: string } = {};
  const ji = /"instrument"\s*:\s*"([A-Za-z0-9_]+)"/.exec(head);
  const jg = /"granularity"\s*:\s*"([A-Z0-9]+)"/.exec(head);
  if (ji) out.instrument = ji[1]!;
  if (jg) out.granularity = jg[1]!;
  if (head.startsWith(',volume,time,') && head.split('\n')[0]!.trim().endsWith(',Pair')) {
    const row = head.split('\n')[1];
    const pair = row?.split(',').pop()?.trim();
    if (pair) out.instrument = pair;
  }
  return out;
}

/** Every data file under `path` (recursively, in name order; hidden files left out). */
export function dataFiles(path: string): string[] {
  const st = statSync(path);
  if (!st.isDirectory()) return [path];
  const out: string[] = [];
  for (const f of readdirSync(path)
    .filter((x) => !x.startsWith('.'))
    .sort())
    out.push(...dataFiles(join(path, f)));
  return out;
}

/**
 * How a refusal tells the user to fix it: `import` for `fxflow data import` (import it with
 * --instrument X), `run` for a backtest's `--data` file or `--ticks` (run it with --instrument X),
 * `catalog` for a catalog series read as it is (the sandbox's data: import the file again),
 * `recording` for what `fxflow record` or `fxflow run` recorded (ticks, a run's inputs).
 */
export type GateFix = 'import' | 'run' | 'catalog' | 'recording';

/** The end of a refusal saying the source holds another instrument: what to do, by command. */
function anotherInstrument(fix: GateFix, instrument: string): string {
  if (fix === 'catalog')
    return `the catalog's ${instrument} series holds another instrument (import the file again with \`fxflow data import … --instrument\` naming the one it holds)`;
  if (fix === 'recording')
    return `it is not a recording of ${instrument} (a recording of another instrument, or edited): record it again, or move the files to the folder of the instrument they hold`;
  return 'it holds another instrument (pass the right --instrument)';
}

/** "import it with --granularity M1 (then …)": the way to read `actual` data when `asked` was wrong. */
function granularityAdvice(actual: Granularity, asked: Granularity, fix: GateFix, coarser: string): string {
  if (fix === 'run') {
    return `run it with --granularity ${actual}${granularityMs(actual) < granularityMs(asked) ? ` (or import it with \`fxflow data import\`: a backtest on the catalog builds ${asked} candles from ${actual})` : ''}`;
  }
  return `import it with --granularity ${actual}${coarser}`;
}

/** The instrument and granularity a source states about itself (a file's fields, a v20 response's). */
export interface Stated {
  readonly instrument?: string;
  readonly granularity?: string;
}

/** Checks what a source states (its fields) against what it is used as. Throws a DataError naming `label`. */
export function checkStated(
  label: string,
  stated: Stated,
  instrument: string,
  granularity: Granularity,
  fix: GateFix = 'import',
): void {
  const verb = fix === 'run' ? 'run it' : 'import it';
  if (stated.instrument !== undefined && stated.instrument !== instrument) {
    throw new DataError(
      label,
      0,
      'instrument',
      `the file says it holds ${stated.instrument}, not ${instrument}: ${verb} with --instrument ${stated.instrument}`,
    );
  }
  if (stated.granularity !== undefined && stated.granularity !== granularity) {
    const g = stated.granularity as Granularity;
    throw new DataError(
      label,
      0,
      'granularity',
      `the file says its granularity is ${g}, not ${granularity}: ${granularityAdvice(g, granularity, fix, ' (then `fxflow data resample` builds coarser candles)')}`,
    );
  }
}

/**
 * Checks that a file may hold `instrument` at `granularity` by what it says about itself: its name
 * and fields. Throws a DataError naming the file and what it says.
 */
export function checkNames(
  file: string,
  instrument: string,
  granularity: Granularity,
  known: readonly string[],
  fix: GateFix = 'import',
): void {
  checkStated(file, fieldsOf(file), instrument, granularity, fix);
  checkInstrumentName(file, instrument, known, fix);
  const g = granularityInName(file);
  if (g !== undefined && g !== granularity) {
    throw new DataError(
      file,
      0,
      'granularity',
      `the file's name says ${g}, not ${granularity}: ${granularityAdvice(g, granularity, fix, ' (then `fxflow data resample` builds coarser candles)')}`,
    );
  }
}

/** Checks the instrument a file's (or folder's) name says against `instrument`: a DataError naming it otherwise. */
export function checkInstrumentName(
  file: string,
  instrument: string,
  known: readonly string[],
  fix: GateFix = 'import',
): void {
  const verb = fix === 'run' ? 'run it' : 'import it';
  const named = instrumentsInName(file, known);
  if (named.length > 0 && !named.includes(instrument)) {
    throw new DataError(
      file,
      0,
      'instrument',
      `the file's name says ${named.join(' or ')}, not ${instrument}: ${verb} with --instrument ${named[0]} (a file that really holds ${instrument} should be renamed)`,
    );
  }
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Whether `gap` (ms between two open times) is one candle of `g` (D, W, M: within an hour of a DST change). */
function isOneCandle(g: Granularity, gap: number): boolean {
  if (g === 'D') return gap >= DAY - HOUR && gap <= DAY + HOUR;
  if (g === 'W') return gap >= 7 * DAY - HOUR && gap <= 7 * DAY + HOUR;
  if (g === 'M') return gap >= 28 * DAY - HOUR && gap <= 31 * DAY + HOUR;
  return gap === granularityMs(g);
}

function describeGap(ms: number): string {
  if (ms % DAY === 0) return `${ms / DAY} day${ms === DAY ? '' : 's'}`;
  if (ms % HOUR === 0) return `${ms / HOUR} hour${ms === HOUR ? '' : 's'}`;
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}`;
  return `${ms / 1000} s`;
}

/** How many rows have every price checked against the instrument's precision. */
const PRECISION_ROWS = 1000;

/** Whether `x` has no more decimals than `scale` (10 ** display precision) allows. */
const atPrecision = (x: number, scale: number): boolean =>
  Math.abs(Math.round(x * scale) - x * scale) <= 1e-6 * Math.max(1, Math.abs(x * scale));

/** A price outside the instrument's plausible band: the source holds another instrument. */
function outOfBand(
  label: string,
  line: number,
  instrument: string,
  band: readonly [number, number],
  price: number,
  t: number,
  fix: GateFix,
): DataError {
  return new DataError(
    label,
    line,
    'price',
    `${instrument} trades between ${band[0]} and ${band[1]}; this ${fix === 'recording' ? 'recording' : 'file'} has ${price} at ${new Date(t).toISOString()}: ${anotherInstrument(fix, instrument)}`,
  );
}

/** A price with more decimals than the instrument quotes: the source holds another instrument. */
function tooPrecise(
  label: string,
  line: number,
  instrument: string,
  displayPrecision: number,
  price: number,
  t: number,
  fix: GateFix,
): DataError {
  return new DataError(
    label,
    line,
    'price',
    `${price} at ${new Date(t).toISOString()} has more decimals than ${instrument}'s ${displayPrecision}: ${fix === 'run' || fix === 'import' ? 'this file holds another instrument (pass the right --instrument)' : anotherInstrument(fix, instrument)}`,
  );
}

/**
 * The gate's row checks for prices that come one at a time (ticks: a backtest's `--ticks`, what
 * `fxflow record` recorded, a run's recorded inputs): each price in the instrument's band and (the
 * first 1,000) at its precision, as a candle's are; and their clock against the market's weekly
 * hours: more than a handful of prices while the market is closed refuse the source (`end`). A
 * refusal is a DataError naming `label` (or the file and line given with the price).
 */
export class PriceGate {
  readonly #band: readonly [number, number] | undefined;
  readonly #scale: number;
  readonly #watch: ClockWatch;
  #seen = 0;

  constructor(
    readonly label: string,
    readonly instrument: string,
    readonly displayPrecision: number,
    hours: MarketHours,
    readonly fix: GateFix,
  ) {
    this.#band = PLAUSIBLE[instrument];
    this.#scale = 10 ** displayPrecision;
    this.#watch = new ClockWatch(hours, 'S5');
  }

  /** A price seen at `t` (bid and ask; a candle's close): its band and precision. */
  price(t: number, bid: number, ask: number, file = this.label, line = 0): void {
    const band = this.#band;
    if (band !== undefined && (bid < band[0] || bid > band[1] || ask < band[0] || ask > band[1]))
      throw outOfBand(
        file,
        line,
        this.instrument,
        band,
        bid < band[0] || bid > band[1] ? bid : ask,
        t,
        this.fix,
      );
    if (this.#seen < PRECISION_ROWS) {
      this.#seen++;
      if (!atPrecision(bid, this.#scale))
        throw tooPrecise(file, line, this.instrument, this.displayPrecision, bid, t, this.fix);
      if (!atPrecision(ask, this.#scale))
        throw tooPrecise(file, line, this.instrument, this.displayPrecision, ask, t, this.fix);
    }
  }

  /** A tick: its price, and its time against the market's hours. */
  tick(t: number, bid: number, ask: number, file = this.label, line = 0): void {
    this.price(t, bid, ask, file, line);
    this.#watch.feedAt(t);
  }

  /** The prices' clock: throws when more than a handful fell while the market was closed. */
  end(): void {
    const r = this.#watch.report();
    if (clockFits(r)) return;
    const how =
      this.fix === 'recording'
        ? `OANDA sends no price while the market is closed: it is not a recording of ${this.instrument}'s prices as fxflow records them (times moved, or edited); record it again`
        : 'its times are not UTC instants of this market: check the file, and that it holds the instrument named';
    throw new DataError(
      this.label,
      0,
      'time',
      `${r.closed.toLocaleString('en-US')} of its ${r.bars.toLocaleString('en-US')} prices fall while the ${this.instrument} market is closed (first: ${describeClosed(r)}): ${how}`,
    );
  }
}

/** Passes ticks through a PriceGate: each tick as it passes, the clock at the end. */
export async function* checkedTicks(
  source: AsyncIterable<readonly Tick[]>,
  gate: PriceGate,
): AsyncIterable<readonly Tick[]> {
  for await (const batch of source) {
    for (let i = 0; i < batch.length; i++) {
      const t = batch[i]!;
      gate.tick(t.at, t.bid, t.ask);
    }
    yield batch;
  }
  gate.end();
}

/** How many gaps between rows decide the spacing (the most common one). */
const SPACING_SAMPLE = 2000;

/**
 * Passes the candles through while checking them against what the import was told:
 * - their spacing: the most common gap between consecutive rows (over the first 2,000) must be one
 *   candle of `granularity` (an M1 file imported as H1 is refused);
 * - their prices: inside the instrument's plausible band, and with no more decimals than its
 *   display precision (the first 1,000 rows).
 * A failure is a DataError naming `label` (the file) and what the data looks like instead.
 */
export async function* checkedCandles(
  source: AsyncIterable<readonly Candle[]>,
  label: string,
  instrument: string,
  granularity: Granularity,
  displayPrecision: number,
  /**
   * The instrument's trading hours and the clock the rows were read in: bars inside the market's
   * closures are counted, and more than a handful refuse the file, naming the clock its weeks fit
   * (clock-check.ts). `onReport` receives what was found either way.
   */
  clock?: {
    readonly hours: MarketHours;
    readonly read: string;
    readonly onReport?: (r: ClockReport) => void;
  },
  fix: GateFix = 'import',
  /**
   * For a source whose batches are kept as they pass (a download writes each page): the spacing
   * is decided at the end of the first batch that brings this many gaps, before it is handed on.
   */
  decideAtBatch = SPACING_SAMPLE,
): AsyncIterable<readonly Candle[]> {
  const watch = clock ? new ClockWatch(clock.hours, granularity, clock.read) : undefined;
  const band = PLAUSIBLE[instrument];
  const scale = 10 ** displayPrecision;
  const gaps = new Map<number, number>();
  let counted = 0;
  let decided = false;
  let prev = Number.NaN;
  let seen = 0;
  let lastTime = -Infinity;
  const decide = (): void => {
    decided = true;
    if (counted < 3) return;
    let mode = 0;
    let best = -1;
    for (const [gap, n] of gaps) if (n > best || (n === best && gap < mode)) [mode, best] = [gap, n];
    if (isOneCandle(granularity, mode)) return;
    const guess = GRANULARITIES.find((g) => isOneCandle(g, mode));
    const coarser =
      guess && granularityMs(guess) < granularityMs(granularity)
        ? ` (then \`fxflow data resample --granularity ${granularity}\` builds ${granularity} candles from it)`
        : '';
    throw new DataError(
      label,
      0,
      'granularity',
      `its rows are mostly ${describeGap(mode)} apart (${best} of the first ${counted} gaps), not one ${granularity} candle: ${guess ? `this is ${guess} data; ${granularityAdvice(guess, granularity, fix, coarser)}` : 'check the file'}`,
    );
  };
  for await (const batch of source) {
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      if (c.time <= lastTime) {
        throw new DataError(
          label,
          0,
          'time',
          `${new Date(c.time).toISOString()} comes after ${new Date(lastTime).toISOString()}: the files overlap or are not in time order; import them one at a time`,
        );
      }
      lastTime = c.time;
      watch?.feed(c);
      if (!decided) {
        if (prev === prev) {
          const gap = c.time - prev;
          gaps.set(gap, (gaps.get(gap) ?? 0) + 1);
          if (++counted >= SPACING_SAMPLE) decide();
        }
        prev = c.time;
      }
      if (band && (c.bc < band[0] || c.bc > band[1] || c.ac < band[0] || c.ac > band[1]))
        throw outOfBand(label, 0, instrument, band, c.bc, c.time, fix);
      if (seen < PRECISION_ROWS) {
        seen++;
        for (const x of [c.bo, c.bh, c.bl, c.bc, c.ao, c.ah, c.al, c.ac])
          if (!atPrecision(x, scale))
            throw tooPrecise(label, 0, instrument, displayPrecision, x, c.time, fix);
      }
    }
    if (!decided && counted >= decideAtBatch) decide();
    yield batch;
  }
  if (!decided) decide();
  if (watch) {
    const r = watch.report();
    const problem = clockProblem(r, instrument);
    if (problem !== undefined) throw new DataError(label, 0, 'time', problem);
    clock!.onReport?.(r);
  }
}
