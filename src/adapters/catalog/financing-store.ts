import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { weekdayIndex, type FinancingRates, type FinancingTerms } from '../../domain/instrument.ts';
import { newYorkDate, rolloverOfDay, tradingDayOf } from '../../domain/new-york.ts';
import type { UnixMs } from '../../domain/time.ts';
import { DataError } from './errors.ts';

/**
 * Recorded financing and margin rates: `<catalog>/financing/<YYYY>.jsonl`, one JSON object per
 * line and per (trading day, instrument), appended by `fxflow record --financing` once per v20
 * trading day. OANDA publishes only the current rates (GET /v3/accounts/{id}/instruments); this is
 * the history a backtest's financing needs (`--financing-history`).
 *
 * A line: `day` (the trading day the rates apply to, named by the date of the 17:00 New York
 * rollover that ends it), `instrument`, `knownAt` (UNIX ms when they were read), `longRate`,
 * `shortRate`, `financingDaysOfWeek` (as OANDA sends them), `marginRate`.
 */
export const financingDir = (root: string): string => join(root, 'financing');
const YEAR_FILE = /^(\d{4})\.jsonl$/;
const FIELDS = [
  'day',
  'instrument',
  'knownAt',
  'longRate',
  'shortRate',
  'financingDaysOfWeek',
  'marginRate',
] as const;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export interface FinancingRecord {
  readonly day: string;
  readonly instrument: string;
  readonly knownAt: UnixMs;
  readonly longRate: string;
  readonly shortRate: string;
  readonly financingDaysOfWeek: readonly { readonly dayOfWeek: string; readonly daysCharged: number }[];
  readonly marginRate: string;
}

/** The year files, oldest first. */
export function financingFiles(root: string): { year: string; file: string }[] {
  const dir = financingDir(root);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => YEAR_FILE.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ year: m[1]!, file: join(dir, m[0]) }))
    .sort((a, b) => (a.year < b.year ? -1 : 1));
}

/** Parses and checks one recorded line; errors name the file and line and say how to fix it. */
export function parseFinancingLine(text: string, file: string, line: number): FinancingRecord {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new DataError(
      file,
      line,
      '',
      `not a JSON financing record (${text.length > 60 ? `${text.slice(0, 60)}…` : text}); the line is damaged: remove it (fxflow record reads the day's rates again while the day lasts)`,
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new DataError(file, line, '', 'a financing record must be a JSON object');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!(FIELDS as readonly string[]).includes(k))
      throw new DataError(
        file,
        line,
        k,
        `unknown field in a financing record (known: ${FIELDS.join(', ')}); was it written by a newer fxflow?`,
      );
  for (const k of FIELDS)
    if (o[k] === undefined) throw new DataError(file, line, k, 'missing from a financing record');
  if (typeof o.day !== 'string' || !DAY.test(o.day) || Number.isNaN(rolloverOfDay(o.day)))
    throw new DataError(
      file,
      line,
      'day',
      `must be a trading day like "2024-01-02" (got ${JSON.stringify(o.day)})`,
    );
  if (typeof o.instrument !== 'string' || !/^[A-Z0-9]+_[A-Z0-9]+$/.test(o.instrument))
    throw new DataError(
      file,
      line,
      'instrument',
      `must be an instrument name like "EUR_USD" (got ${JSON.stringify(o.instrument)})`,
    );
  if (typeof o.knownAt !== 'number' || !Number.isFinite(o.knownAt))
    throw new DataError(file, line, 'knownAt', 'must be UNIX milliseconds');
  for (const k of ['longRate', 'shortRate', 'marginRate']) {
    if (typeof o[k] !== 'string' || !DECIMAL.test(o[k] as string))
      throw new DataError(
        file,
        line,
        k,
        `must be a decimal string like "-0.0412" (got ${JSON.stringify(o[k])})`,
      );
  }
  const days = o.financingDaysOfWeek;
  if (
    !Array.isArray(days) ||
    !days.every(
      (d) =>
        typeof d === 'object' &&
        d !== null &&
        weekdayIndex((d as { dayOfWeek: string }).dayOfWeek) >= 0 &&
        Number.isInteger((d as { daysCharged: number }).daysCharged) &&
        (d as { daysCharged: number }).daysCharged >= 0,
    )
  ) {
    throw new DataError(
      file,
      line,
      'financingDaysOfWeek',
      'must be a list of {"dayOfWeek": "MONDAY", "daysCharged": 1} (days SUNDAY to SATURDAY, whole days from 0)',
    );
  }
  return o as unknown as FinancingRecord;
}

