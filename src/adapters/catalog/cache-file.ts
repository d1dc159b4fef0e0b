import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { Candle } from '../../domain/candle.ts';
import type { Granularity } from '../../domain/granularity.ts';

/**
 * The binary file of one decoded candle source (`*.fxc`, see candle-cache.ts for when it is used).
 *
 * Layout, little-endian:
 * - blocks of up to BLOCK candles (every block but the last holds BLOCK), each a head of `count`,
 *   `flags` and `crc` (uint32 each: the CRC-32 of the flags and the columns, then a zero uint32) and
 *   its columns of `count` float64 each: time, at, bid o, h, l, c, then (unless the block is
 *   one-sided: flag 1, every ask equal to its bid) ask o, h, l, c, then volume. One-sided data at
 *   no spread takes 56 bytes a candle instead of 88.
 * - the trailer: JSON (CacheTrailer, with each block's offset), its CRC-32 (uint32), its byte length
 *   (uint32), then MAGIC.
 *
 * The trailer is written last: a file cut short anywhere has no MAGIC at its end, or a trailer
 * whose CRC or sizes do not add up, and is never taken as valid. A flipped bit in a block fails
 * that block's CRC when it is read.
 */
export const BLOCK = 1024;
const COLUMNS = 11;
/** Columns of a one-sided block: time, at, o, h, l, c, volume. */
const ONE_SIDED = 7;
const HEAD = 16;
const MAGIC = 'FXFCACH2';
const TAIL = 8 + MAGIC.length;

/** What the trailer records: the source it was decoded from and the options that decided the decode. */
export interface CacheTrailer {
  /** The decoder's version: a cache of another version is rebuilt. */
  readonly version: number;
  /** The source file (absolute path). */
  readonly source: string;
  /** Every read option that changes the decoded candles, canonical JSON. */
  readonly options: string;
  readonly instrument: string;
  readonly granularity: Granularity;
  /** The source when it was hashed: size, mtime and ctime (ns, as text), inode, SHA-256 of its bytes. */
  readonly size: number;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
  readonly ino: number;
  readonly sha256: string;
  /** Wall time (ms) when the source's bytes were read to be hashed (see candle-cache.ts, "racy"). */
  readonly hashedAt: number;
  readonly rows: number;
  /** Open time of the first and last candle (NaN as null when there are none). */
  readonly first: number | null;
  readonly last: number | null;
  /** Byte offset of each block; the trailer starts where the last one ends. */
  readonly blocks: readonly number[];
  /** Whether the last block is one-sided (its size depends on it). */
  readonly lastOneSided: boolean;
}

/** A cache file that does not hold what it should: why, in a few words. */
export class CacheDamage extends Error {
  constructor(
    readonly file: string,
    why: string,
  ) {
    super(`${file}: ${why}`);
    this.name = 'CacheDamage';
  }
}

/** Writes a cache file block by block as candles come (bounded memory: one block of columns). */
export class CacheWriter {
  readonly #fd: number;
  readonly #cols = new Float64Array(COLUMNS * BLOCK);
  readonly #head = Buffer.alloc(HEAD);
  #n = 0;
  #at = 0;
  readonly #offsets: number[] = [];
  #lastOneSided = false;
  rows = 0;
  first: number | null = null;
  last: number | null = null;

  constructor(readonly path: string) {
    this.#fd = openSync(path, 'w');
  }

