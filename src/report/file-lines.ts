// A file's lines read 64 KiB at a time, for the report's readers of run-folder files (transactions,
// plots): a file of millions of lines is never one string in memory.
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/**
 * Calls `fn` with each line of a file (without its line end) and whether the file ended right after
 * it without a newline, reading 64 KiB at a time: a run of millions of transactions is never one
 * string in memory.
 */
export function forEachLine(path: string, fn: (line: string, n: number, cutShort: boolean) => void): void {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(64 * 1024);
    const dec = new StringDecoder('utf8');
    let rest = '';
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      const text = rest + dec.write(buf.subarray(0, got));
      let from = 0;
      for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', from)) {
        fn(text.slice(from, nl), ++n, false);
        from = nl + 1;
      }
      rest = text.slice(from);
    }
    rest += dec.end();
    if (rest !== '') fn(rest, ++n, true);
  } finally {
    closeSync(fd);
  }
}
