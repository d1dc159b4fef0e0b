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
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { CalendarEvent, CotEvent, SignalEvent, SpreadEvent } from '../../domain/events.ts';
import type { UnixMs } from '../../domain/time.ts';
import { DataError } from './errors.ts';
import {
  calendarItemEvent,
  cotItemEvent,
  LABS_KINDS,
  LabsIdentity,
  signalItemEvent,
  spreadItemEvent,
  visibleAt,
  type CalendarItem,
  type LabsItem,
  type LabsKind,
  type SignalItem,
} from './labs-items.ts';

/**
 * Labs items in the catalog: append-only JSONL, one folder per kind, one file per UTC month of
 * `knownAt` (`<catalog>/labs/<kind>/YYYY-MM.jsonl`), one item per line, in `knownAt` order.
 * Files rotate by month, so memory and file size stay bounded; a writer resumes by reading what
 * is there (the identities, so nothing is recorded twice) and repairs a last line cut short by a
 * crash (that item was not recorded; it is fetched and recorded again).
 */
export const labsDir = (root: string, kind: LabsKind): string => join(root, 'labs', kind);
const monthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);
const MONTH_FILE = /^(\d{4}-\d{2})\.jsonl$/;

/** The month files of a kind, oldest first. */
export function labsFiles(root: string, kind: LabsKind): { month: string; file: string }[] {
  const dir = labsDir(root, kind);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => MONTH_FILE.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ month: m[1]!, file: join(dir, m[0]) }))
    .sort((a, b) => (a.month < b.month ? -1 : 1));
}

const FIELDS: Record<LabsKind, readonly string[]> = {
  calendar: ['kind', 'knownAt', 'key', 'version', 'entry'],
  signals: ['kind', 'knownAt', 'key', 'signal'],
  spreads: ['kind', 'knownAt', 'key', 'instrument', 't', 'min', 'avg', 'max'],
  cot: ['kind', 'knownAt', 'key', 'instrument', 'report'],
};

/** Parses and checks one recorded line; errors name the file and line and say how to fix it. */
export function parseLabsLine(text: string, file: string, line: number, kind: LabsKind): LabsItem {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new DataError(
      file,
      line,
      '',
      `not a JSON labs item (${text.length > 60 ? `${text.slice(0, 60)}…` : text}); the line is damaged: remove it (fxflow record fetches what is still in the labs window again)`,
    );
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new DataError(file, line, '', 'a labs item must be a JSON object');
  const o = v as Record<string, unknown>;
  if (o.kind !== kind)
    throw new DataError(
      file,
      line,
      'kind',
      `is ${JSON.stringify(o.kind)} in a ${kind} file; move the line to labs/${String(o.kind)}/`,
    );
  const allowed = FIELDS[kind];
  for (const k of Object.keys(o))
    if (!allowed.includes(k))
      throw new DataError(
        file,
        line,
        k,
        `unknown field in a ${kind} item (known: ${allowed.join(', ')}); was it written by a newer fxflow?`,
      );
  for (const k of allowed)
    if (o[k] === undefined) throw new DataError(file, line, k, `missing from a ${kind} item`);
  if (typeof o.knownAt !== 'number' || !Number.isFinite(o.knownAt))
    throw new DataError(file, line, 'knownAt', 'must be UNIX milliseconds');
  if (typeof o.key !== 'string') throw new DataError(file, line, 'key', 'must be a string');
  const isObj = (x: unknown): x is Record<string, unknown> =>
    typeof x === 'object' && x !== null && !Array.isArray(x);
  switch (kind) {
    case 'calendar': {
      const e = o.entry;
      if (
        !isObj(e) ||
        typeof e.timestamp !== 'number' ||
        typeof e.currency !== 'string' ||
        typeof e.title !== 'string' ||
        typeof e.impact !== 'number'
      ) {
        throw new DataError(
          file,
          line,
          'entry',
          'must be a labs calendar entry (title, timestamp, currency, impact)',
        );
      }
      if (typeof o.version !== 'number' || o.version < 1)
        throw new DataError(file, line, 'version', 'must be a number from 1');
      break;
    }
    case 'signals': {
      const s = o.signal;
      if (
        !isObj(s) ||
        typeof s.id !== 'number' ||
        typeof s.instrument !== 'string' ||
        !isObj(s.meta) ||
        !isObj(s.data) ||
        typeof s.data.patternendtime !== 'number'
      ) {
        throw new DataError(
          file,
          line,
          'signal',
          'must be an Autochartist signal (id, instrument, meta, data.patternendtime)',
        );
      }
      break;
    }
    case 'spreads':
      for (const k of ['t', 'min', 'avg', 'max'])
        if (typeof o[k] !== 'number') throw new DataError(file, line, k, 'must be a number');
      break;
    case 'cot':
      if (!isObj(o.report) || typeof o.report.date !== 'number')
        throw new DataError(file, line, 'report', 'must be a COT report with a date');
      break;
  }
  return o as unknown as LabsItem;
}

