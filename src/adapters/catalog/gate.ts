import type { Candle } from '../../domain/candle.ts';
import type { Granularity } from '../../domain/granularity.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { UnixMs } from '../../domain/time.ts';
import type { ClockReport } from './clock-check.ts';
import { DataError } from './errors.ts';
import { detectFormat, type CandleFormat } from './formats.ts';
import type { Tick } from '../../domain/tick.ts';
import {
  checkedCandles,
  checkedTicks,
  checkInstrumentName,
  checkNames,
  checkStated,
  PriceGate,
  type GateFix,
  type Stated,
} from './import-checks.ts';

/**
 * The one gate every price source passes before its prices are used or kept: a backtest's
 * `--data` file or folder (src/app/sources.ts), `fxflow data import` (src/cli/data-import.ts),
 * `fxflow data download` (src/adapters/v20/download.ts), the sandbox's data (its catalog's M1
 * series as the price feed reads them: src/sandbox/market.ts), and prices that come one at a time
 * (`gateTicks`, `priceGate`): a backtest's `--ticks` (src/app/library.ts), the ticks `fxflow
 * record` recorded as `fxflow data check` reads them (recording-check.ts), and a run's recorded
 * inputs as `fxflow replay` reads them (src/app/replay.ts). Backtests on the catalog read series
 * that came in through one of these doors.
 *
 * What is checked, against what the source is used as (instrument, granularity):
 * - what the source says about itself: a file's name (`GBP_USD_M1.csv`) and fields (OANDA JSON's
 *   `instrument` and `granularity`, the OANDA mid CSV's `Pair`), a v20 response's own fields;
 * - its rows: their spacing (the commonest gap is one candle), time order across files, prices in
 *   the instrument's band and at its precision, and its clock against the market's hours
 *   (import-checks.ts, clock-check.ts);
 * - a source with no rows at all is said to have none, naming it.
 * The readers check each row's fields and the side (`--side` against what a file says; a
 * one-sided file that does not say is refused without it: candle-builder.ts; ticks carry both).
 * Prices one at a time have no spacing to check; their name (a recording's instrument folder),
 * band, precision and clock are checked as a candle source's are.
 *
 * A mismatch is a DataError naming the source, what it holds, what was asked and how to fix it,
 * worded for the command (`fix`: import it with …, run it with …).
 */

export interface GateAsk {
  /** What the source is used as. */
  readonly instrument: string;
  readonly granularity: Granularity;
  /** The instruments fxflow knows: names, display precision, trading hours. */
  readonly instruments: InstrumentRegistry;
  /** The clock the rows' times were read in (`--timezone` form); 'UTC' for instants. */
  readonly read: string;
  /** How a refusal says to fix it: `import` (data import's flags) or `run` (a backtest's `--data`). */
  readonly fix: GateFix;
  /** The period read, when one was given: a source with rows, none of them in it, is said so (import). */
  readonly from?: UnixMs;
  readonly to?: UnixMs;
  /**
   * Set for a source whose batches are kept as they pass (a download writes each page): the rows'
   * spacing is decided on the first batch that brings this many gaps, before it is handed on.
   */
  readonly decideAtBatch?: number;
  /** Receives what was found about the rows' clock (the import prints it). */
  readonly onReport?: (r: ClockReport) => void;
}

/** The clock a file's rows are read in: the `--timezone` given, else what every file's format documents (HistData −05:00, else UTC). */
export function readClock(
  files: readonly string[],
  format: CandleFormat | undefined,
  timezone: string | undefined,
): string {
  if (timezone !== undefined) return timezone;
  return files.length > 0 && files.every((f) => (format ?? detectFormat(f)) === 'histdata')
    ? '-05:00'
    : 'UTC';
}

/** Checks what a file says about itself (its name and fields) against the ask. */
export function gateFileNames(
  file: string,
  ask: Pick<GateAsk, 'instrument' | 'granularity' | 'instruments' | 'fix'>,
): void {
  checkNames(
    file,
    ask.instrument,
    ask.granularity,
    ask.instruments.list().map((i) => i.name),
    ask.fix,
  );
}

/** Checks what a source without a file states (a v20 response's `instrument` and `granularity`) against the ask. */
export function gateStated(label: string, stated: Stated, ask: GateAsk): void {
  checkStated(label, stated, ask.instrument, ask.granularity, ask.fix);
}

/** The rows of a source, checked as they pass (spacing, order, prices, clock); a refusal names `label`. */
export function gateRows(
  source: AsyncIterable<readonly Candle[]>,
  label: string,
  ask: GateAsk,
): AsyncIterable<readonly Candle[]> {
  const inst = ask.instruments.get(ask.instrument);
  return checkedCandles(
    source,
    label,
    ask.instrument,
    ask.granularity,
    inst.displayPrecision,
    { hours: inst.hours, read: ask.read, ...(ask.onReport ? { onReport: ask.onReport } : {}) },
    ask.fix,
    ask.decideAtBatch,
  );
}

/**
 * Files (a file, a folder's files in name order: `dataFiles`) through the gate: every file's name
 * and fields are checked before a row is read, then the rows of all of them as one series.
 * `open(file, whole)` reads one file: in the ask's period, or whole (`whole` true: only to tell a
 * file with no rows from one with none in the period). `label` names the source in refusals.
 */
