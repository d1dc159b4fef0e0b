import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import { formatTime } from '../../domain/time.ts';
import { priceGate } from './gate.ts';
import type { PriceGate } from './import-checks.ts';
import { financingFiles, parseFinancingLine } from './financing-store.ts';
import { readLines } from './lines.ts';
import { manifestFile, readManifest, type RecordingManifest } from './recording-manifest.ts';
import {
  dayOf,
  parseTickRow,
  scanDayFile,
  tickDayFiles,
  tickInstruments,
  ticksDir,
  TICK_HEADER,
  wholeMembersAfter,
} from './tick-store.ts';

/**
 * `fxflow data check` for what `fxflow record` wrote: tick day files, financing year files and
 * recording.json. Everything is read streamed (a gzip member or a 64 KiB chunk at a time); each
 * problem is one line of text naming the file (and line or byte) and how to fix it.
 */

/** A path as a shell word (quoted when it has to be), for the repair commands printed. */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export interface TickDayCheck {
  readonly file: string;
  readonly day: string;
  readonly rows: number;
  readonly first?: number;
  readonly last?: number;
  readonly problems: readonly string[];
}

/**
 * Checks one day file: it decompresses to its last gzip member (else a torn tail, with the byte to
 * cut at and the command that cuts it; or damage with whole members after it, which cutting would
 * lose), every row parses, times increase (as v20 wrote them: below the ms too), every time lies in
 * the file's UTC day, and bid <= ask (rows with bid above ask are counted, the first named).
 * `newest`: the instrument's newest day, the one a resumed recorder cuts.
 */
export function checkTickDay(file: string, day: string, newest: boolean, gate?: PriceGate): TickDayCheck {
  const problems: string[] = [];
  let rows = 0;
  let first: number | undefined;
  let last: number | undefined;
  let lastTime = '';
  let crossed = 0;
  let firstCrossed = 0;
  let scan: ReturnType<typeof scanDayFile>;
  try {
    scan = scanDayFile(file, (row, line) => {
      if (row === '' || (line === 1 && row === TICK_HEADER)) return true;
      let t: ReturnType<typeof parseTickRow>;
      try {
        t = parseTickRow(row, file, line);
      } catch (e) {
        problems.push(`DAMAGED ${(e as Error).message}`);
        return false;
      }
      const time = row.slice(0, row.indexOf(','));
      if (last !== undefined && (t.at < last || (t.at === last && time <= lastTime))) {
        problems.push(
          `DAMAGED ${file}:${line} (time): ${time} does not come after the row before's ${lastTime}: a recorded day is in time order; was a line moved or another file appended?`,
        );
        return false;
      }
      if (dayOf(t.at) !== day) {
        problems.push(
          `DAMAGED ${file}:${line} (time): ${time} is not in the file's UTC day ${day}: the recorder files a tick by the UTC day of its time; was the file renamed?`,
        );
        return false;
      }
      if (t.bid > t.ask) {
        if (crossed === 0) firstCrossed = line;
        crossed++;
      }
      if (gate !== undefined) {
        try {
          gate.tick(t.at, t.bid, Math.max(t.bid, t.ask), file, line);
        } catch (e) {
          problems.push(`MISMATCH ${(e as Error).message}`);
          gate = undefined; // one refusal per instrument is enough
        }
      }
      rows++;
      first ??= t.at;
      last = t.at;
      lastTime = time;
      return true;
    });
  } catch (e) {
    return { file, day, rows, problems: [`DAMAGED ${(e as Error).message}`] };
  }
  if (crossed > 0)
    problems.push(
      `CROSSED ${file}:${firstCrossed}: ${crossed.toLocaleString('en-US')} row${crossed === 1 ? ' has its' : 's have their'} bid above the ask (the first at line ${firstCrossed}); a backtest raises such an ask to the bid`,
    );
  if (scan.complete < scan.size) {
    // Damage in the middle (whole blocks after it) or a torn tail: only the latter may be cut.
    const after = wholeMembersAfter(readFileSync(file), scan.complete);
    if (after !== undefined) {
      problems.push(
        `DAMAGED ${file}: the gzip block at byte ${scan.complete} is damaged and ${after.members} whole block${after.members === 1 ? '' : 's'} follow${after.members === 1 ? 's' : ''} it from byte ${after.at}: a backtest stops at byte ${scan.complete}. Cutting the file there would lose the blocks after it: keep a copy, and restore the file from a backup if there is one`,
      );
    } else {
      problems.push(
        `TORN ${file}: bytes ${scan.complete} to ${scan.size} are a gzip block cut short (a recording stopped mid-write, e.g. by kill -9); the ${scan.lines.toLocaleString('en-US')} rows before byte ${scan.complete} are whole. Repair: truncate -s ${scan.complete} ${shellWord(file)}${newest ? ' (or start `fxflow record … --prices` on this catalog again: it cuts it on resume)' : ''}`,
      );
    }
  } else if (scan.tail !== '') {
    problems.push(
      `DAMAGED ${file}:${scan.lines + 1}: the last row has no line end: the file was not written by fxflow record (each block ends with a whole row)`,
    );
  }
  return {
    file,
    day,
    rows,
    ...(first !== undefined ? { first } : {}),
    ...(last !== undefined ? { last } : {}),
    problems,
  };
}

