import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  writeSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { crc32, gzipSync, inflateRawSync } from 'node:zlib';
import type { Tick } from '../../domain/tick.ts';
import { parseTime, type UnixMs } from '../../domain/time.ts';
import { DataError } from './errors.ts';

/**
 * Recorded ticks in the catalog: `<catalog>/ticks/<INSTRUMENT>/<YYYY-MM-DD>.csv.gz`, one file per
 * UTC day of the tick's own time, rows `time,bid,ask,knownAt` (time as the v20 stream sent it,
 * RFC 3339; bid and ask the top of book as sent; knownAt the UNIX ms the recorder received it),
 * a header row first.
 *
 * A file is a series of gzip members, one per flush, each holding whole rows and written with
 * one write. gzip readers (`zcat`, Node's gunzip) read the members as one text. A write cut short
 * (kill -9, a full disk) leaves at most the last member incomplete: a member is complete when its
 * header, its deflate stream, and its 8-byte trailer (CRC-32 and length of the text) are all there
 * and agree. The recorder cuts an incomplete tail on resume (`TickWriter.open`); the reader stops
 * at one with a message naming the file and the byte to cut at.
 */
export const ticksDir = (root: string, instrument: string): string => join(root, 'ticks', instrument);
export const TICK_HEADER = 'time,bid,ask,knownAt';
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.csv\.gz$/;
const DAY_MS = 86_400_000;
/** The UTC day (`YYYY-MM-DD`) of a time: the day file a tick goes to. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** One complete gzip member: its text and the byte offset just after it. */
interface Member {
  readonly data: Buffer;
  readonly end: number;
}

/**
 * The complete gzip member starting at `pos` of `buf`; 'short' when `buf` ends before the member
 * does (more bytes may complete it), 'bad' when it cannot be one (not gzip, damaged, a CRC or
 * length that does not match).
 */
function memberAt(buf: Buffer, pos: number): Member | 'short' | 'bad' {
  const len = buf.length;
  if (len - pos < 18)
    return len - pos >= 3 && (buf[pos] !== 0x1f || buf[pos + 1] !== 0x8b || buf[pos + 2] !== 8)
      ? 'bad'
      : 'short';
  if (buf[pos] !== 0x1f || buf[pos + 1] !== 0x8b || buf[pos + 2] !== 8) return 'bad';
  const flags = buf[pos + 3]!;
  let p = pos + 10;
  if (flags & 4) {
    if (p + 2 > len) return 'short';
    p += 2 + buf.readUInt16LE(p);
  }
  for (const bit of [8, 16]) {
    if (flags & bit) {
      const z = buf.indexOf(0, p);
      if (z < 0) return 'short';
      p = z + 1;
    }
  }
  if (flags & 2) p += 2;
  if (p >= len) return 'short';
  let data: Buffer;
  let used: number;
  try {
    // `info` gives the engine, whose bytesWritten is the compressed bytes the stream took: the
    // inflater stops at the end of this member's deflate stream, whatever follows.
    const r = inflateRawSync(buf.subarray(p), { info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    data = r.buffer;
    used = r.engine.bytesWritten;
  } catch (e) {
    // Z_BUF_ERROR: the deflate stream goes on past the bytes given.
    return (e as { code?: string }).code === 'Z_BUF_ERROR' ? 'short' : 'bad';
  }
  const q = p + used;
  if (q + 8 > len) return 'short';
  if (buf.readUInt32LE(q) !== crc32(data) || buf.readUInt32LE(q + 4) !== data.length % 2 ** 32) return 'bad';
  return { data, end: q + 8 };
}

/**
 * The complete gzip members of `buf`, in order, and `complete`: the bytes they take. Bytes after
 * `complete` (when `complete < buf.length`) are a torn tail: a member cut short or damaged. Only
 * whole members count: everything before the first bad byte is kept.
 */
export function gzipMembers(buf: Buffer): { members: Buffer[]; complete: number } {
  const members: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const m = memberAt(buf, pos);
    if (typeof m === 'string') break;
    members.push(m.data);
    pos = m.end;
  }
  return { members, complete: pos };
}

/** The day files of an instrument, oldest first. */
export function tickDayFiles(root: string, instrument: string): { day: string; file: string }[] {
  const dir = ticksDir(root, instrument);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => DAY_FILE.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ day: m[1]!, file: join(dir, m[0]) }))
    .sort((a, b) => (a.day < b.day ? -1 : 1));
}

