import { createReadStream } from 'node:fs';
import { openBytes, packingOf } from './compressed.ts';
import { DataError } from './errors.ts';

/** A batch of complete lines and the 1-based number of the first one. */
export interface LineBatch {
  readonly lines: string[];
  readonly first: number;
}

/** The longest line (in bytes, its line end not counted) a data file may have unless FXFLOW_MAX_LINE_BYTES says otherwise: 1 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 1 << 20;

/** The line-length cap in force: `FXFLOW_MAX_LINE_BYTES` (a whole number of bytes, at least 64), else 1 MiB. */
export function maxLineBytes(): number {
  const env = process.env.FXFLOW_MAX_LINE_BYTES;
  if (env === undefined || env.trim() === '') return DEFAULT_MAX_LINE_BYTES;
  const n = Number(env.trim());
  if (!Number.isInteger(n) || n < 64) {
    throw Object.assign(
      new Error(
        `FXFLOW_MAX_LINE_BYTES='${env}' is not a number of bytes: give a whole number of at least 64 (the default is ${DEFAULT_MAX_LINE_BYTES}, 1 MiB)`,
      ),
      { code: 'USAGE' },
    );
  }
  return n;
}

/** A size in bytes as people read it: `1 MiB`, `64 KiB`, `1,500 bytes`. */
function size(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)} KiB`;
  return `${n.toLocaleString('en-US')} bytes`;
}

/** The error of a line (or a JSON object) longer than the cap, naming the file, the line, the cap and how to raise it. */
export function lineTooLong(file: string, line: number, cap: number, what = 'line'): DataError {
  return new DataError(
    file,
    line,
    '',
    `this ${what} is longer than ${size(cap)} and has not ended: the file is not rows of text, or its rows are not separated by line ends. fxflow reads a ${what} of at most ${size(cap)}; if the file's ${what}s really are longer, raise the cap with FXFLOW_MAX_LINE_BYTES=<bytes> (e.g. FXFLOW_MAX_LINE_BYTES=${cap * 4})`,
  );
}

/**
 * Streams a text file (plain, gzip or a zip of one file) as batches of lines, one batch per chunk read (64 KiB), carrying a partial
 * last line over to the next chunk. Handles `\r\n` and a last line without a newline. Memory stays
 * at a chunk or two whatever the file's size.
 *
 * A line that spans chunks is kept as a list of its pieces and joined once, when its line end
 * comes: time is linear in the file's size however long the line (joining the carry to every
 * chunk made a 64 MB line cost the square of its length). A line longer than `maxLine` bytes
 * (FXFLOW_MAX_LINE_BYTES, default 1 MiB) is an error as soon as that many bytes of it were read,
 * naming the file and the line: a file without line ends (or a packed file that unpacks into one
 * huge line) is refused within a megabyte, not read whole into memory.
 *
 * The chunk is small on purpose: a chunk's lines, and the candles read from them, are alive until
 * the chunk is done, and every young-generation collection in that time copies them. With 1 MiB
 * chunks (about 15,000 rows) a year of M1 candles from the catalog took 52 scavenges of 4-7 MB
 * survivors each (0.41 s of pauses) and the whole backtest 2.3 s; with 64 KiB it takes 1.7 s
 * (16 KiB and 256 KiB were both slower: interleaved runs, README Performance).
 */
export async function* readLines(
  path: string,
  chunkBytes = 1 << 16,
  maxLine = maxLineBytes(),
): AsyncIterable<LineBatch> {
  // The unfinished line: its pieces, their length in UTF-16 units, and in bytes once it may matter.
  const pieces: string[] = [];
  let units = 0;
  let bytes = -1;
  let lineNo = 1;
  // A line of n UTF-16 units is n to 3n bytes: its bytes are counted only when 3n could pass the cap.
  const tooLong = (s: string): boolean => s.length * 3 > maxLine && Buffer.byteLength(s) > maxLine;
  const carry = (piece: string): void => {
    pieces.push(piece);
    units += piece.length;
    if (bytes >= 0) bytes += Buffer.byteLength(piece);
    else if (units * 3 > maxLine) bytes = pieces.reduce((n, p) => n + Buffer.byteLength(p), 0);
    if (bytes > maxLine) throw lineTooLong(path, lineNo, maxLine);
  };
  // gzip and zip (one file) are unpacked as they stream (compressed.ts); plain files as before.
  const stream =
    packingOf(path) === 'plain'
      ? createReadStream(path, { encoding: 'utf8', highWaterMark: chunkBytes })
      : openBytes(path, chunkBytes).setEncoding('utf8');
  for await (const chunk of stream as AsyncIterable<string>) {
    if (chunk.indexOf('\n') < 0) {
      carry(chunk);
      continue;
    }
    let text = chunk;
    if (pieces.length > 0) {
      pieces.push(chunk);
      text = pieces.join('');
      pieces.length = 0;
      units = 0;
      bytes = -1;
    }
    const lines = text.split('\n');
    const rest = lines.pop()!;
    for (let i = 0; i < lines.length; i++) {
      let l = lines[i]!;
      if (l.length > 0 && l.charCodeAt(l.length - 1) === 13) lines[i] = l = l.slice(0, -1);
      if (tooLong(l)) throw lineTooLong(path, lineNo + i, maxLine);
    }
    yield { lines, first: lineNo };
    lineNo += lines.length;
    if (rest.length > 0) carry(rest);
  }
  if (pieces.length > 0) {
    let last = pieces.join('');
    if (last.charCodeAt(last.length - 1) === 13) last = last.slice(0, -1);
    if (tooLong(last)) throw lineTooLong(path, lineNo, maxLine);
    yield { lines: [last], first: lineNo };
  }
}
