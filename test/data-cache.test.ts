import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { writeOneSidedCsv } from './bench/csv-file.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-data-cache-'));
const cacheDir = join(tmp, 'cache');

/** The real `fxflow` command with the decoded-candle cache in `cache` ('off': none). */
async function fxflow(
  cache: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
      env: { ...process.env, FXFLOW_DATA_CACHE: cache },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

/** The run folder's data files, and summary.json without its wall time. */
function folder(stdout: string): Record<string, string> {
  const dir = /Run saved in (.+)/.exec(stdout)?.[1];
  expect(dir).toBeDefined();
  const out: Record<string, string> = {};
  for (const f of ['transactions.jsonl', 'trades.csv', 'equity.csv', 'intents.jsonl'])
    out[f] = readFileSync(join(dir!, f), 'utf8');
  const s = JSON.parse(readFileSync(join(dir!, 'summary.json'), 'utf8')) as { wallMs?: number };
  delete s.wallMs;
  out['summary.json'] = JSON.stringify(s);
  return out;
}

describe('fxflow backtest --data through the decoded-candle cache', () => {
  it('gives the same run folder without the cache, building it and reading it; data list and data check show it; a damaged cache is reported and rebuilt', async () => {
    const csv = join(tmp, 'eurusd-m1.csv');
    writeOneSidedCsv(csv, 30_000);
    const args = [
      'backtest',
      'strategies/sma-cross.ts',
      '--data',
      csv,
      '--side',
      'mid',
      '--spread',
      'fixed',
      '--spread-pips',
      '1',
      '--granularity',
      'M1',
      '--from',
      '2019-01-01',
      '--to',
      '2020-01-01',
      '--runs-dir',
      join(tmp, 'runs'),
    ];
    const off = await fxflow('off', ...args);
    expect(off.code, off.stderr).toBe(0);
    expect(readdirSync(tmp)).not.toContain('cache');
    const built = await fxflow(cacheDir, ...args);
    expect(built.code, built.stderr).toBe(0);
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.fxc'))).toHaveLength(1);
    const read = await fxflow(cacheDir, ...args);
    expect(read.code, read.stderr).toBe(0);
    const want = folder(off.stdout);
    expect(JSON.parse(want['summary.json']!).summary.trades).toBeGreaterThan(100);
    expect(folder(built.stdout)).toEqual(want);
    expect(folder(read.stdout)).toEqual(want);

    const empty = join(tmp, 'catalog');
    const list = await fxflow(cacheDir, 'data', 'list', '--catalog', empty);
    expect(list.stdout).toContain(`decoded-candle cache ${cacheDir}: 1 file, `);
    expect(list.stdout).toContain(`EUR_USD M1 30,000 rows from ${csv}: fresh`);
    const ok = await fxflow(cacheDir, 'data', 'check', '--catalog', empty);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toContain(': fresh');

    // A flipped byte in the middle of the candles: data check names it, the next run is unchanged and rebuilds it.
    const file = join(
      cacheDir,
      readdirSync(cacheDir).find((f) => f.endsWith('.fxc'))!,
    );
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0x10;
    writeFileSync(file, bytes);
    const bad = await fxflow(cacheDir, 'data', 'check', '--catalog', empty);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/DAMAGED \(.*block \d+ checksum mismatch; rebuilt on next use\)/);
    const again = await fxflow(cacheDir, ...args);
    expect(again.code, again.stderr).toBe(0);
    expect(folder(again.stdout)).toEqual(want);
    expect((await fxflow(cacheDir, 'data', 'check', '--catalog', empty)).code).toBe(0);

    // The source edited: the cache is stale, and the run reads the edited file.
    writeFileSync(
      csv,
      readFileSync(csv, 'utf8').replace(
        /\n(2019-01-0[2-9]T\d\d:\d\d:00Z,[\d.]+,[\d.]+,[\d.]+,[\d.]+,)(\d+)\n/,
        (_, row: string, v: string) => `\n${row}${Number(v) + 1}\n`,
      ),
    );
    const listed = await fxflow(cacheDir, 'data', 'list', '--catalog', empty);
    expect(listed.stdout).toMatch(
      /STALE \(the source was edited \(its SHA-256 differs\); rebuilt on next use\)/,
    );
  }, 120_000);
});
