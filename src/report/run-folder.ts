import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { CHART_CANDLES_FILE, type ChartCandles } from './candle-recorder.ts';
import { forEachLine } from './file-lines.ts';
import { PLOTS_FILE, readPlots, type PlotSeries } from './plots.ts';
import { TradeExcursions } from './trade-columns.ts';
import { TransactionFold } from './transaction-fold.ts';
import type { EquitySeries, TxRecord } from './rows.ts';

export type { EquitySeries, TxRecord } from './rows.ts';

/** A folder that cannot be reported on: the message names it and says what to give instead. */
export class ReportError extends Error {
  readonly code = 'REPORT' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReportError';
  }
}

/** What a run folder holds, read tolerantly: what is missing or damaged is said in `warnings`. */
export interface RunFolder {
  readonly dir: string;
  readonly name: string;
  readonly strategy: string;
  readonly params: Record<string, unknown>;
  /** summary.json's `summary` (the report.txt figures); empty when the file is missing. */
  readonly summary: Record<string, unknown>;
  readonly config: Record<string, unknown> | undefined;
  /** The transactions the report reads (fills, protective orders, financing, transfers, balances), folded as they were read. */
  readonly folded: ReturnType<TransactionFold['result']>;
  /** Epoch seconds of the first and last transaction (NaN when none). */
  readonly firstTxTime: number;
  readonly lastTxTime: number;
  /** How many transactions transactions.jsonl holds in all. */
  readonly transactionCount: number;
  readonly equity: EquitySeries | undefined;
  readonly candles: ChartCandles | undefined;
  /** MAE, MFE and run-up % per trade ID (trades.csv; empty when it has no such columns). */
  readonly excursions: TradeExcursions;
  /** The strategy's `ctx.plot` series (plots.csv, thinned to what a page draws; empty without the file). */
  readonly plots: PlotSeries[];
  /** A portfolio's strategies.json (app/portfolio-run.ts): each strategy's equity curve and their daily returns' correlation. */
  readonly strategies?: StrategyCurves;
  /** summary.json's `live` (a run folder of `fxflow run`): the environment, broker and sessions; undefined for a backtest. */
  readonly live: { readonly env: string; readonly broker: string; readonly sessions: number } | undefined;
  readonly warnings: string[];
}

function readJson(path: string, what: string): unknown {
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ReportError(`${path} is not valid JSON (${(e as Error).message}): ${what}`, { cause: e });
  }
}

/** The transaction types the report's fold reads (run-model.ts foldTransactions); the rest are counted, not kept. */
export const REPORT_TYPES: ReadonlySet<string> = new Set([
  'ORDER_FILL',
  'STOP_LOSS_ORDER',
  'GUARANTEED_STOP_LOSS_ORDER',
  'TAKE_PROFIT_ORDER',
  'TRAILING_STOP_LOSS_ORDER',
  'DAILY_FINANCING',
  'TRANSFER_FUNDS',
]);

const PROTECTIVE = new Set([
  'STOP_LOSS_ORDER',
  'GUARANTEED_STOP_LOSS_ORDER',
  'TAKE_PROFIT_ORDER',
  'TRAILING_STOP_LOSS_ORDER',
]);

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** What the transactions of a run folder hold: the kept ones, and how many were read in all. */
export interface TransactionsRead {
  readonly kept: TxRecord[];
  readonly count: number;
}

/**
 * Reads transactions.jsonl line by line, keeping those `keep` accepts (all by default). A damaged
 * line is skipped with a warning naming it; a last line cut short (a run killed while writing) is
 * reported as a truncated file; a gap in the IDs is said once.
 */
export function readTransactionsFrom(
  path: string,
  warnings: string[],
  keep: (type: string) => boolean = () => true,
  sink?: (tx: TxRecord) => void,
): TransactionsRead & { first: string | undefined; last: string | undefined } {
  const kept: TxRecord[] = [];
  let bad = 0;
  let count = 0;
  let lastId: string | undefined;
  let gap = false;
  let first: string | undefined, last: string | undefined;
  forEachLine(path, (line, n, cutShort) => {
    if (line.trim() === '') return;
    let tx: unknown;
    try {
      tx = JSON.parse(line);
    } catch {
      tx = undefined;
    }
    if (
      !isObject(tx) ||
      typeof tx.id !== 'string' ||
      typeof tx.type !== 'string' ||
      typeof tx.time !== 'string'
    ) {
      if (cutShort) {
        warnings.push(
          `transactions.jsonl is truncated: its last line (line ${n}) is cut short, so the figures drawn from transactions stop at transaction ${lastId ?? '(none)'}; summary.json may count more`,
        );
      } else if (bad++ < 3) {
        warnings.push(
          `transactions.jsonl line ${n} is not a v20 transaction (needs id, type and time): skipped`,
        );
      }
      return;
    }
    if (!gap && lastId !== undefined && Number(tx.id) !== Number(lastId) + 1) {
      gap = true;
      warnings.push(
        `transactions.jsonl jumps from transaction ${lastId} to ${tx.id}: transactions are missing`,
      );
    }
    lastId = tx.id;
    count++;
    first ??= tx.time;
    last = tx.time;
    if (!keep(tx.type)) return;
    if (sink) return sink(tx as TxRecord);
    // A protective order is read for its level only (run-model.ts): keep those fields, not the
    // whole transaction (a run with exits on every entry has three of them per trade).
    if (PROTECTIVE.has(tx.type))
      kept.push({
        id: tx.id,
        type: tx.type,
        time: tx.time,
        tradeID: tx.tradeID,
        price: tx.price,
        distance: tx.distance,
      } as TxRecord);
    else kept.push(tx as TxRecord);
  });
  if (bad > 3) warnings.push(`transactions.jsonl: ${bad - 3} more damaged lines skipped`);
  return { kept, count, first, last };
}

