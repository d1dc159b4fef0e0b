import type { EquitySeries, FillRow, TradeLevels, TxRecord } from './rows.ts';
import { idNumber, PackedColumn, TradeColumns } from './trade-columns.ts';

const sec = (iso: string): number => Date.parse(iso) / 1000;
const num = (x: unknown): number => (typeof x === 'string' || typeof x === 'number' ? Number(x) : 0);

/** Fill rows as packRun writes them (see FillColumns.packed). */
export function packFillRows<D>(
  f: readonly FillRow[],
  name: (s: string) => number,
  delta: (xs: ArrayLike<number>, n: number) => D,
): Record<string, D | PackedColumn> {
  const inst = f.map((x) => name(x.instrument));
  const reason = f.map((x) => name(x.reason));
  const col = (g: (x: FillRow) => number): PackedColumn => new PackedColumn(f.length, (i) => g(f[i]!));
  return {
    id: delta(
      f.map((x) => Number(x.id)),
      f.length,
    ),
    time: delta(
      f.map((x) => x.time),
      f.length,
    ),
    inst: PackedColumn.of(inst),
    units: col((x) => x.units),
    price: col((x) => x.price),
    reason: PackedColumn.of(reason),
    // The trade's ID less the fill's (small numbers; 0 for the trade a fill opens, whose ID is the
    // fill's own); NaN (null in the page) when the fill names no trade.
    trade: col((x) => (x.tradeID === '' ? NaN : Number(x.tradeID) - Number(x.id))),
  };
}

/** A column of numbers that grows as it is pushed to (doubling a Float64Array). */
class NumberColumn {
  a = new Float64Array(256);
  n = 0;

  push(x: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = x;
  }
}

/**
 * The fills of a run as columns of numbers (a name table for instruments and reasons), turned into
 * FillRow objects only when the report asks (`rows`): a run of 4M M1 bars folds 156k fills while it
 * runs, and as objects with their strings and boxed numbers they were about 100 bytes each. Rows that
 * do not fit (an ID that is not a plain integer) switch the whole list to objects: never a different row.
 */
export class FillColumns {
  readonly #cols = Array.from({ length: 7 }, () => new NumberColumn());
  readonly #names: string[] = [];
  readonly #index = new Map<string, number>();
  #rows: FillRow[] | undefined;