export async function* gateFiles(
  files: readonly string[],
  label: string,
  ask: GateAsk,
  open: (file: string, whole: boolean) => AsyncIterable<readonly Candle[]>,
): AsyncIterable<readonly Candle[]> {
  if (files.length === 0) throw new DataError(label, 0, '', 'the folder holds no files');
  for (const f of files) gateFileNames(f, ask);
  let rows = 0;
  const all = (async function* () {
    for (const f of files) yield* open(f, false);
  })();
  for await (const batch of gateRows(all, label, ask)) {
    rows += batch.length;
    yield batch;
  }
  if (rows > 0) return;
  for (const f of files)
    if (await hasRows(() => open(f, true))) {
      if (ask.fix === 'import' && (ask.from !== undefined || ask.to !== undefined)) {
        const when = `${ask.from !== undefined ? ` from ${new Date(ask.from).toISOString()}` : ''}${ask.to !== undefined ? ` to ${new Date(ask.to).toISOString()}` : ''}`;
        throw new DataError(
          label,
          0,
          '',
          `it has no rows in the period asked (--from/--to${when}): give a period the file covers`,
        );
      }
      return; // rows, none in the period: the caller names the period (a backtest does)
    }
  throw new DataError(
    label,
    0,
    '',
    `${files.length === 1 ? 'the file has no rows' : `none of its ${files.length} files has a row`} (a header or empty lines only${files.some((f) => /json/i.test(f)) ? ', or incomplete candles only' : ''}): nothing to ${ask.fix === 'import' ? 'import' : 'run on'}; check that it is the file meant`,
  );
}

/**
 * Whether a reader gives at least one candle (it stops at the first batch that has one). A row
 * the reader refuses outside the period (a one-sided row where a spread model is needed) is a
 * row: the period's own message is the one to give.
 */
async function hasRows(source: () => AsyncIterable<readonly Candle[]>): Promise<boolean> {
  try {
    for await (const b of source()) if (b.length > 0) return true;
  } catch (e) {
    if (e instanceof DataError && e.line > 0) return true;
    throw e;
  }
  return false;
}

/** What prices that come one at a time are checked against. */
export interface TickAsk {
  readonly instrument: string;
  readonly instruments: InstrumentRegistry;
  readonly fix: GateFix;
}

/** The gate's row checks for prices of `ask.instrument` one at a time (fed by the caller); a refusal names `label`. */
export function priceGate(label: string, ask: TickAsk): PriceGate {
  const inst = ask.instruments.get(ask.instrument);
  return new PriceGate(label, ask.instrument, inst.displayPrecision, inst.hours, ask.fix);
}

/**
 * Ticks through the gate: what the path (a file, a recording's instrument folder) says about its
 * instrument, before anything is read; then each tick's price, and their clock at the end.
 */
export function gateTicks(
  source: AsyncIterable<readonly Tick[]>,
  path: string,
  ask: TickAsk,
): AsyncIterable<readonly Tick[]> {
  checkInstrumentName(
    path,
    ask.instrument,
    ask.instruments.list().map((i) => i.name),
    ask.fix,
  );
  return checkedTicks(source, priceGate(path, ask));
}

/**
 * A catalog series read as it is (the sandbox's data): what its series.json states (instrument,
 * granularity) and its rows, against what it is read as. `label` is the series folder.
 */
export function gateSeries(
  source: AsyncIterable<readonly Candle[]>,
  label: string,
  stated: Stated | undefined,
  ask: GateAsk,
): AsyncIterable<readonly Candle[]> {
  if (stated !== undefined) gateStated(label, stated, ask);
  return gateRows(source, label, ask);
}

/**
 * The prices of a run's recorded inputs (`fxflow replay`) through the gate, per instrument: each
 * tick's price and clock, each candle's close prices. Fed from a reader's callback, where a throw
 * has nowhere to go: the first refusal is kept, and `end()` throws it (or the clock's verdict).
 * Instruments fxflow does not know are the replay's to name, not the gate's.
 */
export class RecordedPricesGate {
  readonly #gates = new Map<string, PriceGate>();
  #refused: DataError | undefined;

  constructor(
    readonly dir: string,
    readonly instruments: InstrumentRegistry,
  ) {}

  #gate(instrument: string): PriceGate | undefined {
    if (this.#refused !== undefined || !this.instruments.has(instrument)) return undefined;
    let g = this.#gates.get(instrument);
    if (g === undefined) {
      g = priceGate(this.dir, { instrument, instruments: this.instruments, fix: 'recording' });
      this.#gates.set(instrument, g);
    }
    return g;
  }

  #try(f: () => void): void {
    try {
      f();
    } catch (e) {
      if (!(e instanceof DataError)) throw e;
      this.#refused = e;
    }
  }

  /** A recorded price of `instrument` at `t`, read from `file` at `line`. */
  tick(instrument: string, t: number, bid: number, ask: number, file: string, line: number): void {
    const g = this.#gate(instrument);
    if (g !== undefined) this.#try(() => g.tick(t, bid, ask, file, line));
  }

  /** A recorded candle: its close prices (its time is the candle's, not a price's). */
  candle(c: Candle, file: string, line: number): void {
    const g = this.#gate(c.instrument);
    if (g !== undefined) this.#try(() => g.price(c.time, c.bc, c.ac, file, line));
  }

  /** Throws the first refusal, else each instrument's clock verdict. */
  end(): void {
    if (this.#refused !== undefined) throw this.#refused;
    for (const g of this.#gates.values()) g.end();
  }
}
