import type { TradeRow } from './metrics.ts';
import type { FillRow, RunModel, TradeLevels } from './run-model.ts';
import { PackedColumn, TradeView } from './trade-columns.ts';
import { FillColumns, packFillRows } from './transaction-fold.ts';

/**
 * The page's form of a run model: trades, fills and protective levels as columns (times and IDs as
 * differences, names as indexes into a table), which a year of M1 with 15k trades needs to stay a few
 * megabytes and parse in milliseconds. page/report.js `unpack` turns it back into RunModel's rows.
 * The columns are PackedColumns (html.ts: NaN where the page reads null), computed from the fold's
 * columns as writePage streams them into the page: no array per column, no object per trade or fill.
 */
export interface PackedRun extends Omit<RunModel, 'trades' | 'fills' | 'levels'> {
  readonly packed: {
    readonly names: string[];
    readonly trades: Record<string, PackedColumn>;
    readonly fills: Record<string, PackedColumn>;
    readonly levels: Record<string, PackedColumn>;
  };
}

const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Trade rows (a model built by hand) as TradeView.packed writes the fold's columns. */
function packTradeRows(
  t: readonly TradeRow[],
  name: (s: string) => number,
  delta: (xs: ArrayLike<number>, n: number) => PackedColumn,
): Record<string, PackedColumn> {
  const col = (f: (x: TradeRow) => number): PackedColumn => new PackedColumn(t.length, (i) => f(t[i]!));
  // Every instrument, then every reason, named in row order (as the fold's columns are).
  const inst = t.map((x) => name(x.instrument));
  const reason = t.map((x) => name(x.closeReason));
  const opt = (x: number | null | undefined): number => (x === undefined || x === null ? NaN : r6(x));
  return {
    id: delta(
      t.map((x) => Number(x.id)),
      t.length,
    ),
    inst: PackedColumn.of(inst),
    units: col((x) => x.units),
    open: delta(
      t.map((x) => x.openTime),
      t.length,
    ),
    // Seconds held (-1: still open).
    held: col((x) => (x.closeTime === null ? -1 : r6(x.closeTime - x.openTime))),
    openPrice: col((x) => x.openPrice),
    closePrice: col((x) => x.closePrice ?? 0),
    pl: col((x) => r6(x.pl)),
    financing: col((x) => r6(x.financing)),
    spread: col((x) => r6(x.spreadCost)),
    commission: col((x) => r6(x.commission)),
    reason: PackedColumn.of(reason),
    // MAE, MFE, run-up % (NaN, null in the page: not in this run folder's trades.csv).
    mae: col((x) => opt(x.mae)),
    mfe: col((x) => opt(x.mfe)),
    runUp: col((x) => opt(x.runUp)),
  };
}

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
  const delta = (xs: ArrayLike<number>, n = xs.length): PackedColumn =>
    new PackedColumn(n, (i) => (i === 0 ? xs[0]! : r6(xs[i]! - xs[i - 1]!)));
  // The fold's columns (a run folder's report) or rows (a model built by hand), packed alike:
  // trades first, then fills, so the name table is in the same order either way.
  const trades =
    m.trades instanceof TradeView ? m.trades.packed(name, delta) : packTradeRows(m.trades, name, delta);
  const fills =
    m.fills instanceof FillColumns ? m.fills.packed(name, delta) : packFillRows(m.fills, name, delta);
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
  return {
    ...rest,
    packed: {
      names,
      trades,
      fills,
      levels: {
        trade: delta(levels.trade),
        kind: PackedColumn.of(levels.kind),
        time: delta(levels.time),
        value: PackedColumn.of(levels.value),
      },
    },
  };
}

/** The inverse of packRun, as the page does it (for tests of the packing itself). */
export function unpackRun(p: PackedRun): {
  trades: TradeRow[];
  fills: FillRow[];
  levels: Record<string, TradeLevels>;
} {
  const {
    names,
    trades: T,
    fills: F,
    levels: L,
  } = p.packed as unknown as {
    names: string[];
    trades: Record<string, (number | null)[]>;
    fills: Record<string, (number | null)[]>;
    levels: Record<string, number[]>;
  };
  const undelta = (xs: readonly number[]): number[] => {
    const out = new Array<number>(xs.length);
    let acc = 0;
    for (let i = 0; i < xs.length; i++) out[i] = acc = i === 0 ? xs[0]! : r6(acc + xs[i]!);
    return out;
  };
  const n = (k: string): number[] => (T[k] ?? []) as number[];
  const tid = undelta(n('id')),
    open = undelta(n('open'));
  const opt = (k: string, i: number): { [x: string]: number | null } =>
    T[k] && T[k]![i] !== null ? { [k]: T[k]![i]! } : {};
  const trades: TradeRow[] = tid.map((id, i) => ({
    id: String(id),
    instrument: names[n('inst')[i]!]!,
    units: n('units')[i]!,
    openTime: open[i]!,
    closeTime: n('held')[i]! < 0 ? null : r6(open[i]! + n('held')[i]!),
    openPrice: n('openPrice')[i]!,
    closePrice: n('held')[i]! < 0 ? null : n('closePrice')[i]!,
    pl: n('pl')[i]!,
    financing: n('financing')[i]!,
    spreadCost: n('spread')[i]!,
    commission: n('commission')[i]!,
    closeReason: names[n('reason')[i]!]!,
    ...opt('mae', i),
    ...opt('mfe', i),
    ...opt('runUp', i),
  }));
  const num = (xs: readonly (number | null)[] | undefined): number[] => (xs ?? []) as number[];
  const tradeOf = (offset: number | null | undefined, id: number): string =>
    offset === null || offset === undefined ? '' : String(id + offset);
  const fid = undelta(num(F.id)),
    ftime = undelta(num(F.time));
  const fills: FillRow[] = fid.map((id, i) => ({
    id: String(id),
    time: ftime[i]!,
    instrument: names[num(F.inst)[i]!]!,
    units: num(F.units)[i]!,
    price: num(F.price)[i]!,
    reason: names[num(F.reason)[i]!]!,
    tradeID: tradeOf(F.trade![i], id),
  }));
  const levels: Record<string, TradeLevels> = {};
  const ltrade = undelta(L.trade!),
    ltime = undelta(L.time!);
  const kinds = ['sl', 'tp', 'ts'] as const;
  for (let i = 0; i < ltrade.length; i++) {
    const lv = (levels[String(ltrade[i])] ??= { sl: [], tp: [], ts: [] });
    lv[kinds[L.kind![i]!]!].push([ltime[i]!, L.value![i]!]);
  }
  return { trades, fills, levels };
}