/** Every recorded line, in file order, each checked. A line cut short at the very end of the newest file (a recorder stopped mid-write) is skipped. */
export function readFinancing(root: string): FinancingRecord[] {
  const out: FinancingRecord[] = [];
  const files = financingFiles(root);
  const seen = new Map<string, string>();
  for (const [k, { file }] of files.entries()) {
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    const cut = lines.pop()!; // '' when the file ends with a line end
    if (cut !== '' && k < files.length - 1)
      throw new DataError(
        file,
        lines.length + 1,
        '',
        'the last line has no line end in a year file that is not the newest: the file is damaged; remove the line',
      );
    for (const [i, l] of lines.entries()) {
      if (l.trim() === '') continue;
      const r = parseFinancingLine(l, file, i + 1);
      const key = `${r.day}|${r.instrument}`;
      const where = seen.get(key);
      if (where !== undefined)
        throw new DataError(
          file,
          i + 1,
          '',
          `${r.instrument} on ${r.day} is recorded twice (first at ${where}): remove one of the lines`,
        );
      seen.set(key, `${file}:${i + 1}`);
      out.push(r);
    }
  }
  return out;
}

/** Cuts a last line without its line end (a write cut short); returns the bytes cut. */
function repairTail(file: string): number {
  const fd = openSync(file, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    // Financing lines are short: the last newline is within the last 64 KiB, or there is none.
    const n = Math.min(size, 1 << 16);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    if (buf[n - 1] === 0x0a) return 0;
    const nl = buf.lastIndexOf(0x0a);
    const keep = nl < 0 ? (size > n ? size - n : 0) : size - n + nl + 1;
    ftruncateSync(fd, keep);
    return size - keep;
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends financing records. `open` resumes: it cuts a line cut short by a crash and reads back
 * the (day, instrument) pairs recorded, so that the same day is never recorded twice.
 */
export class FinancingWriter {
  readonly repaired: { file: string; bytes: number }[] = [];
  readonly #have = new Set<string>();

  private constructor(readonly root: string) {}

  static open(root: string): FinancingWriter {
    const w = new FinancingWriter(root);
    for (const { file } of financingFiles(root)) {
      const bytes = repairTail(file);
      if (bytes > 0) w.repaired.push({ file, bytes });
    }
    for (const r of readFinancing(root)) w.#have.add(`${r.day}|${r.instrument}`);
    return w;
  }

  has(day: string, instrument: string): boolean {
    return this.#have.has(`${day}|${instrument}`);
  }

  /** Appends the records not recorded yet (one write per year file); returns those written. */
  append(records: readonly FinancingRecord[]): FinancingRecord[] {
    const byFile = new Map<string, string[]>();
    const written: FinancingRecord[] = [];
    for (const r of records) {
      const key = `${r.day}|${r.instrument}`;
      if (this.#have.has(key)) continue;
      this.#have.add(key);
      const file = join(financingDir(this.root), `${r.day.slice(0, 4)}.jsonl`);
      let lines = byFile.get(file);
      if (!lines) byFile.set(file, (lines = []));
      const o: Record<string, unknown> = {};
      for (const k of FIELDS) o[k] = r[k];
      lines.push(JSON.stringify(o));
      written.push(r);
    }
    for (const [file, lines] of byFile) {
      mkdirSync(financingDir(this.root), { recursive: true });
      const fd = openSync(file, 'a');
      try {
        writeSync(fd, `${lines.join('\n')}\n`);
      } finally {
        closeSync(fd);
      }
    }
    return written;
  }
}

export interface FinancingListing {
  readonly days: number;
  readonly first: string | null;
  readonly last: string | null;
  readonly instruments: readonly string[];
  readonly files: number;
  readonly records: number;
}

/** What the catalog holds of recorded financing (for `fxflow data list`); undefined when nothing. */
export function listFinancing(root: string): FinancingListing | undefined {
  const files = financingFiles(root);
  if (files.length === 0) return undefined;
  const records = readFinancing(root);
  const days = [...new Set(records.map((r) => r.day))].sort();
  return {
    days: days.length,
    first: days[0] ?? null,
    last: days[days.length - 1] ?? null,
    instruments: [...new Set(records.map((r) => r.instrument))].sort(),
    files: files.length,
    records: records.length,
  };
}

/** The terms of a record, as the simulator uses them. */
export function termsOf(r: FinancingRecord): FinancingTerms {
  const daysCharged = [0, 0, 0, 0, 0, 0, 0];
  for (const d of r.financingDaysOfWeek) daysCharged[weekdayIndex(d.dayOfWeek)] = d.daysCharged;
  return { longRate: Number(r.longRate), shortRate: Number(r.shortRate), daysCharged };
}

/** What to do for the days before an instrument's first recorded day. */
export type BeforeHistory = 'error' | 'static';

/**
 * The recorded financing of `instruments` as the simulator's rate lookup: each rollover uses the
 * rates recorded for its trading day, or the latest recorded before it (OANDA changes rates
 * rarely; a day the recorder missed keeps the day before's). Days after the last recording keep
 * the last.
 *
 * An instrument with no recording is an error naming what to record. A run whose first trading
 * day (that of `from`) is before an instrument's first recorded day is an error naming that day,
 * unless `before` is 'static': then those days use the instrument's own rates
 * (data/instruments.json, today's).
 */
export function financingHistory(
  root: string,
  instruments: readonly string[],
  from: UnixMs,
  before: BeforeHistory,
): { rates: FinancingRates; first: ReadonlyMap<string, string>; text: string } {
  const dir = financingDir(root);
  const records = readFinancing(root);
  if (records.length === 0) {
    throw new DataError(
      dir,
      0,
      '',
      `no recorded financing: record it with fxflow record --instruments ${instruments.join(',')} --financing (once per trading day), or leave --financing-history out for today's rates`,
    );
  }
  const startDay = tradingDayOf(from);
  const by = new Map<string, { at: Float64Array; terms: FinancingTerms[] }>();
  const first = new Map<string, string>();
  for (const name of instruments) {
    const own = records
      .filter((r) => r.instrument === name)
      .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
    if (own.length === 0) {
      const held = [...new Set(records.map((r) => r.instrument))].sort().join(', ');
      throw new DataError(
        dir,
        0,
        '',
        `no recorded financing of ${name} (the recording holds ${held}): record it with fxflow record --instruments ${name} --financing, or leave --financing-history out`,
      );
    }
    const day0 = own[0]!.day;
    if (startDay < day0 && before === 'error') {
      throw new DataError(
        dir,
        0,
        '',
        `the first recorded financing of ${name} is for trading day ${day0}, after the run's first trading day ${startDay}: start the run on or after ${day0} (--from), or pass --financing-before-history static to charge the days before it at today's rates (data/instruments.json)`,
      );
    }
    first.set(name, day0);
    by.set(name, { at: Float64Array.from(own, (r) => rolloverOfDay(r.day)), terms: own.map(termsOf) });
  }
  const rates: FinancingRates = (instrument, at) => {
    const h = by.get(instrument);
    if (h === undefined) return undefined;
    // The last recorded rollover at or before `at` (once a day per instrument: a binary search).
    let lo = 0;
    let hi = h.at.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (h.at[mid]! <= at) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) {
      if (before === 'static') return undefined;
      throw new DataError(
        dir,
        0,
        '',
        `no recorded financing of ${instrument} at or before trading day ${newYorkDate(at)} (the first is ${first.get(instrument)})`,
      );
    }
    return h.terms[lo - 1];
  };
  const span = [...first].map(([n, d]) => `${n} from ${d}`).join(', ');
  return {
    rates,
    first,
    text: `recorded (${dir}: ${span}${before === 'static' ? "; today's rates before" : ''})`,
  };
}