export interface TickCheck {
  readonly instrument: string;
  readonly days: number;
  readonly rows: number;
  readonly first?: number;
  readonly last?: number;
  readonly problems: readonly string[];
}

/**
 * Checks every day file of the recorded instruments (or of `instrument`). With `instruments`, the
 * rows of each instrument it knows also pass the price gate (gate.ts `priceGate`): prices in the
 * instrument's band and at its precision, none while its market is closed (MISMATCH otherwise).
 */
export function checkTicks(root: string, instrument?: string, instruments?: InstrumentRegistry): TickCheck[] {
  const out: TickCheck[] = [];
  for (const name of tickInstruments(root)) {
    if (instrument !== undefined && name !== instrument) continue;
    const files = tickDayFiles(root, name);
    const problems: string[] = [];
    let rows = 0;
    let first: number | undefined;
    let last: number | undefined;
    let gate =
      instruments?.has(name) === true
        ? priceGate(ticksDir(root, name), { instrument: name, instruments, fix: 'recording' })
        : undefined;
    for (const [k, f] of files.entries()) {
      const r = checkTickDay(f.file, f.day, k === files.length - 1, gate);
      problems.push(...r.problems);
      if (r.problems.some((p) => p.startsWith('MISMATCH '))) gate = undefined;
      rows += r.rows;
      first ??= r.first;
      if (r.last !== undefined) last = r.last;
    }
    if (gate !== undefined) {
      try {
        gate.end();
      } catch (e) {
        problems.push(`MISMATCH ${(e as Error).message}`);
      }
    }
    out.push({
      instrument: name,
      days: files.length,
      rows,
      ...(first !== undefined ? { first } : {}),
      ...(last !== undefined ? { last } : {}),
      problems,
    });
  }
  return out;
}

/** When a file's last line has no line end: the offset just after the last line end, and its size. */
function unterminated(file: string): { keep: number; size: number } | undefined {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return undefined;
    let end = size;
    const buf = Buffer.allocUnsafe(1 << 16);
    // Back from the end, a chunk at a time, to the last line end.
    while (end > 0) {
      const n = Math.min(end, buf.length);
      readSync(fd, buf, 0, n, end - n);
      if (end === size && buf[n - 1] === 0x0a) return undefined;
      const nl = buf.subarray(0, n).lastIndexOf(0x0a);
      if (nl >= 0) return { keep: end - n + nl + 1, size };
      end -= n;
    }
    return { keep: 0, size };
  } finally {
    closeSync(fd);
  }
}

