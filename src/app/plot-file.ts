import { join } from 'node:path';
import { formatIsoMs, type UnixMs } from '../domain/time.ts';
import type { PlotStyle } from '../strategy/api.ts';
import { checkPlot, PLOTS_CSV_HEADER, PLOTS_FILE } from '../report/plots.ts';
import { LineFile } from './line-file.ts';

/**
 * A run folder's plots.csv, written as `ctx.plot` is called (through one bounded buffer, as the
 * other run files), made at the first plot: a strategy that plots nothing leaves no file. A name,
 * pane or style is checked the first time it is seen with a given pane and style, not per value.
 */
export class PlotFile {
  readonly path: string;
  #out: LineFile | undefined;
  readonly #seen = new Map<string, { pane: string; style: string; instrument: string }>();
  rows = 0;

  constructor(dir: string) {
    this.path = join(dir, PLOTS_FILE);
  }

  /** The engine's plot sink (EngineOptions.onPlot). */
  readonly plot = (time: UnixMs, name: string, value: number, pane: string, style: PlotStyle, instrument: string): void => {
    const seen = this.#seen.get(name);
    if (seen === undefined || seen.pane !== pane || seen.style !== style || seen.instrument !== instrument) {
      checkPlot(name, pane, style, instrument);
      this.#seen.set(name, { pane, style, instrument });
    }
    if (this.#out === undefined) {
      this.#out = new LineFile(this.path, 1 << 18);
      this.#out.line(PLOTS_CSV_HEADER);
    }
    this.#out.line(`${formatIsoMs(time)},${name},${value},${pane},${style},${instrument}`);
    this.rows++;
  };

  /** Writes the rest and closes the file (idempotent; nothing to do when nothing was plotted). */
  close(): void {
    this.#out?.close();
  }
}