/** Reads one month file item by item. */
async function* readFile(file: string, kind: LabsKind): AsyncGenerator<LabsItem> {
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of rl) {
      line++;
      if (text.trim() === '') continue;
      yield parseLabsLine(text, file, line, kind);
    }
  } finally {
    rl.close();
  }
}

/**
 * The recorded items of a kind in the order a strategy may see them (`visibleAt`, then file
 * order), those visible in `[from, to)` and accepted by `keep`, in batches. Items come from the
 * files in `knownAt` order and `visibleAt >= knownAt`, so a small buffer of items not yet visible
 * puts them in order without reading ahead more than those.
 */
export async function* readLabsItems(
  root: string,
  kind: LabsKind,
  req: { from: UnixMs; to: UnixMs; keep?: (i: LabsItem) => boolean; batch?: number },
): AsyncGenerator<LabsItem[]> {
  const size = req.batch ?? 1000;
  const toMonth = Number.isFinite(req.to) ? monthOf(req.to) : '9999-12';
  let pending: { at: number; seq: number; item: LabsItem }[] = [];
  let out: LabsItem[] = [];
  let seq = 0;
  let lastKnown = -Infinity;
  const flush = function* (upTo: number): Generator<LabsItem[]> {
    let n = 0;
    while (n < pending.length && pending[n]!.at <= upTo) n++;
    if (n === 0) return;
    for (let i = 0; i < n; i++) {
      const p = pending[i]!;
      if (p.at >= req.from && p.at < req.to) out.push(p.item);
      if (out.length >= size) {
        yield out;
        out = [];
      }
    }
    pending = pending.slice(n);
  };
  for (const { month, file } of labsFiles(root, kind)) {
    if (month > toMonth) break;
    for await (const item of readFile(file, kind)) {
      if (item.knownAt < lastKnown)
        throw new DataError(
          file,
          0,
          'knownAt',
          `items go back in time (${new Date(item.knownAt).toISOString()} after ${new Date(lastKnown).toISOString()}); a labs file is appended in knownAt order: sort it by knownAt`,
        );
      lastKnown = item.knownAt;
      if (req.keep && !req.keep(item)) continue;
      yield* flush(item.knownAt);
      const at = visibleAt(item);
      // Insert in (at, seq) order; almost always at the end.
      let k = pending.length;
      while (k > 0 && pending[k - 1]!.at > at) k--;
      pending.splice(k, 0, { at, seq: seq++, item });
      if (item.knownAt >= req.to) break;
    }
  }
  yield* flush(Infinity);
  if (out.length > 0) yield out;
}

/** Recorded calendar releases of `currencies` as engine events, at the time each became known. */
export async function* recordedCalendar(
  root: string,
  req: { currencies: readonly string[]; from: UnixMs; to: UnixMs },
): AsyncGenerator<CalendarEvent[]> {
  const want = new Set(req.currencies);
  for await (const items of readLabsItems(root, 'calendar', {
    ...req,
    keep: (i) => want.has((i as CalendarItem).entry.currency),
  })) {
    yield items.map((i) => calendarItemEvent(i as CalendarItem));
  }
}

