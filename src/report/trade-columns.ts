import { PackedColumn } from './html.ts';
import type { ClosedTrades, TradeRow } from './metrics.ts';

export { PackedColumn } from './html.ts';

/** A Float64Array twice as long, holding the first `n` values of `a`. */
const grown64 = (a: Float64Array, n: number): Float64Array<ArrayBuffer> => {
  const b = new Float64Array(a.length * 2);
  b.set(a.subarray(0, n));
  return b;
};
const grown32 = (a: Int32Array, n: number): Int32Array<ArrayBuffer> => {
  const b = new Int32Array(a.length * 2);
  b.set(a.subarray(0, n));
  return b;
};

/** An ID as a number when its decimal text is exactly that number's (v20 IDs are), else NaN. */
export const idNumber = (id: string): number => {
  const x = Number(id);
  return id !== '' && String(x) === id ? x : NaN;
};

/**
 * The trades of a run as columns, one row per trade in the order they opened (report.html's trade
 * rows, written once into the page by `TradeView.packed`). A run of 4M M1 bars opens 78k trades: as
 * objects in a Map by ID (their strings, boxed numbers and the Map's entries) they were about 270
 * bytes each; here they are 90 (ten doubles, two name indexes and whether the trade closed), and
 * only the open trades are in the Map. Columns grow by doubling; their untouched half costs no
 * resident memory (a fresh ArrayBuffer's pages are zero pages until written).
 */
export class TradeColumns {
  n = 0;
  /** The trade's ID as a number (NaN when it is not a plain integer: its text is then in `#oddIds`). */
  id = new Float64Array(64);
  units = new Float64Array(64);
  openTime = new Float64Array(64);
  /** Epoch seconds of the closing fill (meaningful when `closed`). */
  closeTime = new Float64Array(64);
  openPrice = new Float64Array(64);
  closePrice = new Float64Array(64);
  pl = new Float64Array(64);
  financing = new Float64Array(64);
  spreadCost = new Float64Array(64);
  commission = new Float64Array(64);
  /** Indexes into `names`: the instrument, and the reason of the closing fill ('' while open). */
  inst = new Int32Array(64);
  reason = new Int32Array(64);
  /** 1 once closed in full. */
  closed = new Uint8Array(64);
  readonly names: string[] = [''];
  readonly #index = new Map<string, number>([['', 0]]);
  readonly #oddIds = new Map<number, string>();
  /** The open trades' rows by ID: a trade leaves it when it closes. */
  readonly open = new Map<string, number>();

  name(s: string): number {
    let i = this.#index.get(s);
    if (i === undefined) this.#index.set(s, (i = this.names.push(s) - 1));
    return i;
  }

  /** The trade's ID as its text. */
  idOf(row: number): string {
    const x = this.id[row]!;
    return Number.isNaN(x) ? this.#oddIds.get(row)! : String(x);
  }

  /**
   * Opens a trade (a row); a trade ID that is already open is opened again in its row (as a Map by
   * ID replaced it). Returns the row.
   */
  add(
    id: string,
    instrument: string,
    units: number,
    openTime: number,
    openPrice: number,
    spreadCost: number,
    commission: number,
  ): number {
    let r = this.open.get(id);
    if (r === undefined) {
      r = this.n++;
      if (r === this.id.length) this.#grow(r);
      this.open.set(id, r);
    }
    const x = idNumber(id);
    this.id[r] = x;
    if (Number.isNaN(x)) this.#oddIds.set(r, id);
    this.units[r] = units;
    this.openTime[r] = openTime;
    this.closeTime[r] = 0;
    this.openPrice[r] = openPrice;
    this.closePrice[r] = 0;
    this.pl[r] = 0;
    this.financing[r] = 0;
    this.spreadCost[r] = spreadCost;
    this.commission[r] = commission;
    this.inst[r] = this.name(instrument);
    this.reason[r] = 0;
    this.closed[r] = 0;
    return r;
  }

  /** Closes the trade of `row`: it leaves the open trades' Map. */
  close(row: number, time: number, price: number, reason: string): void {
    this.closeTime[row] = time;
    this.closePrice[row] = price;
    this.reason[row] = this.name(reason);
    if (this.closed[row] === 0) {
      this.closed[row] = 1;
      this.open.delete(this.idOf(row));
    }
  }

