import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { CHART_CANDLES_FILE, type ChartCandles } from './candle-recorder.ts';

/** A folder that cannot be reported on: the message names it and says what to give instead. */
export class ReportError extends Error {
  readonly code = 'REPORT' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReportError';
  }
}

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

/** What a run folder holds, read tolerantly: what is missing or damaged is said in `warnings`. */
export interface RunFolder {
  readonly dir: string;
  readonly name: string;
  readonly strategy: string;
  readonly params: Record<string, unknown>;
  /** summary.json's `summary` (the report.txt figures); empty when the file is missing. */
  readonly summary: Record<string, unknown>;
  readonly config: Record<string, unknown> | undefined;
  readonly transactions: TxRecord[];
  readonly equity: EquitySeries | undefined;
  readonly candles: ChartCandles | undefined;
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

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Reads transactions.jsonl line by line. A damaged line is skipped with a warning naming it; a last
 * line cut short (a run killed while writing) is reported as a truncated file.
 */
export function readTransactions(path: string, warnings: string[]): TxRecord[] {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const out: TxRecord[] = [];
  let bad = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let tx: unknown;
    try {
      tx = JSON.parse(line);
    } catch {
      tx = undefined;
    }
    if (!isObject(tx) || typeof tx.id !== 'string' || typeof tx.type !== 'string' || typeof tx.time !== 'string') {
      const last = i === lines.length - 1 || (i === lines.length - 2 && lines[lines.length - 1] === '');
      if (last && !text.endsWith('\n')) {
        warnings.push(`transactions.jsonl is truncated: its last line (line ${i + 1}) is cut short, so the figures drawn from transactions stop at transaction ${out[out.length - 1]?.id ?? '(none)'}; summary.json may count more`);
      } else if (bad++ < 3) {
        warnings.push(`transactions.jsonl line ${i + 1} is not a v20 transaction (needs id, type and time): skipped`);
      }
      continue;
    }
    out.push(tx as TxRecord);
  }
  if (bad > 3) warnings.push(`transactions.jsonl: ${bad - 3} more damaged lines skipped`);
  for (let i = 1; i < out.length; i++) {
    if (Number(out[i]!.id) !== Number(out[i - 1]!.id) + 1) {
      warnings.push(`transactions.jsonl jumps from transaction ${out[i - 1]!.id} to ${out[i]!.id}: transactions are missing`);
      break;
    }
  }
  return out;
}

/** Reads equity.csv by its header names (time, balance, nav); extra columns are ignored. */
export function readEquity(path: string, warnings: string[]): EquitySeries | undefined {
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
  const head = (lines[0] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const ti = head.indexOf('time'), bi = head.indexOf('balance'), ni = head.indexOf('nav');
  if (ti < 0 || (bi < 0 && ni < 0)) {
    warnings.push(`equity.csv has no time and balance/nav columns (header: ${lines[0] ?? 'empty'}): the equity curve is rebuilt from the transactions' balances`);
    return undefined;
  }
  const e: EquitySeries = { t: [], balance: [], nav: [] };
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i]!.split(',');
    const t = Date.parse(f[ti]!);
    const b = bi >= 0 ? Number(f[bi]) : Number(f[ni]);
    const n = ni >= 0 ? Number(f[ni]) : b;
    if (!Number.isFinite(t) || !Number.isFinite(b) || !Number.isFinite(n)) {
      warnings.push(`equity.csv line ${i + 1} does not parse (${lines[i]!.slice(0, 60)}): the curve stops before it`);
      break;
    }
    e.t.push(t / 1000);
    e.balance.push(b);
    e.nav.push(n);
  }
  return e;
}

/**
 * Reads a run folder. Throws ReportError when the folder is not a run folder at all; everything
 * else that is missing becomes a warning the report shows.
 */
export function readRunFolder(dirArg: string): RunFolder {
  const dir = resolve(dirArg);
  if (!existsSync(dir)) throw new ReportError(`${dir} does not exist: give a run folder (the "Run saved in …" folder a backtest prints, under runs/)`);
  if (!statSync(dir).isDirectory()) throw new ReportError(`${dir} is a file, not a run folder: give the folder that holds transactions.jsonl and summary.json`);
  const has = (f: string): boolean => existsSync(join(dir, f));
  if (!has('transactions.jsonl') && !has('summary.json')) {
    throw new ReportError(`${dir} is not an fxflow run folder: it has neither transactions.jsonl nor summary.json (a run folder is what \`fxflow backtest\` saves under runs/; \`ls runs/\` lists them)`);
  }
  const warnings: string[] = [];
  let strategy = basename(dir);
  let params: Record<string, unknown> = {};
  let summary: Record<string, unknown> = {};
  if (has('summary.json')) {
    const doc = readJson(join(dir, 'summary.json'), 'rerun the backtest to rewrite it');
    if (isObject(doc)) {
      if (typeof doc.strategy === 'string') strategy = doc.strategy;
      if (isObject(doc.params)) params = doc.params;
      if (isObject(doc.summary)) summary = doc.summary;
      else warnings.push('summary.json has no "summary" object: the report.txt figures are missing; the figures below come from the transactions');
    }
  } else {
    warnings.push('summary.json is missing (the run did not finish?): the figures below come from the transactions alone');
  }
  const config = has('config.json') ? readJson(join(dir, 'config.json'), 'rerun the backtest to rewrite it') : undefined;
  if (!has('config.json')) warnings.push('config.json is missing: the configuration cannot be shown');
  let transactions: TxRecord[] = [];
  if (has('transactions.jsonl')) transactions = readTransactions(join(dir, 'transactions.jsonl'), warnings);
  else warnings.push('transactions.jsonl is missing: no trades, fills or costs can be shown');
  const equity = has('equity.csv') ? readEquity(join(dir, 'equity.csv'), warnings) : undefined;
  if (!has('equity.csv')) warnings.push('equity.csv is missing: the equity curve is rebuilt from the transactions (balance only, no NAV)');
  let candles: ChartCandles | undefined;
  if (has(CHART_CANDLES_FILE)) {
    const doc = readJson(join(dir, CHART_CANDLES_FILE), 'rerun the backtest to rewrite it');
    if (isObject(doc) && doc.version === 1 && Array.isArray(doc.series)) candles = doc as unknown as ChartCandles;
    else warnings.push(`${CHART_CANDLES_FILE} has an unknown layout: the price charts show the fills only`);
  } else {
    warnings.push(`${CHART_CANDLES_FILE} is missing (a run folder from an fxflow before HTML reports): the price charts show the fill prices only; rerun the backtest for candles`);
  }
  return { dir, name: basename(dir), strategy, params, summary, config: isObject(config) ? config : undefined, transactions, equity, candles, warnings };
}