/** Recorded Autochartist signals of `instruments` as engine events, at the time each was first seen. */
export async function* recordedSignals(
  root: string,
  req: { instruments: readonly string[]; from: UnixMs; to: UnixMs },
): AsyncGenerator<SignalEvent[]> {
  const want = new Set(req.instruments);
  for await (const items of readLabsItems(root, 'signals', {
    ...req,
    keep: (i) => want.has((i as SignalItem).signal.instrument),
  })) {
    yield items.map((i) => signalItemEvent(i as SignalItem));
  }
}

/**
 * Refuses a subscription to spreads or COT of an instrument the catalog holds no item of (at any
 * time): a strategy would otherwise run without a single event and look like it ignored them.
 * Reads the kind's files until every wanted instrument was seen.
 */
async function requireRecorded(
  root: string,
  kind: 'spreads' | 'cot',
  instruments: readonly string[],
): Promise<void> {
  const missing = new Set(instruments);
  for (const { file } of labsFiles(root, kind)) {
    if (missing.size === 0) return;
    for await (const item of readFile(file, kind)) {
      if (item.kind === kind) missing.delete(item.instrument);
      if (missing.size === 0) return;
    }
  }
  if (missing.size === 0) return;
  const list = [...missing].sort().join(',');
  const what = kind === 'spreads' ? 'spreads' : 'COT reports';
  throw new DataError(
    labsDir(root, kind),
    0,
    '',
    `the strategy subscribes to ${kind} of ${list} but this catalog holds no recorded labs ${what} of ${missing.size === 1 ? 'it' : 'them'}: record them first (fxflow record --labs spreads,cot --instruments ${list} --catalog ${root}), or remove ${list} from the strategy's \`${kind}\` subscription`,
  );
}

/** Recorded labs spread intervals of `instruments` as engine events, at the time each became known. */
export async function* recordedSpreadEvents(
  root: string,
  req: { instruments: readonly string[]; from: UnixMs; to: UnixMs },
): AsyncGenerator<SpreadEvent[]> {
  await requireRecorded(root, 'spreads', req.instruments);
  const want = new Set(req.instruments);
  for await (const items of readLabsItems(root, 'spreads', {
    ...req,
    keep: (i) => i.kind === 'spreads' && want.has(i.instrument),
  })) {
    yield items.map((i) => spreadItemEvent(i as Extract<LabsItem, { kind: 'spreads' }>));
  }
}

/** Recorded COT reports of `instruments` as engine events, at the time each became known. */
export async function* recordedCot(
  root: string,
  req: { instruments: readonly string[]; from: UnixMs; to: UnixMs },
): AsyncGenerator<CotEvent[]> {
  await requireRecorded(root, 'cot', req.instruments);
  const want = new Set(req.instruments);
  for await (const items of readLabsItems(root, 'cot', {
    ...req,
    keep: (i) => i.kind === 'cot' && want.has(i.instrument),
  })) {
    yield items.map((i) => cotItemEvent(i as Extract<LabsItem, { kind: 'cot' }>));
  }
}

export interface LabsListing {
  readonly kind: LabsKind;
  readonly files: number;
  readonly items: number;
  readonly first: UnixMs | null;
  readonly last: UnixMs | null;
  /** Distinct currencies (calendar) or instruments (the others). */
  readonly subjects: readonly string[];
  /** Files whose last line has no newline (a write cut short): not counted; `fxflow record` cuts it when it starts. */
  readonly torn: readonly string[];
}

/** What checking one kind's files found: its items, and each problem with its file and line and how to repair it. */
export interface LabsCheck extends LabsListing {
  readonly problems: readonly string[];
}

/**
 * Reads every file of every kind as `fxflow data list` and `data check` need: whole lines parsed,
 * a last line without its newline (torn) named and left out, a damaged line named with its file and
 * line, items out of `knownAt` order or in another month's file named.
 */
