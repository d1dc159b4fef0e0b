import { closeSync, openSync, writeSync } from 'node:fs';

/** A run-folder file that cannot be written (disk full, permissions, a folder that vanished). */
export class RunFileError extends Error {
  readonly code = 'RUN_FILE' as const;
  constructor(path: string, cause: unknown) {
    const why = (cause as { code?: string; message?: string }).code ?? (cause as Error).message;
    super(`cannot write ${path} (${why}): free some disk space or choose another folder with --runs-dir, or pass --no-save`, { cause });
    this.name = 'RunFileError';
  }
}

/**
 * A line-per-record file written in large synchronous chunks (JSON Lines, CSV). Lines are gathered
 * into one string and written once it reaches `chunk` characters: a backtest emits hundreds of
 * thousands of lines, and a stream write per line costs a Buffer, a queue entry and a callback
 * each. Writes are synchronous, so nothing piles up in memory when the disk is slower than the
 * run, and a failure surfaces at once, naming the file.
 */
export class LineFile {
  readonly path: string;
  readonly #fd: number;
  readonly #chunk: number;
  #pending = '';
  #closed = false;

  constructor(path: string, chunk = 1 << 20) {
    this.path = path;
    this.#chunk = chunk;
    try {
      this.#fd = openSync(path, 'w');
    } catch (e) {
      throw new RunFileError(path, e);
    }
  }

  /** Adds one line (without its newline). */
  line(text: string): void {
    this.#pending += text;
    this.#pending += '\n';
    if (this.#pending.length >= this.#chunk) this.flush();
  }

  /** Writes what is gathered. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending;
    this.#pending = '';
    try {
      // A regular file takes the whole buffer at once; the loop covers a short write all the same.
      const bytes = Buffer.from(text, 'utf8');
      for (let off = 0; off < bytes.length; ) off += writeSync(this.#fd, bytes, off, bytes.length - off);
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
