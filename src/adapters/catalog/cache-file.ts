import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { Candle } from '../../domain/candle.ts';
import type { Granularity } from '../../domain/granularity.ts';

/**
 * The binary file of one decoded candle source (`*.fxc`, see candle-cache.ts for when it is used).
 *
 * Layout, little-endian:
 * - blocks of up to BLOCK candles, each `count` (uint32), `crc` (uint32: CRC-32 of the columns),
 *   then its columns: time[count], at[count], bo, bh, bl, bc, ao, ah, al, ac [count each],
 *   volume[count], all float64. Every block but the last holds BLOCK candles, so block k starts at
 *   k × BLOCK_BYTES and a reader seeks to a period without an index.
 * - the trailer: JSON (CacheTrailer), its CRC-32 (uint32), its byte length (uint32), then MAGIC.
 *
 * The trailer is written last: a file cut short anywhere has no MAGIC at its end, or a trailer
 * whose CRC or sizes do not add up, and is never taken as valid. A flipped bit in a block fails
 * that block's CRC when it is read.
 */
export const BLOCK = 1024;
const COLUMNS = 11;
const HEAD = 8;
export const BLOCK_BYTES = HEAD + COLUMNS * 8 * BLOCK;
const MAGIC = 'FXFCACH1';
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
  readonly #bytes = new Uint8Array(this.#cols.buffer);
  readonly #head = Buffer.alloc(HEAD);
  #n = 0;
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
    // A short (last) block is written packed: its columns are n long, moved down to sit together.
    let body: Uint8Array = this.#bytes;
    if (n < BLOCK) {
      const packed = new Float64Array(COLUMNS * n);
      for (let col = 0; col < COLUMNS; col++) packed.set(this.#cols.subarray(col * BLOCK, col * BLOCK + n), col * n);
      body = new Uint8Array(packed.buffer);
    }
    this.#head.writeUInt32LE(n, 0);
    this.#head.writeUInt32LE(crc32(body), 4);
    writeAll(this.#fd, this.#head);
    writeAll(this.#fd, body);
  }

  /** Writes the last block and the trailer, and closes the file. */
  finish(trailer: Omit<CacheTrailer, 'rows' | 'first' | 'last'>): void {
    try {
      this.#flush();
      writeTrailer(this.#fd, { ...trailer, rows: this.rows, first: this.first, last: this.last });
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

/** Writes all of `bytes` at `position`, or at the file's current position when it is null. */
function writeAll(fd: number, bytes: Uint8Array, position: number | null = null): void {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off, position === null ? null : position + off);
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

/** Bytes the blocks of `rows` candles take. */
function blocksBytes(rows: number): number {
  const full = Math.floor(rows / BLOCK);
  const rest = rows % BLOCK;
  return full * BLOCK_BYTES + (rest > 0 ? HEAD + COLUMNS * 8 * rest : 0);
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
    if (tail.toString('latin1', 8) !== MAGIC) throw new CacheDamage(path, 'no end mark (a write that was cut short, or not a cache file)');
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
    if (!Number.isInteger(t.rows) || t.rows < 0 || blocksBytes(t.rows) + len + TAIL !== size) throw new CacheDamage(path, `size ${size} does not match its ${t.rows} rows`);
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
    if (now.sha256 !== t.sha256 || now.rows !== t.rows || now.options !== t.options || now.source !== t.source) return;
    const end = blocksBytes(t.rows);
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
export function* readBlocks(path: string, fd: number, t: CacheTrailer, from: number, to: number): Generator<Candle[]> {
  const { instrument, granularity } = t;
  const blocks = Math.ceil(t.rows / BLOCK);
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
      readSync(fd, probeBytes, 0, 8, mid * BLOCK_BYTES + HEAD);
      if (probe[0]! <= from) lo = mid;
      else hi = mid;
    }
    for (let b = lo; b < blocks; b++) {
      const at = b * BLOCK_BYTES;
      readSync(fd, head, 0, HEAD, at);
      const n = head.readUInt32LE(0);
      const expected = b === blocks - 1 ? t.rows - b * BLOCK : BLOCK;
      if (n !== expected) throw new CacheDamage(path, `block ${b} says ${n} candles, expected ${expected}`);
      const len = COLUMNS * 8 * n;
      const got = readSync(fd, bytes, 0, len, at + HEAD);
      if (got !== len) throw new CacheDamage(path, `block ${b} cut short`);
      if (crc32(bytes.subarray(0, len)) !== head.readUInt32LE(4)) throw new CacheDamage(path, `block ${b} checksum mismatch`);
      // Columns of a short block sit n apart, of a full one BLOCK apart: both are n here.
      let i = 0;
      while (i < n && cols[i]! < from) i++;
      let end = i;
      while (end < n && cols[end]! < to) end++;
      if (end > i) {
        const out = new Array<Candle>(end - i);
        for (let k = i; k < end; k++) {
          out[k - i] = {
            kind: 'candle', instrument, granularity, time: cols[k]!, at: cols[n + k]!,
            bo: cols[2 * n + k]!, bh: cols[3 * n + k]!, bl: cols[4 * n + k]!, bc: cols[5 * n + k]!,
            ao: cols[6 * n + k]!, ah: cols[7 * n + k]!, al: cols[8 * n + k]!, ac: cols[9 * n + k]!,
            volume: cols[10 * n + k]!, complete: true,
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
  if (rows !== trailer.rows) throw new CacheDamage(path, `${rows} candles read, the trailer says ${trailer.rows}`);
  return { trailer, rows };
}