  #name(s: string): number {
    let i = this.#index.get(s);
    if (i === undefined) this.#index.set(s, (i = this.#names.push(s) - 1));
    return i;
  }

  push(f: FillRow): void {
    if (this.#rows) {
      this.#rows.push(f);
      return;
    }
    const id = idNumber(f.id);
    const trade = f.tradeID === '' ? -1 : idNumber(f.tradeID);
    if (Number.isNaN(id) || Number.isNaN(trade) || (trade < 0 && f.tradeID !== '')) {
      this.#rows = this.rows();
      this.#rows.push(f);
      return;
    }
    const c = this.#cols;
    c[0]!.push(id);
    c[1]!.push(f.time);
    c[2]!.push(this.#name(f.instrument));
    c[3]!.push(f.units);
    c[4]!.push(f.price);
    c[5]!.push(this.#name(f.reason));
    c[6]!.push(trade);
  }

  get length(): number {
    return this.#rows ? this.#rows.length : this.#cols[0]!.n;
  }

  /** Bytes the columns hold (Infinity once the list is objects): what bounds the fold's memory per fill. */
  bytes(): number {
    return this.#rows ? Infinity : this.#cols.reduce((n, c) => n + c.a.byteLength, 0);
  }

  /**
   * The fills as pack.ts packRun writes them into the page: IDs and times as differences (`delta`),
   * instruments and reasons as indexes given by `name` (asked for every instrument in order, then
   * every reason, as packRun asks of rows), the trade as its ID less the fill's (null: none).
   */
  packed<D>(
    name: (s: string) => number,
    delta: (xs: ArrayLike<number>, n: number) => D,
  ): Record<string, D | PackedColumn> {
    if (this.#rows) return packFillRows(this.#rows, name, delta);
    const [id, time, inst, units, price, reason, trade] = this.#cols.map((c) => c.a) as [
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
      Float64Array,
    ];
    const n = this.#cols[0]!.n;
    // The names first, as packRun asks of rows (every instrument in order, then every reason):
    // the columns themselves are computed as the page is written.
    const page = new Int32Array(this.#names.length).fill(-1);
    const named = (k: number): number => (page[k]! >= 0 ? page[k]! : (page[k] = name(this.#names[k]!)));
    for (let i = 0; i < n; i++) named(inst[i]!);
    for (let i = 0; i < n; i++) named(reason[i]!);
    return {
      id: delta(id, n),
      time: delta(time, n),
      inst: new PackedColumn(n, (i) => page[inst[i]!]!),
      units: PackedColumn.of(units, n),
      price: PackedColumn.of(price, n),
      reason: new PackedColumn(n, (i) => page[reason[i]!]!),
      trade: new PackedColumn(n, (i) => (trade[i]! < 0 ? NaN : trade[i]! - id[i]!)),
    };
  }

  /** The fills as rows, in the order they were pushed. */
  rows(): FillRow[] {
    if (this.#rows) return this.#rows;
    const [id, time, inst, units, price, reason, trade] = this.#cols.map((c) => c.a);
    const out = new Array<FillRow>(this.#cols[0]!.n);
    for (let i = 0; i < out.length; i++) {
      out[i] = {
        id: String(id![i]),
        time: time![i]!,
        instrument: this.#names[inst![i]!]!,
        units: units![i]!,
        price: price![i]!,
        reason: this.#names[reason![i]!]!,
        tradeID: trade![i]! < 0 ? '' : String(trade![i]),
      };
    }
    return out;
  }
}

/**
 * Folds transactions, one at a time as they are read, into trades, fills, protective levels and the
 * balance curve: the report keeps these rows, never the transactions themselves.
 */
export class TransactionFold {
  readonly #trades = new TradeColumns();
  readonly #fills = new FillColumns();
  readonly levels: Record<string, TradeLevels> = {};
  readonly balance: EquitySeries = { t: [], balance: [], nav: [] };
  deposit = 0;

  #lv(id: string): TradeLevels {
    return (this.levels[id] ??= { sl: [], tp: [], ts: [] });
  }

  add(tx: TxRecord): void {
    const t = sec(tx.time);
    switch (tx.type) {
      case 'ORDER_FILL': {
        const opened = tx.tradeOpened as
          { tradeID: string; units: string; price?: string; halfSpreadCost?: string } | undefined;
        const closed =
          (tx.tradesClosed as
            | { tradeID: string; realizedPL?: string; financing?: string; halfSpreadCost?: string }[]
            | undefined) ?? [];
        const reduced = tx.tradeReduced as
          { tradeID: string; realizedPL?: string; financing?: string; halfSpreadCost?: string } | undefined;
        const instrument = String(tx.instrument ?? '');
        const price = num(tx.price);
        const legs = closed.length + (reduced ? 1 : 0) + (opened ? 1 : 0);
        const commission = num(tx.commission);
        // Only open trades are found: a trade closed earlier is no longer in the fold's Map (v20
        // closes a trade once; a transaction naming a closed trade again changes nothing here).
        const tr = this.#trades;
        for (let k = 0; k <= closed.length; k++) {
          const c = k < closed.length ? closed[k]! : reduced;
          if (c === undefined) break;
          const r = tr.open.get(c.tradeID);
          if (r === undefined) continue;
          tr.pl[r] = tr.pl[r]! + num(c.realizedPL);
          tr.financing[r] = tr.financing[r]! + num(c.financing);
          tr.spreadCost[r] = tr.spreadCost[r]! + num(c.halfSpreadCost);
          tr.commission[r] = tr.commission[r]! + (legs > 0 ? commission / legs : 0);
          if (c !== reduced) tr.close(r, t, price, String(tx.reason ?? ''));
        }
        if (opened)
          tr.add(
            opened.tradeID,
            instrument,
            num(opened.units),
            t,
            opened.price !== undefined ? num(opened.price) : price,
            num(opened.halfSpreadCost),
            legs > 0 ? commission / legs : 0,
          );
        this.#fills.push({
          id: tx.id,
          time: t,
          instrument,
          units: num(tx.units),
          price,
          reason: String(tx.reason ?? ''),
          tradeID: opened?.tradeID ?? closed[0]?.tradeID ?? reduced?.tradeID ?? '',
        });
        break;
      }
      case 'STOP_LOSS_ORDER':
      case 'GUARANTEED_STOP_LOSS_ORDER':
        if (typeof tx.tradeID === 'string' && tx.price !== undefined)
          this.#lv(tx.tradeID).sl.push([t, num(tx.price)]);
        break;
      case 'TAKE_PROFIT_ORDER':
        if (typeof tx.tradeID === 'string' && tx.price !== undefined)
          this.#lv(tx.tradeID).tp.push([t, num(tx.price)]);
        break;
      case 'TRAILING_STOP_LOSS_ORDER':
        if (typeof tx.tradeID === 'string' && tx.distance !== undefined)
          this.#lv(tx.tradeID).ts.push([t, num(tx.distance)]);
        break;
      case 'DAILY_FINANCING': {
        const pf =
          (tx.positionFinancings as
            { openTradeFinancings?: { tradeID: string; financing: string }[] }[] | undefined) ?? [];
        for (const p of pf)
          for (const f of p.openTradeFinancings ?? []) {
            const r = this.#trades.open.get(f.tradeID);
            if (r !== undefined) this.#trades.financing[r] = this.#trades.financing[r]! + num(f.financing);
          }
        break;
      }
      case 'TRANSFER_FUNDS':
        this.deposit += num(tx.amount);
        break;
    }
    if (tx.accountBalance !== undefined) {
      const b = num(tx.accountBalance);
      if (this.balance.t.length > 0 && this.balance.t[this.balance.t.length - 1] === t) {
        this.balance.balance[this.balance.balance.length - 1] = b;
        this.balance.nav[this.balance.nav.length - 1] = b;
      } else {
        this.balance.t.push(t);
        this.balance.balance.push(b);
        this.balance.nav.push(b);
      }
    }
  }

  result(): {
    trades: TradeColumns;
    fills: FillColumns;
    levels: Record<string, TradeLevels>;
    balance: EquitySeries;
    deposit: number;
  } {
    return {
      trades: this.#trades,
      fills: this.#fills,
      levels: this.levels,
      balance: this.balance,
      deposit: this.deposit,
    };
  }
}
