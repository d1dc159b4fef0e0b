import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  type BigIntStats,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { Candle } from '../../domain/candle.ts';
import {
  CacheDamage,
  CacheWriter,
  readBlocks,
  readTrailer,
  restamp,
  verifyBlocks,
  type CacheTrailer,
} from './cache-file.ts';
import { DataError } from './errors.ts';
import { detectFormat, openCandles, type ReadOptions } from './formats.ts';

/**
 * The decoded-candle cache: a candle file (a `--data` file, a catalog month file) is parsed once
 * and its candles kept as columns of float64 in a binary file (cache-file.ts); later reads take
 * them from there a block at a time, with no parsing. Only a file that decodes whole is cached: a
 * period's reader checks the rows outside the period for their time only, so a file with a bad
 * row outside the period is read as before, every time.
 *
 * **Where.** `<catalog>/.cache/candles/` (for `--data` files: the configured catalog's), one
 * `<hash>.fxc` per source file and set of read options; `FXFLOW_DATA_CACHE` names another folder,
 * or `off` turns the cache off. The default catalog folder (data/catalog) is git-ignored.
 *
 * **Keyed** by the source's absolute path and every read option that changes the decoded candles
 * (instrument, granularity, format, pip location, spread model, crossed quotes, one-sided refusal,
 * and any option added later: every field of ReadOptions but the period and the notices). The file
 * records the source's size, mtime, ctime, inode and SHA-256, and the decoder's version.
 *
 * **Checked on every use**, cheaply: the source's size, mtime, ctime and inode must equal the
 * recorded ones, and its last change must be at least RACY_MS before its bytes were hashed;
 * otherwise its bytes are hashed again (SHA-256) and must equal the recorded hash (then the file is
 * stamped with the new times). ctime cannot be set back by a user (`touch -d` sets mtime and moves
 * ctime forward), so an edit that keeps the size and restores the mtime is still seen; the margin
 * covers an edit within the file system's timestamp granularity of the hashing ("racy" files,
 * as git calls them). A cache that does not match is rebuilt, never read.
 *
 * **Written safely**: decoded into `<name>.<pid>.<random>.tmp` while the run reads the source, renamed into
 * place once complete. Each block of candles carries a CRC-32 checked when it is read, and the
 * trailer (written last) its own: a file cut short by `kill -9` or a flipped bit is damaged, never
 * valid. A block found damaged mid-run: the candles before it were good; the run goes on from the
 * source (the rest of it), rebuilding the cache.
 */

/** Bumped when the decoders change what they make of a file: every older cache is rebuilt. */
export const DECODER_VERSION = 2;
/** A source changed less than this before it was hashed is hashed again on use. */
export const RACY_MS = 2_000;
const EXT = '.fxc';

/** The cache folder for a catalog root, or undefined when `FXFLOW_DATA_CACHE=off`. */
export function cacheDirFor(catalogRoot: string): string | undefined {
  const env = process.env.FXFLOW_DATA_CACHE;
  if (env === 'off' || env === '0') return undefined;
  if (env !== undefined && env !== '') return resolve(env);
  return join(resolve(catalogRoot), '.cache', 'candles');
}

