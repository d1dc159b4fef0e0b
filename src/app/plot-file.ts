import { existsSync, statSync } from 'node:fs';
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

  readonly #append: boolean;

  /** `append`: a live run folder, which a restart continues: its plots.csv is added to (one header). */
  constructor(dir: string, o: { append?: boolean } = {}) {
    this.path = join(dir, PLOTS_FILE);
    this.#append = o.append === true;
  }

  /** The engine's plot sink (EngineOptions.onPlot). */
  readonly plot = (
    time: UnixMs,
    name: string,
    value: number,
    pane: string,
    style: PlotStyle,
    instrument: string,
  ): void => {
    const seen = this.#seen.get(name);
    if (seen === undefined || seen.pane !== pane || seen.style !== style || seen.instrument !== instrument) {
      checkPlot(name, pane, style, instrument);
      this.#seen.set(name, { pane, style, instrument });
    }
    if (this.#out === undefined) {
      const fresh = !this.#append || !existsSync(this.path) || statSync(this.path).size === 0;
      this.#out = new LineFile(this.path, 1 << 18, this.#append);
      if (fresh) this.#out.line(PLOTS_CSV_HEADER);
    }
    this.#out.line(`${formatIsoMs(time)},${name},${value},${pane},${style},${instrument}`);
    this.rows++;
  };

  /** Writes the rest and closes the file (idempotent; nothing to do when nothing was plotted). */
  close(): void {
    this.#out?.close();
  }
}
