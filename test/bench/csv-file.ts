import { closeSync, openSync, writeSync } from 'node:fs';
import { syntheticBatches } from '../../src/adapters/catalog/synthetic.ts';

/**
 * Writes the first `n` generated EUR_USD M1 candles (seed 20240101, from 2019) as a one-sided
 * generic CSV (`time,o,h,l,c,volume`, the bid side at 5 decimals), the file a user would give to
 * `fxflow backtest --data`. Returns the number of rows written. Streamed: a 4M-row file takes a
 * few MB of memory to write.
 */
export function writeOneSidedCsv(path: string, n: number): number {
  const fd = openSync(path, 'w');
  let rows = 0;
  let text = 'time,o,h,l,c,volume\n';
  const years = Math.max(5, Math.ceil(n / 340_000));
  try {
    for (const batch of syntheticBatches({
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: Date.UTC(2019, 0, 1),
      to: Date.UTC(2019 + years, 0, 1),
      seed: 20240101,
    })) {
      for (const c of batch) {
        if (rows === n) break;
        text += `${new Date(c.time).toISOString().slice(0, 19)}Z,${c.bo.toFixed(5)},${c.bh.toFixed(5)},${c.bl.toFixed(5)},${c.bc.toFixed(5)},${c.volume}\n`;
        rows++;
      }
      if (text.length > 1 << 20) {
        writeSync(fd, text);
        text = '';
      }
      if (rows === n) break;
    }
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  if (rows < n) throw new Error(`the generator made ${rows} candles, fewer than ${n}`);
  return rows;
}

/** The same candles as a plain Node program would read them: the floor the whole-process bench compares with. */
if (process.argv[1] === import.meta.filename && process.argv[2]) {
  const n = writeOneSidedCsv(process.argv[2], Number(process.argv[3] ?? 1_000_000));
  console.log(`${n} rows written to ${process.argv[2]}`);
}