  add(batch: readonly Candle[]): void {
    const c = this.#cols;
    for (let i = 0; i < batch.length; i++) {
      const x = batch[i]!;
      const k = this.#n;
      c[k] = x.time;
      c[BLOCK + k] = x.at;
      c[2 * BLOCK + k] = x.bo;
      c[3 * BLOCK + k] = x.bh;
      c[4 * BLOCK + k] = x.bl;
      c[5 * BLOCK + k] = x.bc;
      c[6 * BLOCK + k] = x.ao;
      c[7 * BLOCK + k] = x.ah;
      c[8 * BLOCK + k] = x.al;
      c[9 * BLOCK + k] = x.ac;
      c[10 * BLOCK + k] = x.volume;
      if (this.first === null) this.first = x.time;
      this.last = x.time;
      this.rows++;
      if (++this.#n === BLOCK) this.#flush();
    }
  }

  #flush(): void {
    const n = this.#n;
    if (n === 0) return;
    this.#n = 0;
    const c = this.#cols;
    // One-sided when every ask is its bid, to the bit (Object.is: -0 and 0 are kept apart).
    let oneSided = true;
    for (let k = 0; k < 4 * BLOCK && oneSided; k += BLOCK) {
      for (let i = 0; i < n; i++) {
        if (!Object.is(c[2 * BLOCK + k + i], c[6 * BLOCK + k + i])) {
          oneSided = false;
          break;
        }
      }
    }
    const cols = oneSided ? [0, 1, 2, 3, 4, 5, 10] : [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    // The columns packed n apart.
    const packed = new Float64Array(cols.length * n);
    for (let j = 0; j < cols.length; j++)
      packed.set(c.subarray(cols[j]! * BLOCK, cols[j]! * BLOCK + n), j * n);
    const body = new Uint8Array(packed.buffer);
    const head = this.#head;
    head.fill(0);
    head.writeUInt32LE(n, 0);
    head.writeUInt32LE(oneSided ? 1 : 0, 4);
    head.writeUInt32LE(crc32(body, crc32(head.subarray(4, 8))), 8);
    this.#offsets.push(this.#at);
    this.#lastOneSided = oneSided;
    writeAll(this.#fd, head);
    writeAll(this.#fd, body);
    this.#at += HEAD + body.length;
  }

  /** Writes the last block and the trailer, and closes the file. */
  finish(trailer: Omit<CacheTrailer, 'rows' | 'first' | 'last' | 'blocks' | 'lastOneSided'>): void {
    try {
      this.#flush();
      writeTrailer(this.#fd, {
        ...trailer,
        rows: this.rows,
        first: this.first,
        last: this.last,
        blocks: this.#offsets,
        lastOneSided: this.#lastOneSided,
      });
    } finally {
      closeSync(this.#fd);
    }
  }

  /** Closes the file without finishing it (the caller removes it). */
  abandon(): void {
    try {
      closeSync(this.#fd);
    } catch {
      // already closed
    }
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number | null = null): void {
  for (let off = 0; off < bytes.length;)
    off += writeSync(fd, bytes, off, bytes.length - off, position === null ? null : position + off);
}

function writeTrailer(fd: number, t: CacheTrailer, position: number | null = null): void {
  const json = Buffer.from(JSON.stringify(t), 'utf8');
  const tail = Buffer.alloc(TAIL);
  tail.writeUInt32LE(crc32(json), 0);
  tail.writeUInt32LE(json.length, 4);
  tail.write(MAGIC, 8, 'latin1');
  writeAll(fd, json, position);
  writeAll(fd, tail, position === null ? null : position + json.length);
}

/** Where the blocks end (and the trailer starts), from the trailer: NaN when it does not add up. */
function blocksEnd(t: CacheTrailer): number {
  const b = t.blocks;
  if (!Array.isArray(b) || b.length !== Math.ceil(t.rows / BLOCK) || (b.length > 0 && b[0] !== 0))
    return Number.NaN;
  for (let i = 1; i < b.length; i++) if (!(b[i]! > b[i - 1]!)) return Number.NaN;
  if (b.length === 0) return 0;
  // The last block: its size follows from its count, one-sided or not; checked against its head when read.
  const n = t.rows - (b.length - 1) * BLOCK;
  return b[b.length - 1]! + HEAD + (t.lastOneSided ? ONE_SIDED : COLUMNS) * 8 * n;
}

/**
 * Reads a cache file's trailer and checks that the file's size is what the trailer says (a file
 * cut short or extended is damaged). Throws CacheDamage; the caller rebuilds.
 */
export function readTrailer(path: string, flags = 'r'): { trailer: CacheTrailer; fd: number } {
  const fd = openSync(path, flags);
  try {
    const size = fstatSync(fd).size;
    if (size < TAIL) throw new CacheDamage(path, 'shorter than its trailer (cut short)');
    const tail = Buffer.alloc(TAIL);
    readSync(fd, tail, 0, TAIL, size - TAIL);
    if (tail.toString('latin1', 8) !== MAGIC)
      throw new CacheDamage(path, 'no end mark (a write that was cut short, or not a cache file)');
    const len = tail.readUInt32LE(4);
    if (len > size - TAIL) throw new CacheDamage(path, 'trailer longer than the file');
    const json = Buffer.alloc(len);
    readSync(fd, json, 0, len, size - TAIL - len);
    if (crc32(json) !== tail.readUInt32LE(0)) throw new CacheDamage(path, 'trailer checksum mismatch');
    let t: CacheTrailer;
    try {
      t = JSON.parse(json.toString('utf8')) as CacheTrailer;
    } catch {
      throw new CacheDamage(path, 'trailer is not JSON');
    }
    if (!Number.isInteger(t.rows) || t.rows < 0 || blocksEnd(t) + len + TAIL !== size)
      throw new CacheDamage(path, `size ${size} does not match its ${t.rows} rows`);
    return { trailer: t, fd };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * Cuts the trailer off and writes a new one (the blocks stay). Cut by a crash, the file is damaged,
 * never wrong. Does nothing when the file at `path` no longer holds the same candles (another
 * process rebuilt it meanwhile).
 */
export function restamp(path: string, t: CacheTrailer): void {
  const { trailer: now, fd } = readTrailer(path, 'r+');
  try {
    if (
      now.sha256 !== t.sha256 ||
      now.rows !== t.rows ||
      now.options !== t.options ||
      now.source !== t.source
    )
      return;
    const end = blocksEnd(t);
    ftruncateSync(fd, end);
    writeTrailer(fd, t, end);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the candles of [from, to) (by open time) from an open cache file, a block at a time, each
 * block's CRC checked before any of its candles is handed out. Closes `fd` when done. A block that
 * fails its check throws CacheDamage (after the candles of the blocks before it were delivered:
 * they passed theirs).
 */
export function* readBlocks(
  path: string,
  fd: number,
  t: CacheTrailer,
  from: number,
  to: number,
): Generator<Candle[]> {
  const { instrument, granularity } = t;
  const offsets = t.blocks;
  const blocks = offsets.length;
  const cols = new Float64Array(COLUMNS * BLOCK);
  const bytes = new Uint8Array(cols.buffer);
  const head = Buffer.alloc(HEAD);
  const probe = new Float64Array(1);
  const probeBytes = new Uint8Array(probe.buffer);
  try {
    // The first block that can hold `from`: the last whose first open time is <= from.
    let lo = 0;
    let hi = blocks;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      readSync(fd, probeBytes, 0, 8, offsets[mid]! + HEAD);
      if (probe[0]! <= from) lo = mid;
      else hi = mid;
    }
    for (let b = lo; b < blocks; b++) {
      const at = offsets[b]!;
      readSync(fd, head, 0, HEAD, at);
      const n = head.readUInt32LE(0);
      const flags = head.readUInt32LE(4);
      const expected = b === blocks - 1 ? t.rows - b * BLOCK : BLOCK;
      if (n !== expected || flags > 1 || head.readUInt32LE(12) !== 0)
        throw new CacheDamage(path, `block ${b} head damaged (${n} candles, flags ${flags})`);
      const oneSided = flags === 1;
      const len = (oneSided ? ONE_SIDED : COLUMNS) * 8 * n;
      if (at + HEAD + len !== (b + 1 < blocks ? offsets[b + 1]! : blocksEnd(t)))
        throw new CacheDamage(path, `block ${b} does not end where the next begins`);
      const got = readSync(fd, bytes, 0, len, at + HEAD);
      if (got !== len) throw new CacheDamage(path, `block ${b} cut short`);
      if (crc32(bytes.subarray(0, len), crc32(head.subarray(4, 8))) !== head.readUInt32LE(8))
        throw new CacheDamage(path, `block ${b} checksum mismatch`);
      // Columns sit n apart: time 0, at 1, bid 2-5, then ask 6-9 and volume 10, or volume 6 (one-sided: ask = bid).
      const ask = oneSided ? 2 * n : 6 * n;
      const vol = oneSided ? 6 * n : 10 * n;
      let i = 0;
      while (i < n && cols[i]! < from) i++;
      let end = i;
      while (end < n && cols[end]! < to) end++;
      if (end > i) {
        const out = new Array<Candle>(end - i);
        for (let k = i; k < end; k++) {
          out[k - i] = {
            kind: 'candle',
            instrument,
            granularity,
            time: cols[k]!,
            at: cols[n + k]!,
            bo: cols[2 * n + k]!,
            bh: cols[3 * n + k]!,
            bl: cols[4 * n + k]!,
            bc: cols[5 * n + k]!,
            ao: cols[ask + k]!,
            ah: cols[ask + n + k]!,
            al: cols[ask + 2 * n + k]!,
            ac: cols[ask + 3 * n + k]!,
            volume: cols[vol + k]!,
            complete: true,
          };
        }
        yield out;
      }
      if (end < n) return;
    }
  } finally {
    closeSync(fd);
  }
}

/** Reads every block and checks its CRC (for `fxflow data check`). Returns the rows read. */
export function verifyBlocks(path: string): { trailer: CacheTrailer; rows: number } {
  const { trailer, fd } = readTrailer(path);
  let rows = 0;
  for (const batch of readBlocks(path, fd, trailer, -Infinity, Infinity)) rows += batch.length;
  if (rows !== trailer.rows)
    throw new CacheDamage(path, `${rows} candles read, the trailer says ${trailer.rows}`);
  return { trailer, rows };
}