/** Canonical JSON of the read options that change what a file decodes to. */
export function optionsKey(o: ReadOptions): string {
  const { from: _f, to: _t, notices: _n, ...rest } = o;
  return canonical(rest);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The cache file of a source and its read options. */
export function cacheFileOf(dir: string, source: string, o: ReadOptions): string {
  const h = createHash('sha256')
    .update(`${resolve(source)}\n${optionsKey(o)}`)
    .digest('hex');
  return join(dir, `${h.slice(0, 32)}${EXT}`);
}

/** SHA-256 of a file's bytes, read in 1 MiB chunks. */
export function hashFile(path: string): string {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      h.update(buf.subarray(0, got));
    }
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

type Stamp = Pick<CacheTrailer, 'size' | 'mtimeNs' | 'ctimeNs' | 'ino'>;
const stampOf = (st: BigIntStats): Stamp => ({
  size: Number(st.size),
  mtimeNs: String(st.mtimeNs),
  ctimeNs: String(st.ctimeNs),
  ino: Number(st.ino),
});
const sameStamp = (a: Stamp, b: Stamp): boolean =>
  a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;

/** How a cache file stands against its source. */
export type CacheState =
  | { readonly kind: 'fresh'; readonly trailer: CacheTrailer; readonly fd: number; readonly hashed: boolean }
  | { readonly kind: 'stale' | 'damaged' | 'missing'; readonly why: string; readonly trailer?: CacheTrailer };

/**
 * Whether the cache file holds the source as the options decode it (see the module's TSDoc).
 * `fresh` comes with the open file. `hashOnly` skips the stamp shortcut (data check).
 */
export function cacheState(
  file: string,
  source: string,
  o: ReadOptions | undefined,
  hashAlways = false,
): CacheState {
  if (!existsSync(file)) return { kind: 'missing', why: 'not built yet' };
  let t: CacheTrailer;
  let fd: number;
  try {
    ({ trailer: t, fd } = readTrailer(file));
  } catch (e) {
    return { kind: 'damaged', why: (e as Error).message };
  }
  const keep = (s: CacheState): CacheState => {
    if (s.kind !== 'fresh') closeSync(fd);
    return s;
  };
  if (t.version !== DECODER_VERSION)
    return keep({ kind: 'stale', why: `decoder version ${t.version}, now ${DECODER_VERSION}`, trailer: t });
  if (o !== undefined && (t.source !== resolve(source) || t.options !== optionsKey(o)))
    return keep({ kind: 'stale', why: 'made for another file or other options', trailer: t });
  let st: BigIntStats;
  try {
    st = statSync(t.source, { bigint: true });
  } catch {
    return keep({ kind: 'stale', why: `its source ${t.source} is gone`, trailer: t });
  }
  const now = stampOf(st);
  const changed = Number((st.mtimeNs > st.ctimeNs ? st.mtimeNs : st.ctimeNs) / 1_000_000n);
  if (!hashAlways && sameStamp(now, t) && changed < t.hashedAt - RACY_MS)
    return { kind: 'fresh', trailer: t, fd, hashed: false };
  if (now.size !== t.size)
    return keep({ kind: 'stale', why: `the source is ${now.size} bytes, was ${t.size}`, trailer: t });
  const hashedAt = Date.now();
  const sha256 = hashFile(t.source);
  if (sha256 !== t.sha256)
    return keep({ kind: 'stale', why: 'the source was edited (its SHA-256 differs)', trailer: t });
  // Same bytes: stamp the file with the source's times so the next use need not hash again.
  if (!sameStamp(now, t) || t.hashedAt <= changed + RACY_MS) {
    const next = { ...t, ...now, hashedAt };
    try {
      restamp(file, next);
      t = next;
    } catch {
      // A read-only cache: it stays valid, checked by its hash each time.
    }
  }
  return { kind: 'fresh', trailer: t, fd, hashed: true };
}

/** Counters of what the cache did (for the bench and tests). */
export const cacheStats = { hits: 0, builds: 0, rebuilds: 0, damagedBlocks: 0 };

/**
 * The candles of one source file in [o.from, o.to), from its cache when that is fresh, else
 * decoded from the file (and the cache built on the way). Errors in the file are the decoder's,
 * word for word: a file that fails to decode leaves no cache. `dir` undefined: no cache.
 */
export function cachedCandles(
  path: string,
  o: ReadOptions,
  dir: string | undefined,
): AsyncIterable<readonly Candle[]> {
  if (dir === undefined || o.notices !== undefined) return openCandles(path, o);
  let st;
  try {
    st = statSync(path);
  } catch {
    return openCandles(path, o); // the reader's own error
  }
  if (st.isDirectory()) {
    const files = readdirSync(path)
      .filter((f) => !f.startsWith('.'))
      .sort()
      .map((f) => join(path, f));
    return (async function* () {
      for (const f of files) yield* cachedCandles(f, o, dir);
    })();
  }
  return fromCache(resolve(path), o, dir);
}

async function* fromCache(path: string, o: ReadOptions, dir: string): AsyncIterable<readonly Candle[]> {
  const from = o.from ?? -Infinity;
  const to = o.to ?? Infinity;
  const file = cacheFileOf(dir, path, o);
  const state = cacheState(file, path, o);
  if (state.kind === 'fresh') {
    cacheStats.hits++;
    let last = -Infinity;
    try {
      for (const batch of readBlocks(file, state.fd, state.trailer, from, to)) {
        last = batch[batch.length - 1]!.time;
        yield batch;
      }
      return;
    } catch (e) {
      if (!(e instanceof CacheDamage)) throw e;
      cacheStats.damagedBlocks++;
      // The candles delivered so far passed their checks; the rest comes from the source.
      yield* build(path, o, dir, file, Math.max(from, last + 1), to);
      return;
    }
  }
  if (state.kind !== 'missing') cacheStats.rebuilds++;
  yield* build(path, o, dir, file, from, to);
}

/**
 * Decodes the whole source (the cache holds every candle, whatever the period), writes each batch
 * to the cache's temporary file and hands on the candles of [from, to). Renamed into place only
 * when the source was read to its end without error.
 */
async function* build(
  path: string,
  o: ReadOptions,
  dir: string,
  file: string,
  from: number,
  to: number,
): AsyncIterable<readonly Candle[]> {
  cacheStats.builds++;
  // The decode does not depend on the period: every row is read and checked either way.
  const { from: _f, to: _t, ...whole } = o;
  const format = o.format ?? detectFormat(path);
  let writer: CacheWriter | undefined;
  // Unique per writer: worker threads share a pid.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writer = new CacheWriter(tmp);
  } catch {
    writer = undefined; // a folder we cannot write: read the source as before
  }
  // The source's stamp and hash before its decode; a source changed while it is read leaves no cache.
  const before = statSync(path, { bigint: true });
  const hashedAt = Date.now();
  const sha256 = writer ? hashFile(path) : '';
  let complete = false;
  let failed = false;
  let last = -Infinity;
  try {
    try {
      for await (const batch of openCandles(path, { ...whole, format })) {
        writer?.add(batch);
        if (batch.length === 0) continue;
        if (batch[0]!.time >= from && batch[batch.length - 1]!.time < to) {
          last = batch[batch.length - 1]!.time;
          yield batch;
        } else {
          const part = batch.filter((c) => c.time >= from && c.time < to);
          if (part.length > 0) {
            last = part[part.length - 1]!.time;
            yield part;
          }
        }
      }
      complete = true;
    } catch (e) {
      if (!(e instanceof DataError)) throw e;
      failed = true;
    }
  } finally {
    if (writer) {
      let kept = false;
      if (complete) {
        try {
          const after = statSync(path, { bigint: true });
          const changed = Number(
            (after.mtimeNs > after.ctimeNs ? after.mtimeNs : after.ctimeNs) / 1_000_000n,
          );
          // Same stamp before and after the read; within the clock's granularity of the hash, the same bytes too.
          const same =
            sameStamp(stampOf(before), stampOf(after)) &&
            (changed < hashedAt - RACY_MS || hashFile(path) === sha256);
          if (same) {
            writer.finish({
              version: DECODER_VERSION,
              source: path,
              options: optionsKey(o),
              instrument: o.instrument,
              granularity: o.granularity,
              ...stampOf(before),
              sha256,
              hashedAt,
            });
            renameSync(tmp, file);
            kept = true;
          }
        } catch {
          // a full disk, a read-only folder: no cache this time
        }
      }
      if (!kept) {
        writer.abandon();
        rmSync(tmp, { force: true });
      }
    }
  }
  if (failed) {
    // The whole file does not decode. The reader of a period checks the rows outside it for their
    // time only, so the period may still read: it is read as before (its error, if any, is the
    // reader's own), from the first candle not yet handed out, and nothing is cached.
    yield* openCandles(path, {
      ...o,
      format,
      ...(last > -Infinity ? { from: Math.max(from, last + 1) } : {}),
    });
  }
}

/** One cache file as `data list` and `data check` show it. */
export interface CacheEntry {
  readonly file: string;
  readonly bytes: number;
  readonly state: CacheState['kind'];
  readonly why?: string;
  readonly trailer?: CacheTrailer;
}

/**
 * The cache files of a folder and how each stands against its source. `verify`: every block's
 * CRC is read and the source hashed (data check); otherwise the trailer and the stamp (data list).
 */
export function listCache(dir: string | undefined, verify = false): CacheEntry[] {
  if (dir === undefined || !existsSync(dir)) return [];
  const out: CacheEntry[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith(EXT))
    .sort()) {
    const file = join(dir, name);
    const bytes = statSync(file).size;
    if (verify) {
      try {
        verifyBlocks(file);
      } catch (e) {
        out.push({ file, bytes, state: 'damaged', why: (e as Error).message });
        continue;
      }
    }
    const s = cacheState(file, '', undefined, verify);
    if (s.kind === 'fresh') {
      closeSync(s.fd);
      out.push({ file, bytes, state: 'fresh', trailer: s.trailer });
    } else out.push({ file, bytes, state: s.kind, why: s.why, ...(s.trailer ? { trailer: s.trailer } : {}) });
  }
  return out;
}
