// The row shapes a run's report is folded into and read from: shared by the fold, the folder reader,
// the model and the metrics (one place, so none of them imports another for a type).

/** A v20 transaction as read back from transactions.jsonl (only the fields reports use are named). */
export interface TxRecord {
  readonly id: string;
  readonly type: string;
  readonly time: string;
  readonly [field: string]: unknown;
}

/** The equity curve (equity.csv): epoch seconds, balance and NAV in the account currency. */
export interface EquitySeries {
  readonly t: number[];
  readonly balance: number[];
  readonly nav: number[];
}

/** A fill as the charts mark it. */
export interface FillRow {
  readonly id: string;
  readonly time: number;
  readonly instrument: string;
  readonly units: number;
  readonly price: number;
  readonly reason: string;
  /** The trade it opened, else the first it closed or reduced. */
  readonly tradeID: string;
}

/** Protective levels of one trade over time (epoch seconds), from its dependent orders. */
export interface TradeLevels {
  readonly sl: [number, number][];
  readonly tp: [number, number][];
  /** Trailing stop: [time, distance]; its level ratchets on every price, which transactions do not record. */
  readonly ts: [number, number][];
}