export interface FinancingCheck {
  readonly files: number;
  readonly records: number;
  readonly days: number;
  readonly first?: string;
  readonly last?: string;
  readonly instruments: readonly string[];
  /** Every instrument with records, whatever `instrument` asked for (for the manifest check). */
  readonly held: readonly string[];
  readonly problems: readonly string[];
}

/** At most this many damaged lines are listed per file (the rest are counted). */
const LISTED = 5;

/**
 * Checks the financing year files: every line parses (fields, types, no unknown field), lies in the
 * file of its day's year, and each (trading day, instrument) is recorded once. A last line without
 * its line end is a torn tail in the newest file (a recorder stopped mid-write: not a record, cut on
 * resume) and damage in an older one. `instrument`: only its records are counted and checked for
 * repeats (every line is still parsed).
 */
export async function checkFinancing(root: string, instrument?: string): Promise<FinancingCheck | undefined> {
  const files = financingFiles(root);
  if (files.length === 0) return undefined;
  const problems: string[] = [];
  const seen = new Map<string, string>();
  const days = new Set<string>();
  const instruments = new Set<string>();
  const held = new Set<string>();
  let records = 0;
  for (const [k, { year, file }] of files.entries()) {
    const cut = unterminated(file);
    let listed = 0;
    let more = 0;
    const problem = (text: string): void => {
      if (listed < LISTED) {
        problems.push(text);
        listed++;
      } else more++;
    };
    const take = (text: string, line: number): void => {
      if (text.trim() === '') return;
      let r;
      try {
        r = parseFinancingLine(text, file, line);
      } catch (e) {
        problem(`DAMAGED ${(e as Error).message}`);
        return;
      }
      if (r.day.slice(0, 4) !== year)
        problem(
          `DAMAGED ${file}:${line} (day): ${r.day} is not in ${year}: a record goes to the file of its day's year (${r.day.slice(0, 4)}.jsonl); move the line there`,
        );
      held.add(r.instrument);
      if (instrument !== undefined && r.instrument !== instrument) return;
      const key = `${r.day}|${r.instrument}`;
      const where = seen.get(key);
      if (where !== undefined) {
        problem(
          `DAMAGED ${file}:${line}: ${r.instrument} on ${r.day} is recorded twice (first at ${where}): remove one of the lines`,
        );
        return;
      }
      seen.set(key, `${basename(file)}:${line}`);
      records++;
      days.add(r.day);
      instruments.add(r.instrument);
    };
    // Each line is taken when the next one arrives: the last, when it has no line end, is not a record (reported below).
    let pending: { text: string; line: number } | undefined;
    for await (const { lines, first } of readLines(file)) {
      for (const [i, text] of lines.entries()) {
        if (pending !== undefined) take(pending.text, pending.line);
        pending = { text, line: first + i };
      }
    }
    if (pending !== undefined && cut === undefined) take(pending.text, pending.line);
    if (more > 0) problems.push(`DAMAGED ${file}: ${more} more damaged line${more === 1 ? '' : 's'}`);
    if (cut !== undefined) {
      if (k === files.length - 1)
        problems.push(
          `TORN ${file}: bytes ${cut.keep} to ${cut.size} are a line without its line end (a recorder stopped mid-write): it is not a record. Repair: truncate -s ${cut.keep} ${shellWord(file)} (or start \`fxflow record … --financing\` on this catalog again: it cuts it on resume and reads the day's rates again while the day lasts)`,
        );
      else
        problems.push(
          `DAMAGED ${file}: the last line has no line end in a year file that is not the newest: remove the part after byte ${cut.keep} (truncate -s ${cut.keep} ${shellWord(file)})`,
        );
    }
  }
  const sorted = [...days].sort();
  return {
    files: files.length,
    records,
    days: days.size,
    ...(sorted.length > 0 ? { first: sorted[0]!, last: sorted[sorted.length - 1]! } : {}),
    instruments: [...instruments].sort(),
    held: [...held].sort(),
    problems,
  };
}