/** The instruments with recorded ticks. */
export function tickInstruments(root: string): string[] {
  const dir = join(root, 'ticks');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^[A-Z0-9]+_[A-Z0-9]+$/.test(d.name))
    .map((d) => d.name)
    .sort();
}

/** Is `path` a recorded day file (`YYYY-MM-DD.csv.gz`)? */
export const isTickDayFile = (path: string): boolean => DAY_FILE.test(basename(path));

/**
 * Where the next complete member after `pos` starts, and how many complete members follow on from
 * there, or undefined when none does: tells damage in the middle of a file (whole members after it,
 * which cutting at `pos` would lose) from a torn tail. Reads the file whole: only for a file already
 * found damaged (`fxflow data check`).
 */
export function wholeMembersAfter(buf: Buffer, pos: number): { at: number; members: number } | undefined {
  const magic = Buffer.from([0x1f, 0x8b, 8]);
  for (let i = buf.indexOf(magic, pos + 1); i >= 0; i = buf.indexOf(magic, i + 1)) {
    let m = memberAt(buf, i);
    if (typeof m === 'string') continue;
    let members = 0;
    while (typeof m !== 'string') {
      members++;
      m = memberAt(buf, m.end);
    }
    return { at: i, members };
  }
  return undefined;
}

/**
 * Where a reader's bytes come from: a file (`fileSource`), or in tests one that counts what the
 * reader asks of it. `size` is fixed when it is opened: bytes a running recorder appends later are
 * not read.
 */
export interface ByteSource {
  readonly size: number;
  /** Reads up to `length` bytes at `position` into `into` from `offset`; how many were read (0: the end). */
  read(into: Buffer, offset: number, length: number, position: number): number;
  close(): void;
}

