import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Candle } from '../domain/candle.ts';
import { encodeCandles, type EncodedSeries } from './candle-codec.ts';

/** The file in a run folder that holds the candles its report charts. */
export const CHART_CANDLES_FILE = 'chart-candles.json';

/** The chart-candles.json document. */
export interface ChartCandles {
  readonly version: 1;
  readonly series: EncodedSeries[];
}

class Column {
  xs = new Float64Array(4096);
  push(i: number, v: number): void {
    if (i >= this.xs.length) {
      const next = new Float64Array(this.xs.length * 2);
      next.set(this.xs);
      this.xs = next;
    }
    this.xs[i] = v;
  }
}

class SeriesBuffer {
  readonly t = new Column();
  readonly o = new Column();
  readonly h = new Column();
  readonly l = new Column();
  readonly c = new Column();
  n = 0;
  constructor(readonly instrument: string, readonly granularity: string, readonly precision: number) {}
  add(x: Candle): void {
    const i = this.n++;
    this.t.push(i, x.time);
    this.o.push(i, (x.bo + x.ao) / 2);
    this.h.push(i, (x.bh + x.ah) / 2);
    this.l.push(i, (x.bl + x.al) / 2);
    this.c.push(i, (x.bc + x.ac) / 2);
  }
}

/**
 * Keeps the mid candles a backtest replays, for the report's price charts: the candle sources pass
 * through `tap` unchanged, and `write` saves them compactly (see candle-codec.ts). Five numbers a
 * candle in memory (a year of M1, 370k candles: 15 MB) until the run ends.
 */
export class CandleRecorder {
  readonly #series: SeriesBuffer[] = [];

  /** Passes a source through, keeping a copy of its complete candles. */
  async *tap(source: AsyncIterable<readonly Candle[]>, instrument: string, granularity: string, precision: number): AsyncIterable<readonly Candle[]> {
    const s = new SeriesBuffer(instrument, granularity, precision);
    this.#series.push(s);
    for await (const batch of source) {
      for (let i = 0; i < batch.length; i++) {
        const c = batch[i]!;
        if (c.complete) s.add(c);
      }
      yield batch;
    }
  }

  /** The recorded series, encoded. */
  encode(): ChartCandles {
    return {
      version: 1,
      series: this.#series.map((s) => encodeCandles({ instrument: s.instrument, granularity: s.granularity, precision: s.precision }, s.t.xs, s.o.xs, s.h.xs, s.l.xs, s.c.xs, s.n)),
    };
  }

  /** Writes chart-candles.json into the run folder. */
  write(runDir: string): void {
    writeFileSync(join(runDir, CHART_CANDLES_FILE), `${JSON.stringify(this.encode())}\n`);
  }
}