export interface ManifestCheck {
  readonly file: string;
  readonly manifest?: RecordingManifest;
  readonly problems: readonly string[];
}

/**
 * Checks recording.json against what is on disk: it must be valid when there is one, and there must
 * be one when ticks or financing are recorded; every instrument with ticks or financing on disk is
 * one it names (now or under `previous`), the kinds on disk are among its kinds, each instrument it
 * records prices or financing of has some on disk, and a recording of prices or financing names its
 * account. `onDisk`: the instruments with ticks and with financing records. Undefined when the
 * catalog holds no recording and no manifest.
 */
export function checkRecordingManifest(
  root: string,
  onDisk: { ticks: readonly string[]; financing: readonly string[] },
): ManifestCheck | undefined {
  const file = manifestFile(root);
  let manifest: RecordingManifest | undefined;
  try {
    manifest = readManifest(root);
  } catch (e) {
    return { file, problems: [`DAMAGED ${(e as Error).message}`] };
  }
  const recorded = onDisk.ticks.length > 0 || onDisk.financing.length > 0;
  if (manifest === undefined) {
    if (!recorded) return undefined;
    return {
      file,
      problems: [
        `MISSING ${file}: the catalog holds recorded ${[onDisk.ticks.length > 0 ? 'ticks' : '', onDisk.financing.length > 0 ? 'financing' : ''].filter(Boolean).join(' and ')} but no recording.json, which says which account and instruments they are of: fxflow record writes it (start it once on this catalog with the account and instruments recorded)`,
      ],
    };
  }
  const problems: string[] = [];
  const all = [manifest, ...(manifest.previous ?? [])];
  const named = new Set(all.flatMap((m) => m.instruments));
  const kinds = new Set(all.flatMap((m) => m.kinds));
  const list = (xs: readonly string[]): string => (xs.length > 0 ? [...xs].sort().join(', ') : '(none)');
  for (const [kind, what, held] of [
    ['prices', 'ticks', onDisk.ticks],
    ['financing', 'financing', onDisk.financing],
  ] as const) {
    const stray = held.filter((i) => !named.has(i));
    if (stray.length > 0)
      problems.push(
        `MISMATCH ${file}: the catalog holds ${what} of ${list(stray)}, which recording.json does not name (its instruments: ${list(manifest.instruments)}${manifest.previous?.length ? ', and earlier ones under "previous"' : ''}): were they copied in from another recording? Move them to their own catalog`,
      );
    if (held.length > 0 && !kinds.has(kind))
      problems.push(
        `MISMATCH ${file}: the catalog holds ${what} but recording.json's kinds (${list([...kinds])}) do not include "${kind}"`,
      );
    if (manifest.kinds.includes(kind)) {
      const missing = manifest.instruments.filter((i) => !held.includes(i));
      if (missing.length > 0)
        problems.push(
          `MISMATCH ${file}: recording.json says ${kind} of ${list(manifest.instruments)} are recorded, but there are no ${what} of ${list(missing)} on disk: were they removed?`,
        );
    }
  }
  if (
    manifest.accountID === null &&
    (manifest.kinds.includes('prices') || manifest.kinds.includes('financing'))
  ) {
    problems.push(
      `DAMAGED ${file} (accountID): a recording of prices or financing is of an account, and recording.json names none: set "accountID" to the account recorded`,
    );
  }
  return { file, manifest, problems };
}

/** The tick check of an instrument as one line (for `fxflow data check`). */
export function describeTickCheck(t: TickCheck): string {
  const when = (x: number | undefined): string => (x === undefined ? '?' : formatTime(x));
  return `ticks ${t.instrument}: ${t.rows.toLocaleString('en-US')} ticks in ${t.days} day file${t.days === 1 ? '' : 's'}, ${when(t.first)} → ${when(t.last)}`;
}
