import { closeSync, existsSync, mkdirSync, openSync, rmdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A run-folder file that cannot be written (disk full, permissions, a folder that vanished). */
export class RunFileError extends Error {
  readonly code = 'RUN_FILE' as const;
  constructor(path: string, cause: unknown) {
    const code = (cause as { code?: string }).code;
    const why = code ?? (cause as Error).message;
    const hint =
      code === 'ENOSPC'
        ? 'free some disk space, '
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? 'the folder is not writable: '
          : '';
    super(`cannot write ${path} (${why}): ${hint}choose another folder with --runs-dir, or pass --no-save`, {
      cause,
    });
    this.name = 'RunFileError';
  }
}

/**
 * Creates a run folder and the folders above it that are missing, one level at a time. Not
 * `mkdirSync(…, { recursive: true })`: on some file systems (procfs) Node's recursive mkdir loops for
 * ever on a parent it cannot create. Throws RunFileError naming the folder. Returns the folders it
 * made, the deepest first (`dropRunDir` takes them away again when the run is refused).
 */
export function makeRunDir(dir: string): string[] {
  const missing: string[] = [];
  let d = resolve(dir);
  while (!existsSync(d)) {
    missing.push(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  try {
    if (!statSync(d).isDirectory()) throw Object.assign(new Error(`${d} is a file`), { code: 'ENOTDIR' });
    for (let i = missing.length - 1; i >= 0; i--) mkdirSync(missing[i]!);
  } catch (e) {
    throw new RunFileError(resolve(dir), e);
  }
  return missing;
}

/**
 * Removes a refused run's folder (`made[0]`, with what it holds) and the folders above it that
 * `makeRunDir` made for it, each only while empty: another run started at the same moment may have
 * put its own folder beside this one's.
 */
export function dropRunDir(made: readonly string[]): void {
  if (made.length === 0) return;
  rmSync(made[0]!, { recursive: true, force: true });
  for (let i = 1; i < made.length; i++) {
    try {
      rmdirSync(made[i]!);
    } catch {
      return; // not empty (or gone): what is above it stays too
    }
  }
}

/**
 * A line-per-record file written in large synchronous chunks (JSON Lines, CSV). Each line is
 * encoded straight into one reusable buffer, which is written once full: a backtest emits hundreds
 * of thousands of lines, and a stream write per line costs a Buffer, a queue entry and a callback
 * each. Writes are synchronous, so nothing piles up in memory when the disk is slower than the run,
 * and a failure surfaces at once, naming the file.
 */
export class LineFile {
  readonly path: string;
  readonly #fd: number;
  readonly #buf: Buffer;
  #used = 0;
  #closed = false;
  /** The most bytes held unwritten at once: never more than the chunk (a longer line is written at once). */
  peakBuffered = 0;

  /** `append`: adds to the file's end (a live run folder continued by a restart), else a new file. */
  constructor(path: string, chunk = 1 << 20, append = false) {
    this.path = path;
    this.#buf = Buffer.allocUnsafe(Math.max(8, chunk));
    try {
      this.#fd = openSync(path, append ? 'a' : 'w');
    } catch (e) {
      throw new RunFileError(path, e);
    }
  }

  /** Adds one line (without its newline). */
  line(text: string): void {
    const buf = this.#buf;
    // UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units).
    if (this.#used + text.length * 3 + 1 > buf.length) {
      this.flush();
      if (text.length * 3 + 1 > buf.length) {
        this.#write(Buffer.from(`${text}\n`, 'utf8'));
        return;
      }
    }
    this.#used += buf.write(text, this.#used, 'utf8');
    buf[this.#used++] = 10;
    if (this.#used > this.peakBuffered) this.peakBuffered = this.#used;
  }

  /** Writes what is gathered. */
  flush(): void {
    if (this.#used === 0) return;
    const n = this.#used;
    this.#used = 0;
    this.#write(this.#buf.subarray(0, n));
  }

  #write(bytes: Uint8Array): void {
    try {
      // A regular file takes the whole buffer at once; the loop covers a short write all the same.
      for (let off = 0; off < bytes.length;) off += writeSync(this.#fd, bytes, off, bytes.length - off);
    } catch (e) {
      throw new RunFileError(this.path, e);
    }
  }

  /** Writes the rest and closes the file (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.flush();
    } finally {
      closeSync(this.#fd);
    }
  }
}
