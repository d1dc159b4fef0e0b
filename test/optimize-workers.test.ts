import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// `fxflow optimize` with its own thread as one of the workers: --workers 1 (no thread) and
// --workers 2 (one thread beside it) must write the same sweep, as threads alone did.
const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/fxflow.js');
const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-optimize-workers-'));

const sweep = async (workers: number, out: string, json: boolean): Promise<string> =>
  (
    await run(
      process.execPath,
      [
        BIN,
        'optimize',
        'strategies/sma-cross.ts',
        '--param',
        'fast=4:16:4',
        '--param',
        'slow=20,30,40',
        '--from',
        '2024-01-01',
        '--to',
        '2024-04-01',
        '--workers',
        String(workers),
        '--out',
        out,
        ...(json ? ['--json'] : []),
      ],
      { cwd: ROOT, maxBuffer: 64 << 20 },
    )
  ).stdout;

const files = (d: string): string[] =>
  ['trials.csv', 'trials.jsonl', 'returns.jsonl'].map((f) => readFileSync(join(d, f), 'utf8'));

describe('fxflow optimize --workers', () => {
  it('1 and 2 workers write the same trials, returns, table, best trial and overfitting figures', async () => {
    const [a, b, c, d] = ['w1', 'w2', 'w1-text', 'w2-text'].map((x) => join(tmp, x));
    const one = JSON.parse(await sweep(1, a!, true)) as Record<string, unknown>;
    const two = JSON.parse(await sweep(2, b!, true)) as Record<string, unknown>;
    expect(one.workers).toBe(1);
    expect(two.workers).toBe(2);
    expect(one.ran).toBe(12);
    expect(one.failed).toBe(0);
    // --workers 1 started no thread; 2 started one (ready before the end, or ended while it loaded:
    // twelve short trials may all run on the main thread first).
    expect(one.workerStartMs).toEqual([]);
    expect((two.workerStartMs as number[]).length).toBeLessThanOrEqual(1);
    expect(files(b!)).toEqual(files(a!));
    for (const k of ['best', 'top', 'overfitting', 'failures', 'trials', 'spaceSize'])
      expect(two[k], k).toEqual(one[k]);
    // The printed table, line for line, but for the run's own line (workers, times, rates) and the folder.
    const text = (s: string): string[] =>
      s.split('\n').filter((l) => !/^ {2}ran |^Saved in |^Sweep page: /.test(l));
    expect(text(await sweep(2, d!, false))).toEqual(text(await sweep(1, c!, false)));
  });
});
