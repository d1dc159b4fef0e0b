import { CoverageTracker, DataError, formatHole, type Hole } from '../adapters/catalog/index.ts';
import type { Candle } from '../domain/candle.ts';
import type { Granularity } from '../domain/granularity.ts';
import { formatIsoMs } from '../domain/time.ts';
import type { DataHole, DataReport, SeriesOrigin } from '../engine/report.ts';
import type { BacktestConfig } from './config.ts';

/** A backtest on one-sided data with no spread model named. */
export class SpreadModelError extends Error {
  readonly code = 'SPREAD_MODEL' as const;
  constructor(message: string) {
    super(message);
    this.name = 'SpreadModelError';
  }
}

const ONE_SIDED = new Set(['mid', 'bid', 'ask']);

/** How to name a spread model for one-sided data, as the error says it. */
const HOW =
  'name a spread model: --spread fixed --spread-pips X (e.g. 1.2 for EUR_USD), --spread hourly (data.spreadPipsByHour in a config file), or --spread mid to accept a zero spread knowingly';

const iso = (t: number): string | null => (Number.isNaN(t) ? null : formatIsoMs(t));

/**
 * Watches one series of a backtest as it streams: its first and last candle, its holes beyond
 * weekends and holidays (listed through `onHole`, or an error at the first with `strict`), and,
 * when its source does not know its sides, whether it is one-sided (every candle of the first batch
 * with bid = ask). Costs one comparison per candle beyond passing the batch on.
 */
export class SeriesWatch {
  readonly tracker: CoverageTracker;
  rows = 0;
  sides: string;

  constructor(
    readonly instrument: string,
    readonly granularity: Granularity,
    readonly origin: SeriesOrigin,
    readonly from: number,
    readonly to: number,
    readonly spread: BacktestConfig['data']['spread'],
    readonly strict: boolean,
    readonly onHole?: (h: DataHole) => void,
  ) {
    this.sides = origin.sides;
    this.tracker = new CoverageTracker(granularity, from, (h) => this.#hole(h));
  }

  /** One-sided data under the 'native' spread model is an error saying how to name a model. */
  requireSpreadModel(): void {
    if (this.spread === 'native' && ONE_SIDED.has(this.sides)) {
      throw new SpreadModelError(
        `${this.instrument} ${this.granularity} holds ${this.sides} prices only (${this.origin.source}), so the data has no spread of its own and a backtest on it would trade for free: ${HOW}`,
      );
    }
  }

  #hole(h: Hole): void {
    const d: DataHole = {
      instrument: this.instrument,
      granularity: this.granularity,
      from: formatIsoMs(h.from),
      to: formatIsoMs(h.to),
      openHours: h.openHours,
    };
    if (this.strict) {
      throw new DataError(
        this.origin.source,
        0,
        '',
        `${this.instrument} ${this.granularity} has a hole beyond weekends and holidays: ${formatHole(h)}. --strict-data stops here; import the missing period, or choose --from/--to around it`,
      );
    }
    this.onHole?.(d);
  }

  get holes(): DataHole[] {
    return this.tracker.holes.map((h) => ({
      instrument: this.instrument,
      granularity: this.granularity,
      from: formatIsoMs(h.from),
      to: formatIsoMs(h.to),
      openHours: h.openHours,
    }));
  }

  async *read(source: AsyncIterable<readonly Candle[]>): AsyncIterable<readonly Candle[]> {
    const t = this.tracker;
    let sniff = this.sides === 'unknown';
    for await (const batch of source) {
      if (sniff && batch.length > 0) {
        sniff = false;
        let same = true;
        for (let i = 0; i < batch.length && same; i++) {
          const c = batch[i]!;
          same = c.bo === c.ao && c.bc === c.ac && c.bh === c.ah && c.bl === c.al;
        }
        this.sides = same ? 'mid' : 'bid/ask';
        if (same && this.spread === 'native') {
          throw new SpreadModelError(
            `${this.instrument} ${this.granularity} has bid = ask in every candle (${this.origin.source}): it is one-sided (mid or bid only) data with no spread of its own, and a backtest on it would trade for free: ${HOW}`,
          );
        }
      }
      for (let i = 0; i < batch.length; i++) t.feed(batch[i]!);
      this.rows += batch.length;
      yield batch;
    }
    // No candle at all is not a hole: the backtest says there is no data (or runs on other series).
    if (this.rows > 0) t.end(this.to);
  }
}

/** The summary's `data`: the traded series (the first subscription) first, every series in `series`. */
export function dataReport(
  watched: readonly SeriesWatch[],
  traded: { instrument: string; granularity: Granularity } | undefined,
  data: BacktestConfig['data'],
): DataReport {
  const main =
    watched.find(
      (w) => traded && w.instrument === traded.instrument && w.granularity === traded.granularity,
    ) ?? watched[0];
  const text =
    data.spread === 'native'
      ? "native (the data's own bid and ask)"
      : data.spread === 'mid'
        ? 'mid (zero spread, both sides at the mid)'
        : data.spread === 'fixed'
          ? `fixed ${data.spreadPips} pips around the mid`
          : data.spread === 'labs'
            ? 'labs (the recorded OANDA labs average spread of each interval around the mid)'
            : `hourly (pips by UTC hour: ${(data.spreadPipsByHour ?? []).join(' ')})`;
  const firsts = watched.map((w) => w.tracker.first).filter((x) => !Number.isNaN(x));
  const lasts = watched.map((w) => w.tracker.last).filter((x) => !Number.isNaN(x));
  return {
    source: main?.origin.source ?? 'none',
    sides: main?.sides ?? 'unknown',
    synthetic: watched.some((w) => w.origin.synthetic),
    spreadModel: {
      kind: data.spread,
      ...(data.spread === 'fixed' ? { pips: data.spreadPips } : {}),
      ...(data.spread === 'hourly' && data.spreadPipsByHour ? { pipsByHour: data.spreadPipsByHour } : {}),
      text,
    },
    coverage: {
      from: firsts.length ? iso(Math.min(...firsts)) : null,
      to: lasts.length ? iso(Math.max(...lasts)) : null,
      holes: watched.flatMap((w) => w.holes),
    },
    series: watched.map((w) => ({
      instrument: w.instrument,
      granularity: w.granularity,
      source: w.origin.source,
      sides: w.sides,
      synthetic: w.origin.synthetic,
      rows: w.rows,
      from: iso(w.tracker.first),
      to: iso(w.tracker.last),
    })),
  };
}