/** A file as a ByteSource; a file that cannot be opened is a DataError naming it. */
export function fileSource(file: string): ByteSource {
  let fd: number;
  let size: number;
  try {
    fd = openSync(file, 'r');
    size = fstatSync(fd).size;
  } catch (e) {
    throw new DataError(file, 0, '', `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  return {
    size,
    read: (into, offset, length, position) => readSync(fd, into, offset, length, position),
    close: () => closeSync(fd),
  };
}

/** Bytes read ahead of the member being decoded (the buffer holds up to twice this, or two of the largest member). */
export const MEMBER_WINDOW = 1 << 18;

/**
 * Reads the complete gzip members of a source one at a time, with bounded memory: a window of the
 * compressed bytes (`window` ahead of the member being decoded, grown to hold a member larger than
 * it) and the text of one member. After `next()` returns undefined, `pos < size` means a torn tail
 * at `pos`: the bytes from there do not make a complete member (cut short, or damaged).
 */
export class GzipMemberReader {
  #buf: Buffer;
  /** The source offset of `#buf[0]`, and how many bytes of `#buf` hold source bytes. */
  #at = 0;
  #len = 0;
  #size: number;
  /** The offset just after the last complete member read. */
  pos = 0;

  constructor(
    readonly source: ByteSource,
    readonly window: number = MEMBER_WINDOW,
  ) {
    this.#size = source.size;
    this.#buf = Buffer.allocUnsafe(Math.min(2 * window, this.#size));
  }

  get size(): number {
    return this.#size;
  }

  /** The text of the next complete member, or undefined at the end or at a torn tail (see `pos`). */
  next(): Buffer | undefined {
    if (this.pos >= this.#size) return undefined;
    let need = this.window;
    for (;;) {
      this.#fill(need);
      const m = memberAt(this.#buf.subarray(0, this.#len), this.pos - this.#at);
      if (typeof m !== 'string') {
        this.pos = this.#at + m.end;
        return m.data;
      }
      // A member longer than what is held: hold twice as much and decode it again (the cost of
      // the retries is at most that of decoding it once more).
      if (m === 'bad' || this.#at + this.#len >= this.#size) return undefined;
      need = 2 * (this.#at + this.#len - this.pos);
    }
  }

  /** Makes the buffer hold the source's bytes from `pos` on: at least `need` of them, or to the end. */
  #fill(need: number): void {
    const pos = this.pos;
    const end = this.#at + this.#len;
    if (pos >= this.#at && end >= Math.min(pos + need, this.#size)) return;
    const keep = pos >= this.#at && pos < end ? end - pos : 0;
    const cap = Math.min(Math.max(need, 2 * this.window), this.#size - pos);
    if (cap > this.#buf.length || this.#buf.length > 2 * this.window) {
      const next = Buffer.allocUnsafe(cap);
      this.#buf.copy(next, 0, pos - this.#at, pos - this.#at + keep);
      this.#buf = next;
    } else if (keep > 0) this.#buf.copyWithin(0, pos - this.#at, pos - this.#at + keep);
    this.#at = pos;
    this.#len = keep;
    while (this.#len < cap) {
      const n = this.source.read(this.#buf, this.#len, cap - this.#len, pos + this.#len);
      if (n <= 0) {
        // The file is shorter than when it was opened (cut while read): its end is here.
        this.#size = pos + this.#len;
        break;
      }
      this.#len += n;
    }
  }
}

/** Rows handed on per batch (as the other readers, formats.ts). */
const BATCH = 4096;

/**
 * Reads one recorded day file as ticks of `instrument`, those in `[from, to)`, in batches of at
 * most 4,096 rows, streamed: it holds the compressed bytes of about one member (`GzipMemberReader`)
 * and the text of one member, never the file. A member's rows are handed on only once the whole
 * member has been read and its CRC checked. Every row is checked (errors name the file and the
 * line); a torn tail is an error naming the byte to cut the file at, after the complete members
 * before it were read. `source` replaces the file (the reader closes it).
 */
export function* readTickDayFile(
  file: string,
  o: { instrument: string; from?: UnixMs; to?: UnixMs; source?: ByteSource; window?: number },
): Generator<Tick[]> {
  const source = o.source ?? fileSource(file);
  try {
    const members = new GzipMemberReader(source, o.window);
    const instrument = o.instrument;
    const from = o.from ?? -Infinity;
    const to = o.to ?? Infinity;
    let line = 0;
    let last = -Infinity;
    let tail = '';
    for (;;) {
      const data = members.next();
      if (data === undefined) break;
      const text = tail === '' ? data.toString('utf8') : tail + data.toString('utf8');
      let start = 0;
      let out: Tick[] = [];
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const row = text.slice(start, nl);
        start = nl + 1;
        line++;
        if (row === '' || (line === 1 && row === TICK_HEADER)) continue;
        const t = parseTickRow(row, file, line);
        if (t.at < last)
          throw new DataError(
            file,
            line,
            'time',
            `goes back in time (${new Date(t.at).toISOString()} after ${new Date(last).toISOString()}): a recorded day is in time order; was the line moved or another file appended?`,
          );
        last = t.at;
        if (t.at < from || t.at >= to) continue;
        out.push({ kind: 'tick', instrument, at: t.at, bid: t.bid, ask: Math.max(t.bid, t.ask) });
        if (out.length === BATCH) {
          yield out;
          out = [];
        }
      }
      tail = text.slice(start);
      if (out.length > 0) yield out;
    }
    if (members.pos < members.size) {
      throw new DataError(
        file,
        0,
        '',
        `cut short or damaged at byte ${members.pos} of ${members.size} (a recording stopped mid-write, e.g. by kill -9): the ${line} rows before it are whole. Start \`fxflow record\` on this catalog again (it cuts the torn tail on resume), or truncate the file to ${members.pos} bytes`,
      );
    }
    if (tail !== '')
      throw new DataError(
        file,
        line + 1,
        '',
        'the last row has no line end: the file was not written by fxflow record (each block ends with a whole row)',
      );
  } finally {
    source.close();
  }
}

/**
 * Walks a day file's rows as text, streamed (one member at a time): `onRow(row, line)` per row
 * (the header and empty rows included, line numbers 1-based). Returns the bytes of its complete
 * members (`complete`), its size, the rows read and the text after the last line end (`tail`, ''
 * when the complete part ends with a whole row). Stops early when `onRow` returns false.
 */
export function scanDayFile(
  file: string,
  onRow: (row: string, line: number) => boolean | void,
  source: ByteSource = fileSource(file),
): { complete: number; size: number; lines: number; tail: string } {
  try {
    const members = new GzipMemberReader(source);
    let line = 0;
    let tail = '';
    for (;;) {
      const data = members.next();
      if (data === undefined) break;
      const text = tail === '' ? data.toString('utf8') : tail + data.toString('utf8');
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        line++;
        const go = onRow(text.slice(start, nl), line);
        start = nl + 1;
        if (go === false) return { complete: members.pos, size: members.size, lines: line, tail: '' };
      }
      tail = text.slice(start);
    }
    return { complete: members.pos, size: members.size, lines: line, tail };
  } finally {
    source.close();
  }
}

/** One recorded row: `time,bid,ask,knownAt`. */
export function parseTickRow(
  row: string,
  file: string,
  line: number,
): { at: UnixMs; bid: number; ask: number; knownAt: number } {
  const f = row.split(',');
  if (f.length !== 4)
    throw new DataError(
      file,
      line,
      '',
      `expected 4 fields (${TICK_HEADER}), found ${f.length}: "${row.length > 60 ? `${row.slice(0, 60)}…` : row}"`,
    );
  const at = parseTime(f[0]!);
  if (Number.isNaN(at))
    throw new DataError(file, line, 'time', `cannot read the time "${f[0]}" (RFC 3339 expected)`);
  const bid = Number(f[1]);
  const ask = Number(f[2]);
  const knownAt = Number(f[3]);
  if (f[1] === '' || !Number.isFinite(bid) || !(bid > 0))
    throw new DataError(file, line, 'bid', `expected a positive price, found "${f[1]}"`);
  if (f[2] === '' || !Number.isFinite(ask) || !(ask > 0))
    throw new DataError(file, line, 'ask', `expected a positive price, found "${f[2]}"`);
  if (!Number.isInteger(knownAt))
    throw new DataError(file, line, 'knownAt', `expected UNIX milliseconds, found "${f[3]}"`);
  return { at, bid, ask, knownAt };
}

/** Does a day file overlap `[from, to)`? (Lets a reader skip days by name.) */
export function dayInRange(file: string, from: UnixMs | undefined, to: UnixMs | undefined): boolean {
  const m = DAY_FILE.exec(basename(file));
  if (!m) return true;
  const start = Date.parse(`${m[1]}T00:00:00Z`);
  return !(from !== undefined && start + DAY_MS <= from) && !(to !== undefined && start >= to);
}

/**
 * A day file's last row (not the header) and its line, streamed; `cut` also cuts its torn tail
 * (the bytes after its last complete member) and says how many bytes it cut.
 */
function lastRowOf(file: string, cut: boolean): { bytes: number; row?: string; line: number } {
  let row: string | undefined;
  let at = 0;
  const r = scanDayFile(file, (text, line) => {
    if (text !== '' && text !== TICK_HEADER) {
      row = text;
      at = line;
    }
  });
  if (r.tail !== '') {
    row = r.tail;
    at = r.lines + 1;
  }
  if (cut && r.complete < r.size) {
    const fd = openSync(file, 'r+');
    try {
      ftruncateSync(fd, r.complete);
    } finally {
      closeSync(fd);
    }
  }
  return { bytes: cut ? r.size - r.complete : 0, ...(row !== undefined ? { row } : {}), line: at };
}

/** One tick as recorded: the wire strings of time, bid and ask, its time in ms and when it was received. */
export interface TickRow {
  readonly time: string;
  readonly at: UnixMs;
  readonly bid: string;
  readonly ask: string;
  readonly knownAt: UnixMs;
}

/**
 * Appends ticks to the catalog with bounded memory: rows wait in a buffer until `flush` (the
 * recorder flushes every `flushTicks` rows and on a timer), which appends one gzip member per
 * (instrument, day) with one write each. Files rotate by the UTC day of the tick's time.
 *
 * Resumable: `open` cuts the torn tail of each instrument's newest file (a flush writes the days
 * of its rows in order, so only the newest file can have been cut) and reads back the time of the
 * last tick kept. A tick at or before an instrument's last time is not added (the snapshot a
 * reconnected stream starts with, or a stream that went back): the files stay in time order and
 * nothing is recorded twice. Times are compared as v20 wrote them, so two ticks within one
 * millisecond are both kept.
 */
export class TickWriter {
  readonly repaired: { file: string; bytes: number }[] = [];
  /** Per instrument: the last tick kept, its ms and its time as written (v20 times go below the ms). */
  readonly #last = new Map<string, { at: UnixMs; time: string }>();
  readonly #buffer = new Map<string, TickRow[]>();
  #buffered = 0;
  /** Ticks written since open. */
  written = 0;
  /** Ticks not added because they were not after the instrument's last one. */
  stale = 0;

  private constructor(readonly root: string) {}

  static open(root: string, instruments: readonly string[]): TickWriter {
    const w = new TickWriter(root);
    for (const instrument of instruments) {
      const files = tickDayFiles(root, instrument);
      // The last tick kept: in the newest file, or (when a cut left it without rows) an older one.
      for (let k = files.length - 1; k >= 0; k--) {
        const { file } = files[k]!;
        const r = lastRowOf(file, k === files.length - 1);
        if (r.bytes > 0) w.repaired.push({ file, bytes: r.bytes });
        if (r.row !== undefined) {
          w.#last.set(instrument, {
            at: parseTickRow(r.row, file, r.line).at,
            time: r.row.slice(0, r.row.indexOf(',')),
          });
          break;
        }
      }
    }
    return w;
  }

  /** The time of the instrument's last tick kept (recorded or buffered), -Infinity when none. */
  last(instrument: string): UnixMs {
    return this.#last.get(instrument)?.at ?? -Infinity;
  }

  get buffered(): number {
    return this.#buffered;
  }

  /**
   * Buffers a tick; false (and not added) when it is not after the instrument's last one: an
   * earlier ms, or the same ms and a time text not after the last's (the same tick again; two
   * ticks within one ms differ in the digits below it).
   */
  add(instrument: string, row: TickRow): boolean {
    const last = this.#last.get(instrument);
    if (last !== undefined && (row.at < last.at || (row.at === last.at && !(row.time > last.time)))) {
      this.stale++;
      return false;
    }
    this.#last.set(instrument, { at: row.at, time: row.time });
    let list = this.#buffer.get(instrument);
    if (!list) this.#buffer.set(instrument, (list = []));
    list.push(row);
    this.#buffered++;
    return true;
  }

  /** Writes every buffered tick (one gzip member per instrument and day); returns how many. */
  flush(): number {
    let n = 0;
    for (const [instrument, rows] of this.#buffer) {
      let i = 0;
      while (i < rows.length) {
        const day = dayOf(rows[i]!.at);
        let j = i;
        let text = '';
        while (j < rows.length && dayOf(rows[j]!.at) === day) {
          const r = rows[j]!;
          text += `${r.time},${r.bid},${r.ask},${r.knownAt}\n`;
          j++;
        }
        const dir = ticksDir(this.root, instrument);
        mkdirSync(dir, { recursive: true });
        const fd = openSync(join(dir, `${day}.csv.gz`), 'a');
        try {
          if (fstatSync(fd).size === 0) text = `${TICK_HEADER}\n${text}`;
          writeSync(fd, gzipSync(text));
        } finally {
          closeSync(fd);
        }
        n += j - i;
        i = j;
      }
    }
    this.#buffer.clear();
    this.#buffered = 0;
    this.written += n;
    return n;
  }
}

export interface TickListing {
  readonly instrument: string;
  readonly days: number;
  readonly ticks: number;
  readonly first: UnixMs | null;
  readonly last: UnixMs | null;
  /** Day files whose tail is torn (the complete part is counted). */
  readonly torn: readonly string[];
}

/** What the catalog holds of recorded ticks, per instrument (reads every file, streamed: for `fxflow data list`). */
export function listTicks(root: string): TickListing[] {
  const out: TickListing[] = [];
  for (const instrument of tickInstruments(root)) {
    const files = tickDayFiles(root, instrument);
    if (files.length === 0) continue;
    let ticks = 0;
    let first: number | null = null;
    let last: number | null = null;
    const torn: string[] = [];
    for (const { file } of files) {
      let firstRow: string | undefined;
      let lastRow: string | undefined;
      const r = scanDayFile(file, (row) => {
        if (row === '' || row === TICK_HEADER) return;
        ticks++;
        firstRow ??= row;
        lastRow = row;
      });
      if (r.complete < r.size) torn.push(file);
      if (firstRow === undefined || lastRow === undefined) continue;
      first ??= parseTime(firstRow.slice(0, firstRow.indexOf(',')));
      last = parseTime(lastRow.slice(0, lastRow.indexOf(',')));
    }
    out.push({ instrument, days: files.length, ticks, first, last, torn });
  }
  return out;
}
