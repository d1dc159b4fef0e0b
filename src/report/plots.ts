// A strategy's own lines and signals (`ctx.plot`): plots.csv as the run writes it, and read back
// for the page in bounded memory.
import { forEachLine } from './file-lines.ts';

/** The run folder's file of `ctx.plot` values. */
export const PLOTS_FILE = 'plots.csv';
/** Its header: RFC 3339 time, the plot's name, its value, its pane ('' = on the price chart), its style, the instrument whose chart it is on. */
export const PLOTS_CSV_HEADER = 'time,name,value,pane,style,instrument';

/** How a plot is drawn: a line, or a marker per value (an arrow up, an arrow down, a dot). */
export type PlotStyle = 'line' | 'up' | 'down' | 'dot';
export const PLOT_STYLES: readonly PlotStyle[] = ['line', 'up', 'down', 'dot'];

/** A name or pane a CSV cell can hold as it is: no comma, quote or line break, at most 64 characters. */
const PLAIN = /^[^,"\r\n]{1,64}$/;

/** Throws a one-line error naming what is wrong with a plot's name, pane or style. */
export function checkPlot(name: string, pane: string, style: string, instrument = ''): void {
  if (typeof name !== 'string' || !PLAIN.test(name))
    throw new RangeError(
      `ctx.plot(${JSON.stringify(name)}): a plot's name is 1 to 64 characters with no comma, quote or line break`,
    );
  if (typeof pane !== 'string' || (pane !== '' && !PLAIN.test(pane)))
    throw new RangeError(
      `ctx.plot('${name}', …, { pane: ${JSON.stringify(pane)} }): a pane's name is 1 to 64 characters with no comma, quote or line break`,
    );
  if (!(PLOT_STYLES as readonly string[]).includes(style))
    throw new RangeError(
      `ctx.plot('${name}', …, { style: ${JSON.stringify(style)} }): the style is one of ${PLOT_STYLES.join(', ')}`,
    );
  if (typeof instrument !== 'string' || (instrument !== '' && !PLAIN.test(instrument)))
    throw new RangeError(
      `ctx.plot('${name}', …, { instrument: ${JSON.stringify(instrument)} }): give an instrument's name, e.g. 'EUR_USD'`,
    );
}

/** One plot series as the page draws it: times in epoch seconds, at most MAX_PLOT_POINTS points. */
export interface PlotSeries {
  readonly name: string;
  readonly pane: string;
  readonly style: PlotStyle;
  readonly instrument: string;
  readonly t: number[];
  readonly v: number[];
  /** Values the run plotted under this name. */
  readonly count: number;
  /** When thinned: the buckets the run's values were cut into (each kept as its lowest and highest). */
  readonly buckets: number;
}

/** Points a plot keeps whole; a longer one is thinned to PLOT_BUCKETS buckets. */
export const MAX_PLOT_POINTS = 20_000;
/** Buckets of a thinned plot: a line keeps each bucket's lowest and highest value, a marker style its first. */
export const PLOT_BUCKETS = 8_000;
/** Distinct plot names a page draws at most (a run that names a plot per trade would draw thousands). */
export const MAX_PLOTS = 48;

/** Calls `fn` with the cells of each line of a file after the header (empty lines skipped). */
function eachRow(path: string, fn: (cells: string[], line: number) => void): void {
  forEachLine(path, (line, n) => {
    if (n > 1 && line !== '') fn(line.split(','), n);
  });
}

interface Tally {
  name: string;
  pane: string;
  style: PlotStyle;
  instrument: string;
  count: number;
  first: number;
  last: number;
}

/**
 * Reads plots.csv in two passes, holding per plot at most MAX_PLOT_POINTS points (or PLOT_BUCKETS
 * buckets): the first pass counts each plot's values and its first and last time, the second keeps
 * a short plot whole and cuts a long one into buckets of equal time, each kept as its lowest and
 * highest value in time order (a marker style: its first), so the extremes survive at any length.
 * A row that does not parse is skipped and said once in `warnings`.
 */
export function readPlots(path: string, warnings: string[]): PlotSeries[] {
  const tally = new Map<string, Tally>();
  let bad = 0;
  let firstBad = 0;
  let dropped = 0;
  const parse = (c: string[]): { t: number; v: number } | undefined => {
    if (c.length < 4) return undefined;
    const t = Date.parse(c[0]!) / 1000;
    const v = Number(c[2]);
    return Number.isFinite(t) && Number.isFinite(v) && c[2] !== '' ? { t, v } : undefined;
  };
  eachRow(path, (c, line) => {
    const p = parse(c);
    if (p === undefined) {
      if (bad++ === 0) firstBad = line;
      return;
    }
    const name = c[1]!;
    let s = tally.get(name);
    if (s === undefined) {
      if (tally.size >= MAX_PLOTS) {
        dropped++;
        return;
      }
      const style = (PLOT_STYLES as readonly string[]).includes(c[4] ?? '') ? (c[4] as PlotStyle) : 'line';
      tally.set(
        name,
        (s = { name, pane: c[3] ?? '', style, instrument: c[5] ?? '', count: 0, first: p.t, last: p.t }),
      );
    }
    s.count++;
    if (p.t < s.first) s.first = p.t;
    if (p.t > s.last) s.last = p.t;
  });
  if (bad > 0)
    warnings.push(
      `${PLOTS_FILE}: ${bad} row${bad === 1 ? '' : 's'} that do not parse (the first at line ${firstBad}; a row is time,name,value,pane,style,instrument) skipped`,
    );
  if (dropped > 0)
    warnings.push(
      `${PLOTS_FILE} names more than ${MAX_PLOTS} plots: only the first ${MAX_PLOTS} names are drawn (${dropped} values of the others left out)`,
    );
  if (tally.size === 0) return [];
  type Keep = {
    s: Tally;
    t: number[];
    v: number[];
    lo?: Float64Array;
    hi?: Float64Array;
    loT?: Float64Array;
    hiT?: Float64Array;
    width: number;
  };
  const keep = new Map<string, Keep>();
  for (const s of tally.values()) {
    const k: Keep = { s, t: [], v: [], width: 0 };
    if (s.count > MAX_PLOT_POINTS) {
      k.width = (s.last - s.first) / PLOT_BUCKETS || 1;
      k.lo = new Float64Array(PLOT_BUCKETS).fill(Number.NaN);
      k.hi = new Float64Array(PLOT_BUCKETS).fill(Number.NaN);
      k.loT = new Float64Array(PLOT_BUCKETS);
      k.hiT = new Float64Array(PLOT_BUCKETS);
    }
    keep.set(s.name, k);
  }
  eachRow(path, (c) => {
    const k = keep.get(c[1]!);
    if (k === undefined) return;
    const p = parse(c);
    if (p === undefined) return;
    if (k.lo === undefined) {
      k.t.push(p.t);
      k.v.push(p.v);
      return;
    }
    const b = Math.min(PLOT_BUCKETS - 1, Math.floor((p.t - k.s.first) / k.width));
    const lo = k.lo,
      hi = k.hi!;
    if (k.s.style !== 'line') {
      if (Number.isNaN(lo[b]!)) {
        lo[b] = p.v;
        k.loT![b] = p.t;
      }
      return;
    }
    if (Number.isNaN(lo[b]!) || p.v < lo[b]!) {
      lo[b] = p.v;
      k.loT![b] = p.t;
    }
    if (Number.isNaN(hi[b]!) || p.v > hi[b]!) {
      hi[b] = p.v;
      k.hiT![b] = p.t;
    }
  });
  const out: PlotSeries[] = [];
  for (const k of keep.values()) {
    let t = k.t,
      v = k.v;
    if (k.lo !== undefined) {
      t = [];
      v = [];
      for (let b = 0; b < PLOT_BUCKETS; b++) {
        const lv = k.lo[b]!;
        if (Number.isNaN(lv)) continue;
        const lt = k.loT![b]!;
        if (k.s.style !== 'line' || k.hiT![b] === lt) {
          t.push(lt);
          v.push(lv);
        } else if (lt < k.hiT![b]!) {
          t.push(lt, k.hiT![b]!);
          v.push(lv, k.hi![b]!);
        } else {
          t.push(k.hiT![b]!, lt);
          v.push(k.hi![b]!, lv);
        }
      }
    } else if (!isSorted(t)) {
      // A plot written from several handlers is in event order, which is time order; sorted all the same.
      const order = t.map((_, i) => i).sort((a, b) => t[a]! - t[b]!);
      t = order.map((i) => k.t[i]!);
      v = order.map((i) => k.v[i]!);
    }
    out.push({
      name: k.s.name,
      pane: k.s.pane,
      style: k.s.style,
      instrument: k.s.instrument,
      t,
      v,
      count: k.s.count,
      buckets: k.lo !== undefined ? PLOT_BUCKETS : 0,
    });
  }
  return out;
}

function isSorted(xs: readonly number[]): boolean {
  for (let i = 1; i < xs.length; i++) if (xs[i]! < xs[i - 1]!) return false;
  return true;
}
