import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ParamValue } from '../strategy/api.ts';
import type { TrialMetrics } from './metrics.ts';

/** One trial as recorded in the sweep folder. */
export interface TrialRecord {
  /** Position in the sweep's schedule (0-based). */
  readonly trial: number;
  /** hash(strategy file, params, data, config): the same trial anywhere has the same id. */
  readonly id: string;
  readonly status: 'ok' | 'failed';
  /** The swept params (the fixed ones are in sweep.json). */
  readonly params: Readonly<Record<string, ParamValue>>;
  readonly objective: number | null;
  readonly metrics?: TrialMetrics;
  readonly error?: string;
  /** The failure was not the trial's (its thread died, the queue lost it): a resumed sweep runs it again. */
  readonly infrastructure?: true;
}

/** The summary figures, in the order of trials.csv's columns (after trial, id, status, objective and the params). */
export const METRIC_COLUMNS = [
  'netPL',
  'returnPct',
  'cagrPct',
  'sharpe',
  'sortino',
  'calmar',
  'profitFactor',
  'maxDrawdown',
  'maxDrawdownPct',
  'trades',
  'openTrades',
  'wins',
  'losses',
  'winRate',
  'grossProfit',
  'grossLoss',
  'averageWin',
  'averageLoss',
  'largestWin',
  'largestLoss',
  'averageHoldingHours',
  'exposurePct',
  'initialBalance',
  'finalBalance',
  'finalNAV',
  'realizedPL',
  'unrealizedPL',
  'spreadCost',
  'financing',
  'commission',
  'ambiguousCandles',
  'ambiguousPL',
  'currency',
  'from',
  'to',
] as const satisfies readonly (keyof TrialMetrics)[];

/** What became of the strategy's orders, after the metric columns: orders placed, filled, rejected. */
export const ORDER_COLUMNS = ['orders', 'fills', 'rejects'] as const;

/** A CSV field: plain numbers as they are, empty for null, text quoted when it needs to be (RFC 4180). */
function field(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * The sweep folder: trials.jsonl (one record per trial, appended as each finishes: the resume log),
 * returns.jsonl (each trial's daily returns, for the overfitting figures), trials.csv (the same
 * records as a table: header row, plain numbers, RFC 3339 times, empty cells for undefined figures),
 * sweep.json (what the sweep is and, at the end, its summary).
 */
export class SweepStore {
  readonly jsonl: string;
  readonly returnsFile: string;
  readonly csv: string;
  readonly #paramNames: readonly string[];

  constructor(
    readonly dir: string,
    paramNames: readonly string[],
  ) {
    mkdirSync(dir, { recursive: true });
    this.jsonl = join(dir, 'trials.jsonl');
    this.returnsFile = join(dir, 'returns.jsonl');
    this.csv = join(dir, 'trials.csv');
    this.#paramNames = paramNames;
  }

  /** The records and returns already in the folder (a line cut short by a kill is ignored), by trial id. */
  load(): { records: Map<string, TrialRecord>; returns: Map<string, number[]> } {
    const records = new Map<string, TrialRecord>();
    const returns = new Map<string, number[]>();
    for (const line of readLines(this.returnsFile)) {
      const r = parseLine(line) as { id?: string; returns?: number[] } | undefined;
      if (r?.id && Array.isArray(r.returns)) returns.set(r.id, r.returns);
    }
    for (const line of readLines(this.jsonl)) {
      const r = parseLine(line) as TrialRecord | undefined;
      if (!r?.id || (r.status !== 'ok' && r.status !== 'failed')) continue;
      // A record is complete only with its returns (written first), or when it failed.
      if (r.status === 'ok' && !returns.has(r.id)) continue;
      records.set(r.id, r);
    }
    return { records, returns };
  }

  header(): string {
    return [
      'trial',
      'id',
      'status',
      'objective',
      ...this.#paramNames,
      ...METRIC_COLUMNS,
      ...ORDER_COLUMNS,
      'error',
    ].join(',');
  }

  row(r: TrialRecord): string {
    const m = r.metrics as Record<string, unknown> | undefined;
    const orders = r.metrics?.orders;
    // The strategy's own orders (its trades' dependent orders are counted apart in the run's report).
    const counts = orders
      ? [orders.placed, orders.filled, orders.rejected]
      : [undefined, undefined, undefined];
    return [
      r.trial,
      r.id,
      r.status,
      r.objective,
      ...this.#paramNames.map((p) => r.params[p]),
      ...METRIC_COLUMNS.map((c) => m?.[c]),
      ...counts,
      r.error,
    ]
      .map(field)
      .join(',');
  }

  /** Rewrites trials.csv from records (at the start of a resumed sweep, and at the end in trial order). */
  writeCsv(records: readonly TrialRecord[]): void {
    const tmp = `${this.csv}.tmp`;
    writeFileSync(tmp, `${[this.header(), ...records.map((r) => this.row(r))].join('\n')}\n`);
    renameSync(tmp, this.csv);
  }

  /** Rewrites trials.jsonl and returns.jsonl in trial order (at the end; atomic renames). */
  rewriteJsonl(records: readonly TrialRecord[], returns: ReadonlyMap<string, readonly number[]>): void {
    const rt = `${this.returnsFile}.tmp`;
    writeFileSync(
      rt,
      records
        .filter((r) => returns.has(r.id))
        .map((r) => `${JSON.stringify({ id: r.id, returns: returns.get(r.id) })}\n`)
        .join(''),
    );
    renameSync(rt, this.returnsFile);
    const jt = `${this.jsonl}.tmp`;
    writeFileSync(jt, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    renameSync(jt, this.jsonl);
  }

  /** Appends one finished trial: its returns first, then its record (so a record implies its returns), then the CSV row. */
  append(r: TrialRecord, returns: readonly number[] | undefined): void {
    if (returns) appendFileSync(this.returnsFile, `${JSON.stringify({ id: r.id, returns })}\n`);
    appendFileSync(this.jsonl, `${JSON.stringify(r)}\n`);
    appendFileSync(this.csv, `${this.row(r)}\n`);
  }
}

function readLines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