/** Every transaction of transactions.jsonl (see readTransactionsFrom). */
export function readTransactions(path: string, warnings: string[]): TxRecord[] {
  return readTransactionsFrom(path, warnings).kept;
}

/** MAE, MFE and run-up % per trade ID from trades.csv, by its header names (columns absent: none). */
export function readTradeExcursions(path: string): TradeExcursions {
  const out = new TradeExcursions();
  let cols: number[] | undefined;
  forEachLine(path, (line, n) => {
    const f = line.split(',');
    if (n === 1) {
      const at = (k: string): number => f.indexOf(k);
      cols = [at('id'), at('mae'), at('mfe'), at('runUpPct')];
      if (cols.some((c) => c < 0)) cols = undefined;
      return;
    }
    if (!cols || f.length <= cols[3]!) return;
    const mae = Number(f[cols[1]!]),
      mfe = Number(f[cols[2]!]),
      runUp = Number(f[cols[3]!]);
    if (Number.isFinite(mae) && Number.isFinite(mfe) && Number.isFinite(runUp))
      out.set(f[cols[0]!]!, mae, mfe, runUp);
  });
  return out;
}

/** Reads equity.csv by its header names (time, balance, nav); extra columns are ignored. */
export function readEquity(path: string, warnings: string[]): EquitySeries | undefined {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const head = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const ti = head.indexOf('time'),
    bi = head.indexOf('balance'),
    ni = head.indexOf('nav');
  if (ti < 0 || (bi < 0 && ni < 0)) {
    warnings.push(
      `equity.csv has no time and balance/nav columns (header: ${lines[0] ?? 'empty'}): the equity curve is rebuilt from the transactions' balances`,
    );
    return undefined;
  }
  const e: EquitySeries = { t: [], balance: [], nav: [] };
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i]!.split(',');
    const t = Date.parse(f[ti]!);
    const b = bi >= 0 ? Number(f[bi]) : Number(f[ni]);
    const n = ni >= 0 ? Number(f[ni]) : b;
    if (!Number.isFinite(t) || !Number.isFinite(b) || !Number.isFinite(n)) {
      warnings.push(
        `equity.csv line ${i + 1} does not parse (${lines[i]!.slice(0, 60)}): the curve stops before it`,
      );
      break;
    }
    e.t.push(t / 1000);
    e.balance.push(b);
    e.nav.push(n);
  }
  return e;
}

/**
 * The transactions of a run as the run itself folded them while writing transactions.jsonl (see
 * RunTransactionFold): the report then need not read the file back.
 */
export interface FoldedTransactions {
  readonly fold: TransactionFold;
  readonly count: number;
  readonly first: string | undefined;
  readonly last: string | undefined;
}

/**
 * Folds a run's transactions as they are written, the same ones readRunFolder would keep reading
 * transactions.jsonl back: a backtest hands it to writeRunReport, which then parses no JSON.
 */
export class RunTransactionFold implements FoldedTransactions {
  readonly fold = new TransactionFold();
  count = 0;
  first: string | undefined;
  last: string | undefined;

  add(tx: TxRecord): void {
    this.count++;
    this.first ??= tx.time;
    this.last = tx.time;
    if (REPORT_TYPES.has(tx.type)) this.fold.add(tx);
  }
}

/**
 * Reads a run folder. Throws ReportError when the folder is not a run folder at all; everything
 * else that is missing becomes a warning the report shows. `transactions`: what the run folded of
 * its transactions.jsonl as it wrote it (the file is then not read).
 */
