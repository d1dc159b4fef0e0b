import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Granularity } from '../domain/granularity.ts';
import type { SharedSeries } from './shared-series.ts';

const MAGIC = 'FXFLOWS1';

/**
 * SHA-256 of the catalog month files (`YYYY-MM.csv`) of a series that overlap [from, to): their
 * names and contents. Undefined when the catalog holds none (nothing to cache).
 */
export function catalogSourceHash(
  root: string,
  instrument: string,
  granularity: string,
  from: number,
  to: number,
): string | undefined {
  const dir = join(root, instrument, granularity);
  if (!existsSync(dir)) return undefined;
  const first = new Date(from).toISOString().slice(0, 7);
  const last = new Date(to - 1).toISOString().slice(0, 7);
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}-\d{2}\.csv$/.test(f) && f.slice(0, 7) >= first && f.slice(0, 7) <= last)
    .sort();
  if (files.length === 0) return undefined;
  const h = createHash('sha256');
  for (const f of files) h.update(`${f}\n`).update(readFileSync(join(dir, f)));
  return h.digest('hex');
}

/** SHA-256 of a file, or of every file of a folder (names and contents, sorted). */
export function fileSourceHash(path: string): string {
  const h = createHash('sha256');
  if (statSync(path).isDirectory()) {
    for (const f of readdirSync(path).sort()) {
      const p = join(path, f);
      if (statSync(p).isFile()) h.update(`${f}\n`).update(readFileSync(p));
    }
  } else h.update(readFileSync(path));
  return h.digest('hex');
}

/**
 * A decoded series from the binary cache beside the catalog, or decoded now and written there.
 * The file name carries the series, the period and the hash of the source files, so an edited or
 * re-imported source is decoded again (old files are simply no longer read).
 * Format: 'FXFLOWS1', uint32 LE count n, then time, at (n float64 each), prices (8n float64),
 * volume (n float64), complete (n uint8), all little-endian.
 */
export async function cachedSeries(
  dir: string,
  key: { instrument: string; granularity: Granularity; from: number; to: number; sourceHash: string },
  decode: () => Promise<SharedSeries>,
): Promise<{ series: SharedSeries; hit: boolean }> {
  const file = join(
    dir,
    `${key.instrument}-${key.granularity}-${key.from}-${key.to}-${key.sourceHash.slice(0, 20)}.bin`,
  );
  if (existsSync(file)) {
    const s = readSeries(file, key.instrument, key.granularity);
    if (s) return { series: s, hit: true };
  }
  const s = await decode();
  try {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, encode(s));
    renameSync(tmp, file);
  } catch {
    // A read-only catalog: no cache, the sweep still runs.
  }
  return { series: s, hit: false };
}

function encode(s: SharedSeries): Buffer {
  const n = s.length;
  const head = Buffer.alloc(12);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(n, 8);
  const part = (a: Float64Array | Uint8Array, len: number): Buffer =>
    Buffer.from(new Uint8Array(a.buffer, a.byteOffset, len * a.BYTES_PER_ELEMENT).slice());
  return Buffer.concat([
    head,
    part(s.time, n),
    part(s.at, n),
    part(s.prices, 8 * n),
    part(s.volume, n),
    part(s.complete, n),
  ]);
}

function readSeries(file: string, instrument: string, granularity: Granularity): SharedSeries | undefined {
  const b = readFileSync(file);
  if (b.length < 12 || b.toString('latin1', 0, 8) !== MAGIC) return undefined;
  const n = b.readUInt32LE(8);
  if (b.length !== 12 + n * (8 * 11 + 1)) return undefined; // cut short: decode again
  let off = 12;
  const f64 = (len: number): Float64Array => {
    const out = new Float64Array(new SharedArrayBuffer(Math.max(1, len) * 8));
    new Uint8Array(out.buffer).set(b.subarray(off, off + len * 8));
    off += len * 8;
    return out;
  };
  const time = f64(n);
  const at = f64(n);
  const prices = f64(8 * n);
  const volume = f64(n);
  const complete = new Uint8Array(new SharedArrayBuffer(Math.max(1, n)));
  complete.set(b.subarray(off, off + n));
  return { instrument, granularity, length: n, time, at, prices, volume, complete };
}