  #grow(n: number): void {
    this.id = grown64(this.id, n);
    this.units = grown64(this.units, n);
    this.openTime = grown64(this.openTime, n);
    this.closeTime = grown64(this.closeTime, n);
    this.openPrice = grown64(this.openPrice, n);
    this.closePrice = grown64(this.closePrice, n);
    this.pl = grown64(this.pl, n);
    this.financing = grown64(this.financing, n);
    this.spreadCost = grown64(this.spreadCost, n);
    this.commission = grown64(this.commission, n);
    this.inst = grown32(this.inst, n);
    this.reason = grown32(this.reason, n);
    const c = new Uint8Array(this.closed.length * 2);
    c.set(this.closed.subarray(0, n));
    this.closed = c;
  }

  get length(): number {
    return this.n;
  }

  /** Bytes the columns hold (their capacity): what bounds the fold's memory per trade. */
  bytes(): number {
    return this.id.length * (10 * 8 + 2 * 4 + 1);
  }

  /** The trade of `row` as a report row (tests, and the few trades of a live run's exposure). */
  row(r: number): TradeRow {
    const closed = this.closed[r] === 1;
    return {
      id: this.idOf(r),
      instrument: this.names[this.inst[r]!]!,
      units: this.units[r]!,
      openTime: this.openTime[r]!,
      closeTime: closed ? this.closeTime[r]! : null,
      openPrice: this.openPrice[r]!,
      closePrice: closed ? this.closePrice[r]! : null,
      pl: this.pl[r]!,
      financing: this.financing[r]!,
      spreadCost: this.spreadCost[r]!,
      commission: this.commission[r]!,
      closeReason: this.names[this.reason[r]!]!,
    };
  }

  /**
   * The rows in the report's order: the closed trades in closing order (by close time, then ID, as
   * trades.csv lists them), then the ones still open in the order they opened. The closed rows are
   * sorted from opening order with the comparison the object rows were sorted with, so an ID that
   * is no number (NaN: no order) leaves the same rows where they were.
   */
  reportOrder(): Int32Array {
    const closed: number[] = [];
    const open: number[] = [];
    for (let r = 0; r < this.n; r++) (this.closed[r] === 1 ? closed : open).push(r);
    // Number(id), as the rows were compared ("007" is 7 there, though not a plain integer here).
    const t = this.closeTime,
      id =
        this.#oddIds.size === 0
          ? this.id
          : Float64Array.from({ length: this.n }, (_, r) => Number(this.idOf(r)));
    closed.sort((a, b) => t[a]! - t[b]! || id[a]! - id[b]!);
    const out = new Int32Array(this.n);
    out.set(closed);
    out.set(open, closed.length);
    return out;
  }
}

/**
 * MAE, MFE and run-up % per trade ID, as trades.csv gives them: three columns and the row of each
 * ID (a Map by number for v20's integer IDs, by text for any other).
 */
export class TradeExcursions {
  #n = 0;
  #x = new Float64Array(3 * 64);
  readonly #byNumber = new Map<number, number>();
  readonly #byText = new Map<string, number>();