export function checkLabs(root: string): LabsCheck[] {
  const out: LabsCheck[] = [];
  for (const kind of LABS_KINDS) {
    const files = labsFiles(root, kind);
    if (files.length === 0) continue;
    let items = 0;
    let first: number | null = null;
    let last: number | null = null;
    const subjects = new Set<string>();
    const torn: string[] = [];
    const problems: string[] = [];
    for (const { month, file } of files) {
      const text = readFileSync(file, 'utf8');
      const lines = text.split('\n');
      const tail = lines.pop()!;
      if (tail !== '') {
        torn.push(file);
        problems.push(
          `${file}:${lines.length + 1}: torn last line (${Buffer.byteLength(tail)} bytes without a newline, a write cut short): fxflow record cuts it when it starts again (or truncate -s ${Buffer.byteLength(text) - Buffer.byteLength(tail)} ${file}); the items it held are fetched again while in the labs window`,
        );
      }
      let previous = -Infinity;
      lines.forEach((l, n) => {
        if (l.trim() === '') return;
        let i: LabsItem;
        try {
          i = parseLabsLine(l, file, n + 1, kind);
        } catch (e) {
          problems.push((e as Error).message);
          return;
        }
        items++;
        first ??= i.knownAt;
        last = i.knownAt;
        subjects.add(
          i.kind === 'calendar'
            ? i.entry.currency
            : i.kind === 'signals'
              ? i.signal.instrument
              : i.instrument,
        );
        if (i.knownAt < previous)
          problems.push(
            `${file}:${n + 1}: knownAt ${new Date(i.knownAt).toISOString()} is before the line above's: the file is not in knownAt order (edited, or two recorders wrote it)`,
          );
        if (new Date(i.knownAt).toISOString().slice(0, 7) !== month)
          problems.push(
            `${file}:${n + 1}: knownAt ${new Date(i.knownAt).toISOString()} belongs to another month's file`,
          );
        previous = Math.max(previous, i.knownAt);
      });
    }
    out.push({
      kind,
      files: files.length,
      items,
      first,
      last,
      subjects: [...subjects].sort(),
      torn,
      problems,
    });
  }
  return out;
}

/** What the catalog holds of each labs kind (reads every file: for `fxflow data list`); a torn last line is named, not fatal. */
export async function listLabs(root: string): Promise<LabsListing[]> {
  return checkLabs(root).map(({ problems: _p, ...l }) => l);
}

