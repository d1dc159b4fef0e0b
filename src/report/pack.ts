import type { TradeRow } from './metrics.ts';
import type { FillRow, RunModel, TradeLevels } from './run-model.ts';
import { FillColumns, packFillRows } from './transaction-fold.ts';

/**
 * The page's form of a run model: trades, fills and protective levels as columns (times and IDs as
 * differences, names as indexes into a table), which a year of M1 with 15k trades needs to stay a few
 * megabytes and parse in milliseconds. page/report.js `unpack` turns it back into RunModel's rows.
 */
export interface PackedRun extends Omit<RunModel, 'trades' | 'fills' | 'levels'> {
  readonly packed: {
    readonly names: string[];
    readonly trades: Record<string, (number | null)[]>;
    readonly fills: Record<string, (number | null)[]>;
    readonly levels: Record<string, number[]>;
  };
}

const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;

export function packRun(m: RunModel): PackedRun {
  const names: string[] = [];
  const index = new Map<string, number>();
  const name = (s: string): number => {
    let i = index.get(s);
    if (i === undefined) {
      i = names.length;
      names.push(s);
      index.set(s, i);
    }
    return i;
  };
  const delta = (xs: ArrayLike<number>, n = xs.length): number[] => {
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = i === 0 ? xs[0]! : r6(xs[i]! - xs[i - 1]!);
    return out;
  };
  const t = m.trades;
  const trades = {
    id: delta(t.map((x) => Number(x.id))),
    inst: t.map((x) => name(x.instrument)),
    units: t.map((x) => x.units),
    open: delta(t.map((x) => x.openTime)),
    // Seconds held (-1: still open).
    held: t.map((x) => (x.closeTime === null ? -1 : r6(x.closeTime - x.openTime))),
    openPrice: t.map((x) => x.openPrice),
    closePrice: t.map((x) => x.closePrice ?? 0),
    pl: t.map((x) => r6(x.pl)),
    financing: t.map((x) => r6(x.financing)),
    spread: t.map((x) => r6(x.spreadCost)),
    commission: t.map((x) => r6(x.commission)),
    reason: t.map((x) => name(x.closeReason)),
    // MAE, MFE, run-up % (null: not in this run folder's trades.csv).
    mae: t.map((x) => (x.mae === undefined || x.mae === null ? null : r6(x.mae))),
    mfe: t.map((x) => (x.mfe === undefined || x.mfe === null ? null : r6(x.mfe))),
    runUp: t.map((x) => (x.runUp === undefined || x.runUp === null ? null : r6(x.runUp))),
  };
  // The fold's columns (a run folder's report) or rows (a model built by hand), packed alike.
  const fills = m.fills instanceof FillColumns ? m.fills.packed(name, delta) : packFillRows(m.fills, name, delta);
  const levels = { trade: [] as number[], kind: [] as number[], time: [] as number[], value: [] as number[] };
  const kinds: (keyof TradeLevels)[] = ['sl', 'tp', 'ts'];
  for (const [id, lv] of Object.entries(m.levels)) {
    kinds.forEach((k, ki) => {
      for (const [time, value] of lv[k]) {
        levels.trade.push(Number(id));
        levels.kind.push(ki);
        levels.time.push(time);
        levels.value.push(value);
      }
    });
  }
  const { trades: _t, fills: _f, levels: _l, ...rest } = m;
  return { ...rest, packed: { names, trades, fills, levels: { ...levels, trade: delta(levels.trade), time: delta(levels.time) } } };
}

/** The inverse of packRun, as the page does it (for tests of the packing itself). */
export function unpackRun(p: PackedRun): { trades: TradeRow[]; fills: FillRow[]; levels: Record<string, TradeLevels> } {
  const { names, trades: T, fills: F, levels: L } = p.packed;
  const undelta = (xs: readonly number[]): number[] => {
    const out = new Array<number>(xs.length);
    let acc = 0;
    for (let i = 0; i < xs.length; i++) out[i] = acc = i === 0 ? xs[0]! : r6(acc + xs[i]!);
    return out;
  };
  const n = (k: string): number[] => (T[k] ?? []) as number[];
  const tid = undelta(n('id')), open = undelta(n('open'));
  const opt = (k: string, i: number): { [x: string]: number | null } => (T[k] && T[k]![i] !== null ? { [k]: T[k]![i]! } : {});
  const trades: TradeRow[] = tid.map((id, i) => ({
    id: String(id), instrument: names[n('inst')[i]!]!, units: n('units')[i]!, openTime: open[i]!, closeTime: n('held')[i]! < 0 ? null : r6(open[i]! + n('held')[i]!),
    openPrice: n('openPrice')[i]!, closePrice: n('held')[i]! < 0 ? null : n('closePrice')[i]!, pl: n('pl')[i]!, financing: n('financing')[i]!, spreadCost: n('spread')[i]!, commission: n('commission')[i]!, closeReason: names[n('reason')[i]!]!,
    ...opt('mae', i), ...opt('mfe', i), ...opt('runUp', i),
  }));
  const num = (xs: readonly (number | null)[] | undefined): number[] => (xs ?? []) as number[];
  const tradeOf = (offset: number | null | undefined, id: number): string => (offset === null || offset === undefined ? '' : String(id + offset));
  const fid = undelta(num(F.id)), ftime = undelta(num(F.time));
  const fills: FillRow[] = fid.map((id, i) => ({ id: String(id), time: ftime[i]!, instrument: names[num(F.inst)[i]!]!, units: num(F.units)[i]!, price: num(F.price)[i]!, reason: names[num(F.reason)[i]!]!, tradeID: tradeOf(F.trade![i], id) }));
  const levels: Record<string, TradeLevels> = {};
  const ltrade = undelta(L.trade!), ltime = undelta(L.time!);
  const kinds = ['sl', 'tp', 'ts'] as const;
  for (let i = 0; i < ltrade.length; i++) {
    const lv = (levels[String(ltrade[i])] ??= { sl: [], tp: [], ts: [] });
    lv[kinds[L.kind![i]!]!].push([ltime[i]!, L.value![i]!]);
  }
  return { trades, fills, levels };
}