  set(id: string, mae: number, mfe: number, runUp: number): void {
    const k = idNumber(id);
    let r = Number.isNaN(k) ? this.#byText.get(id) : this.#byNumber.get(k);
    if (r === undefined) {
      r = this.#n++;
      if (3 * r === this.#x.length) this.#x = grown64(this.#x, 3 * r);
      if (Number.isNaN(k)) this.#byText.set(id, r);
      else this.#byNumber.set(k, r);
    }
    this.#x[3 * r] = mae;
    this.#x[3 * r + 1] = mfe;
    this.#x[3 * r + 2] = runUp;
  }

  get size(): number {
    return this.#n;
  }

  /** The row of a trade ID (its figures at 3 × row), -1 when trades.csv has none for it. */
  rowOf(id: string): number {
    const k = idNumber(id);
    return (Number.isNaN(k) ? this.#byText.get(id) : this.#byNumber.get(k)) ?? -1;
  }

  /** MAE, MFE and run-up % of a trade, undefined when trades.csv has none for it. */
  get(id: string): [number, number, number] | undefined {
    const r = this.rowOf(id);
    return r < 0 ? undefined : [this.#x[3 * r]!, this.#x[3 * r + 1]!, this.#x[3 * r + 2]!];
  }

  /** The figure `k` (0 MAE, 1 MFE, 2 run-up) of the row `r`. */
  at(r: number, k: number): number {
    return this.#x[3 * r + k]!;
  }
}

const r6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/**
 * The trades of a run's page: the fold's columns in the report's order, with their excursions.
 * `packed` writes them as pack.ts packRun writes rows (the same numbers, the same name indexes in
 * the same order), as typed columns; `rows` gives them as objects (tests).
 */
export class TradeView {
  constructor(
    readonly cols: TradeColumns,
    readonly order: Int32Array,
    readonly excursions: TradeExcursions | undefined,
  ) {}

  get length(): number {
    return this.order.length;
  }

  /** How many are closed (they come first). */
  closedCount(): number {
    let k = 0;
    for (let i = 0; i < this.order.length; i++) k += this.cols.closed[this.order[i]!]!;
    return k;
  }

  /** The closed trades, in closing order, as the figures read them (metrics.ts extendedMetrics). */
  closedTrades(): ClosedTrades {
    const c = this.cols,
      o = this.order;
    return {
      count: this.closedCount(),
      pl: (i) => c.pl[o[i]!]!,
      openTime: (i) => c.openTime[o[i]!]!,
      closeTime: (i) => c.closeTime[o[i]!]!,
      id: (i) => c.idOf(o[i]!),
      instrument: (i) => c.names[c.inst[o[i]!]!]!,
    };
  }

  /**
   * The trades as packRun writes them: IDs and open times as differences (`delta`), instruments and
   * reasons as indexes given by `name` (asked for as packRun asks of rows: every instrument in row
   * order, then every reason), nulls as NaN (JSON writes both as null). The columns are computed as
   * the page is written; only the IDs and open times (the differences' inputs) and the rows'
   * excursions are arrays here.
   */
  packed<D>(
    name: (s: string) => number,
    delta: (xs: ArrayLike<number>, n: number) => D,
  ): Record<string, D | PackedColumn> {
    const c = this.cols,
      o = this.order,
      n = o.length;
    const col = (f: (r: number) => number): PackedColumn => new PackedColumn(n, (i) => f(o[i]!));
    const page = new Int32Array(c.names.length).fill(-1);
    const named = (k: number): number => (page[k]! >= 0 ? page[k]! : (page[k] = name(c.names[k]!)));
    for (let i = 0; i < n; i++) named(c.inst[o[i]!]!);
    for (let i = 0; i < n; i++) named(c.reason[o[i]!]!);
    const ids = new Float64Array(n),
      opens = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const r = o[i]!;
      ids[i] = Number.isNaN(c.id[r]!) ? Number(c.idOf(r)) : c.id[r]!;
      opens[i] = c.openTime[r]!;
    }
    const x = this.excursions;
    const at = new Int32Array(x === undefined ? 0 : n);
    if (x !== undefined) for (let i = 0; i < n; i++) at[i] = x.rowOf(c.idOf(o[i]!));
    const ex = (k: number): PackedColumn =>
      new PackedColumn(n, (i) => (x === undefined || at[i]! < 0 ? NaN : r6(x.at(at[i]!, k))));
    return {
      id: delta(ids, n),
      inst: col((r) => page[c.inst[r]!]!),
      units: col((r) => c.units[r]!),
      open: delta(opens, n),
      // Seconds held (-1: still open).
      held: col((r) => (c.closed[r] === 1 ? r6(c.closeTime[r]! - c.openTime[r]!) : -1)),
      openPrice: col((r) => c.openPrice[r]!),
      closePrice: col((r) => (c.closed[r] === 1 ? c.closePrice[r]! : 0)),
      pl: col((r) => r6(c.pl[r]!)),
      financing: col((r) => r6(c.financing[r]!)),
      spread: col((r) => r6(c.spreadCost[r]!)),
      commission: col((r) => r6(c.commission[r]!)),
      reason: col((r) => page[c.reason[r]!]!),
      // MAE, MFE, run-up % (NaN, written null: not in this run folder's trades.csv).
      mae: ex(0),
      mfe: ex(1),
      runUp: ex(2),
    };
  }

  /** The trades as rows, in the report's order, with their excursions when trades.csv has them. */
  rows(): TradeRow[] {
    return Array.from(this.order, (r) => {
      const t = this.cols.row(r);
      if (this.excursions === undefined || this.excursions.size === 0) return t;
      const x = this.excursions.get(t.id);
      return { ...t, mae: x ? x[0] : null, mfe: x ? x[1] : null, runUp: x ? x[2] : null };
    });
  }
}