export function readRunFolder(dirArg: string, transactions?: FoldedTransactions): RunFolder {
  const dir = resolve(dirArg);
  if (!existsSync(dir))
    throw new ReportError(
      `${dir} does not exist: give a run folder (the "Run saved in …" folder a backtest prints, under runs/)`,
    );
  if (!statSync(dir).isDirectory())
    throw new ReportError(
      `${dir} is a file, not a run folder: give the folder that holds transactions.jsonl and summary.json`,
    );
  const has = (f: string): boolean => existsSync(join(dir, f));
  if (!has('transactions.jsonl') && !has('summary.json')) {
    throw new ReportError(
      `${dir} is not an fxflow run folder: it has neither transactions.jsonl nor summary.json (a run folder is what \`fxflow backtest\` saves under runs/; \`ls runs/\` lists them)`,
    );
  }
  const warnings: string[] = [];
  let strategy = basename(dir);
  let params: Record<string, unknown> = {};
  let summary: Record<string, unknown> = {};
  let live: RunFolder['live'];
  if (has('summary.json')) {
    const doc = readJson(join(dir, 'summary.json'), 'rerun the backtest to rewrite it');
    if (isObject(doc)) {
      if (typeof doc.strategy === 'string') strategy = doc.strategy;
      if (isObject(doc.params)) params = doc.params;
      // Only what the page shows of a live run (never its account ID).
      if (isObject(doc.live))
        live = {
          env: String(doc.live.env ?? '?'),
          broker: String(doc.live.broker ?? '?'),
          sessions: Number(doc.live.sessions ?? 1),
        };
      if (isObject(doc.summary)) summary = doc.summary;
      else
        warnings.push(
          'summary.json has no "summary" object: the report.txt figures are missing; the figures below come from the transactions',
        );
    }
  } else {
    warnings.push(
      'summary.json is missing (the run did not finish?): the figures below come from the transactions alone',
    );
  }
  const config = has('config.json')
    ? readJson(join(dir, 'config.json'), 'rerun the backtest to rewrite it')
    : undefined;
  if (!has('config.json')) warnings.push('config.json is missing: the configuration cannot be shown');
  // Folded line by line: the rows the report needs, never the transactions (49 MB for a year of M1).
  let fold = new TransactionFold();
  let transactionCount = 0;
  let firstTxTime = NaN,
    lastTxTime = NaN;
  if (transactions) {
    fold = transactions.fold;
    transactionCount = transactions.count;
    if (transactions.first !== undefined) firstTxTime = Date.parse(transactions.first) / 1000;
    if (transactions.last !== undefined) lastTxTime = Date.parse(transactions.last) / 1000;
  } else if (has('transactions.jsonl')) {
    const read = readTransactionsFrom(
      join(dir, 'transactions.jsonl'),
      warnings,
      (type) => REPORT_TYPES.has(type),
      (tx) => fold.add(tx),
    );
    transactionCount = read.count;
    if (read.first !== undefined) firstTxTime = Date.parse(read.first) / 1000;
    if (read.last !== undefined) lastTxTime = Date.parse(read.last) / 1000;
  } else warnings.push('transactions.jsonl is missing: no trades, fills or costs can be shown');
  const equity = has('equity.csv') ? readEquity(join(dir, 'equity.csv'), warnings) : undefined;
  if (!has('equity.csv'))
    warnings.push(
      'equity.csv is missing: the equity curve is rebuilt from the transactions (balance only, no NAV)',
    );
  let candles: ChartCandles | undefined;
  if (has(CHART_CANDLES_FILE)) {
    const doc = readJson(join(dir, CHART_CANDLES_FILE), 'rerun the backtest to rewrite it');
    if (isObject(doc) && doc.version === 1 && Array.isArray(doc.series))
      candles = doc as unknown as ChartCandles;
    else warnings.push(`${CHART_CANDLES_FILE} has an unknown layout: the price charts show the fills only`);
  } else if (live === undefined) {
    // A live run records no chart candles (its prices are in the recording): not a defect of the folder.
    warnings.push(
      `${CHART_CANDLES_FILE} is missing (a run folder from an fxflow before HTML reports): the price charts show the fill prices only; rerun the backtest for candles`,
    );
  }
  const excursions = has('trades.csv') ? readTradeExcursions(join(dir, 'trades.csv')) : new TradeExcursions();
  const plots = has(PLOTS_FILE) ? readPlots(join(dir, PLOTS_FILE), warnings) : [];
  const strategies = has('strategies.json')
    ? readStrategies(join(dir, 'strategies.json'), warnings)
    : undefined;
  return {
    dir,
    name: basename(dir),
    strategy,
    params,
    summary,
    config: isObject(config) ? config : undefined,
    folded: fold.result(),
    firstTxTime,
    lastTxTime,
    transactionCount,
    equity,
    candles,
    excursions,
    plots,
    ...(strategies ? { strategies } : {}),
    live,
    warnings,
  };
}

/** A portfolio's per-strategy curves (strategies.json): [time ms, balance, NAV] points, and the correlation matrix. */
export interface StrategyCurves {
  readonly strategies: readonly { readonly name: string; readonly equity: readonly (readonly number[])[] }[];
  readonly correlation: {
    readonly names: readonly string[];
    readonly dailyReturns: readonly (readonly (number | null)[])[];
  };
}

function readStrategies(path: string, warnings: string[]): StrategyCurves | undefined {
  const doc = readJson(path, 'rerun the backtest to rewrite it');
  if (isObject(doc) && Array.isArray(doc.strategies) && isObject(doc.correlation))
    return doc as unknown as StrategyCurves;
  warnings.push('strategies.json has an unknown layout: the per-strategy curves are not shown');
  return undefined;
}