/** Cuts a last line without its newline (a write cut short by a crash); returns the bytes dropped. */
function repairTail(file: string): number {
  const fd = openSync(file, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const buf = Buffer.alloc(Math.min(size, 1 << 16));
    let end = size;
    // Walk back to the last newline.
    for (;;) {
      const start = Math.max(0, end - buf.length);
      const n = readSync(fd, buf, 0, end - start, start);
      if (end === size && buf[n - 1] === 0x0a) return 0;
      const nl = buf.subarray(0, n).lastIndexOf(0x0a);
      if (nl >= 0) {
        ftruncateSync(fd, start + nl + 1);
        return size - (start + nl + 1);
      }
      if (start === 0) {
        ftruncateSync(fd, 0);
        return size;
      }
      end = start;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends labs items to the catalog. `open` resumes: it repairs cut lines, and reads back the
 * identities of recent months (the labs windows reach back at most a year) so that an item seen
 * again is not recorded again. Each `append` is one write per file, in `knownAt` order.
 */
export class LabsWriter {
  readonly identity = new LabsIdentity();
  readonly repaired: { file: string; bytes: number }[] = [];
  #lastKnown = new Map<LabsKind, number>();

  private constructor(readonly root: string) {}

  static async open(root: string, o: { now?: UnixMs; lookbackMs?: number } = {}): Promise<LabsWriter> {
    const w = new LabsWriter(root);
    for (const kind of LABS_KINDS) {
      const files = labsFiles(root, kind);
      // The months to read back: those within the lookback of the newest file (not of a local clock,
      // which a recording made on another clock, e.g. a sandbox's, does not follow).
      const newest =
        files.length > 0
          ? Date.parse(`${files[files.length - 1]!.month}-01T00:00:00Z`)
          : (o.now ?? Date.now());
      const since = monthOf(newest - (o.lookbackMs ?? 400 * 86_400_000));
      for (const { month, file } of files) {
        const bytes = repairTail(file);
        if (bytes > 0) w.repaired.push({ file, bytes });
        if (month < since) continue;
        for await (const item of readFile(file, kind)) {
          w.identity.remember(item);
          w.#lastKnown.set(kind, item.knownAt);
        }
      }
    }
    return w;
  }

  /** Appends items (any kinds); each kind's `knownAt` must not go back. */
  append(items: readonly LabsItem[]): void {
    const byFile = new Map<string, string[]>();
    for (const item of items) {
      const last = this.#lastKnown.get(item.kind) ?? -Infinity;
      const knownAt = Math.max(item.knownAt, last); // a clock step back never breaks the order
      this.#lastKnown.set(item.kind, knownAt);
      const dir = labsDir(this.root, item.kind);
      const file = join(dir, `${monthOf(knownAt)}.jsonl`);
      let lines = byFile.get(file);
      if (!lines) byFile.set(file, (lines = []));
      lines.push(JSON.stringify(knownAt === item.knownAt ? item : { ...item, knownAt }));
    }
    for (const [file, lines] of byFile) {
      mkdirSync(join(file, '..'), { recursive: true });
      const fd = openSync(file, 'a');
      try {
        writeSync(fd, `${lines.join('\n')}\n`);
      } finally {
        closeSync(fd);
      }
    }
  }
}

/** The catalog's recorded labs as a backtest's labs source. */
export function catalogLabs(root: string): {
  calendar(req: {
    currencies: readonly string[];
    from: UnixMs;
    to: UnixMs;
  }): AsyncIterable<readonly CalendarEvent[]>;
  signals(req: {
    instruments: readonly string[];
    from: UnixMs;
    to: UnixMs;
  }): AsyncIterable<readonly SignalEvent[]>;
  spreads(instrument: string, from: UnixMs, to: UnixMs): Promise<(time: number) => number>;
  spreadEvents(req: {
    instruments: readonly string[];
    from: UnixMs;
    to: UnixMs;
  }): AsyncIterable<readonly SpreadEvent[]>;
  cot(req: { instruments: readonly string[]; from: UnixMs; to: UnixMs }): AsyncIterable<readonly CotEvent[]>;
} {
  return {
    calendar: (req) => recordedCalendar(root, req),
    signals: (req) => recordedSignals(root, req),
    spreads: (i, from, to) => recordedSpreads(root, i, from, to),
    spreadEvents: (req) => recordedSpreadEvents(root, req),
    cot: (req) => recordedCot(root, req),
  };
}

/**
 * The recorded labs spreads of `instrument` as a lookup: the average spread (pips) of the last
 * interval starting at or before a time. Times before the first interval get the first; a
 * recording with no interval in `[from - 1 day, to)` is an error naming what to record.
 */
export async function recordedSpreads(
  root: string,
  instrument: string,
  from: UnixMs,
  to: UnixMs,
): Promise<(time: number) => number> {
  const points: [number, number][] = [];
  for await (const b of readLabsItems(root, 'spreads', {
    from: -Infinity,
    to: Infinity,
    keep: (i) =>
      i.kind === 'spreads' &&
      i.instrument === instrument &&
      i.t * 1000 >= from - 86_400_000 &&
      i.t * 1000 < to,
  })) {
    for (const i of b) if (i.kind === 'spreads') points.push([i.t * 1000, i.avg]);
  }
  if (points.length === 0) {
    throw new DataError(
      labsDir(root, 'spreads'),
      0,
      '',
      `no recorded labs spreads of ${instrument} from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}: record them (fxflow record --instruments ${instrument} --labs spreads) or choose another --spread`,
    );
  }
  points.sort((a, b) => a[0] - b[0]);
  const t = Float64Array.from(points, (p) => p[0]);
  const v = Float64Array.from(points, (p) => p[1]);
  let k = 0; // candles come in time order: the search moves forward
  return (time: number): number => {
    if (k > 0 && t[k]! > time) k = 0;
    while (k + 1 < t.length && t[k + 1]! <= time) k++;
    return v[k]!;
  };
}
