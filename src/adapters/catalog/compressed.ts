import { closeSync, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip, createInflateRaw, gunzipSync, inflateRawSync } from 'node:zlib';
import { DataError } from './errors.ts';

/**
 * Data files read as they were downloaded: plain, gzip (`.gz`, every member) or a zip holding one
 * file (HistData's and Dukascopy's downloads). Known by their first bytes, not their names.
 * A zip is read from its central directory (the sizes and offsets of its entries) and the one
 * entry's bytes are inflated as they stream; a zip of several files is refused, naming them.
 */

export type Packing = 'plain' | 'gzip' | 'zip';

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const got = readSync(fd, buf, 0, length, position);
  return buf.subarray(0, got);
}

/** How a file is packed, by its magic bytes. */
export function packingOf(path: string): Packing {
  const fd = openSync(path, 'r');
  try {
    const b = readAt(fd, 0, 4);
    if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'gzip';
    if (b.length === 4 && b.readUInt32LE(0) === 0x04034b50) return 'zip';
    return 'plain';
  } finally {
    closeSync(fd);
  }
}

/** The one entry of a zip: where its bytes are and how they are stored. */
interface ZipEntry {
  readonly name: string;
  readonly method: number;
  readonly start: number;
  readonly compressed: number;
}

function zipEntry(path: string): ZipEntry {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    // The end-of-central-directory record: in the last 22 bytes, or before a comment of up to 64 KiB.
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = readAt(fd, size - tailLength, tailLength);
    let eocd = -1;
    for (let i = tail.length - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    if (eocd < 0)
      throw new DataError(
        path,
        0,
        'zip',
        'not a whole zip file (no end-of-central-directory record): download it again',
      );
    const count = tail.readUInt16LE(eocd + 10);
    const dirSize = tail.readUInt32LE(eocd + 12);
    const dirOffset = tail.readUInt32LE(eocd + 16);
    if (dirOffset === 0xffffffff || count === 0xffff)
      throw new DataError(path, 0, 'zip', 'a ZIP64 archive: unzip it and import the file inside');
    const dir = readAt(fd, dirOffset, dirSize);
    const entries: (ZipEntry & { local: number })[] = [];
    for (let p = 0, k = 0; k < count && p + 46 <= dir.length; k++) {
      if (dir.readUInt32LE(p) !== 0x02014b50)
        throw new DataError(path, 0, 'zip', 'a damaged central directory: download it again');
      const method = dir.readUInt16LE(p + 10);
      const compressed = dir.readUInt32LE(p + 20);
      const nameLength = dir.readUInt16LE(p + 28);
      const extra = dir.readUInt16LE(p + 30);
      const comment = dir.readUInt16LE(p + 32);
      const local = dir.readUInt32LE(p + 42);
      const name = dir.subarray(p + 46, p + 46 + nameLength).toString('utf8');
      p += 46 + nameLength + extra + comment;
      // Folders and the macOS resource forks a Finder zip adds hold no data.
      if (name.endsWith('/') || name.startsWith('__MACOSX/') || basename(name).startsWith('._')) continue;
      entries.push({ name, method, start: 0, compressed, local });
    }
    if (entries.length !== 1) {
      throw new DataError(
        path,
        0,
        'zip',
        entries.length === 0
          ? 'the zip holds no file'
          : `the zip holds ${entries.length} files (${entries
              .slice(0, 5)
              .map((e) => e.name)
              .join(
                ', ',
              )}${entries.length > 5 ? ', …' : ''}): fxflow reads a zip of one file; unzip it and import the files (or the folder)`,
      );
    }
    const e = entries[0]!;
    if (e.method !== 0 && e.method !== 8)
      throw new DataError(
        path,
        0,
        'zip',
        `${e.name} is compressed with method ${e.method}; fxflow reads stored and deflated entries: unzip it and import the file`,
      );
    const header = readAt(fd, e.local, 30);
    if (header.length < 30 || header.readUInt32LE(0) !== 0x04034b50)
      throw new DataError(path, 0, 'zip', `the local header of ${e.name} is damaged: download it again`);
    return {
      name: e.name,
      method: e.method,
      compressed: e.compressed,
      start: e.local + 30 + header.readUInt16LE(26) + header.readUInt16LE(28),
    };
  } finally {
    closeSync(fd);
  }
}

/** The file's bytes, unpacked as they stream (64 KiB chunks). */
export function openBytes(path: string, chunkBytes = 1 << 16): Readable {
  const packing = packingOf(path);
  if (packing === 'gzip')
    return createReadStream(path, { highWaterMark: chunkBytes }).pipe(
      createGunzip({ chunkSize: chunkBytes }),
    );
  if (packing === 'zip') {
    const e = zipEntry(path);
    if (e.compressed === 0) return Readable.from([]);
    const raw = createReadStream(path, {
      start: e.start,
      end: e.start + e.compressed - 1,
      highWaterMark: chunkBytes,
    });
    return e.method === 0 ? raw : raw.pipe(createInflateRaw({ chunkSize: chunkBytes }));
  }
  return createReadStream(path, { highWaterMark: chunkBytes });
}

/** The first `n` bytes of the file's unpacked text (for detecting its format and fields). */
export function headText(path: string, n = 4096): string {
  const packing = packingOf(path);
  const fd = openSync(path, 'r');
  try {
    if (packing === 'plain') return readAt(fd, 0, n).toString('utf8');
    // Enough packed bytes for n unpacked ones in any CSV; a partial stream inflates what it can.
    const packed =
      packing === 'zip'
        ? (() => {
            const e = zipEntry(path);
            return { bytes: readAt(fd, e.start, Math.min(e.compressed, 64 * 1024)), method: e.method };
          })()
        : { bytes: readAt(fd, 0, 64 * 1024), method: -1 };
    const opts = { finishFlush: 2 /* Z_SYNC_FLUSH: a cut stream is not an error */ };
    const out =
      packed.method === 0
        ? packed.bytes
        : packed.method === 8
          ? inflateRawSync(packed.bytes, opts)
          : gunzipSync(packed.bytes, opts);
    return out.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** What the file is, for messages: `a gzip file`, `eurusd.csv in a zip`. */
export function describePacking(path: string): string | undefined {
  const packing = packingOf(path);
  if (packing === 'gzip') return 'gzip';
  if (packing === 'zip') return `zip (${zipEntry(path).name})`;
  return undefined;
}
