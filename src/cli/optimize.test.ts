import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/fxflow.js');
const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-optimize-'));

async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

// One month of the bundled sample's EUR_USD H1: 30 grid points, each a real backtest.
const SWEEP = [
  'optimize',
  'strategies/sma-cross.ts',
  '--param',
  'fast=4:22:2',
  '--param',
  'slow=20,30,40',
  '--from',
  '2024-01-01',
  '--to',
  '2024-03-01',
  '--workers',
  '1',
];

/** Resolves once `file` has at least `n` complete lines (waits on file-system events, no timer). */
function linesReached(file: string, n: number): Promise<void> {
  const count = (): number => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').length - 1 : 0);
  return new Promise((res) => {
    const dir = resolve(file, '..');
    const w = watch(dir, () => {
      if (count() >= n) {
        w.close();
        res();
      }
    });
    if (count() >= n) {
      w.close();
      res();
    }
  });
}

describe('fxflow optimize', () => {
  it('bad input: a clear message naming the flag', async () => {
    const r1 = await fxflow('optimize', 'strategies/sma-cross.ts', '--param', 'fats=5:50:5');
    expect(r1.code).not.toBe(0);
    expect(r1.stderr).toContain("unknown param 'fats'");
    const r2 = await fxflow(
      'optimize',
      'strategies/sma-cross.ts',
      '--param',
      'fast=5:50:5',
      '--constraint',
      'fast < slwo',
    );
    expect(r2.stderr).toContain("unknown name 'slwo'");
    const r3 = await fxflow('optimize', 'strategies/sma-cross.ts', '--param', 'fast=5:50:0');
    expect(r3.stderr).toContain('the step must be greater than 0');
    for (const r of [r1, r2, r3]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('after kill -9 of a real sweep, the same command runs only the missing trials and ends as a clean run does', async () => {
    const clean = join(tmp, 'clean');
    const c = await fxflow(...SWEEP, '--out', clean, '--json');
    expect(c.code).toBe(0);
    const full = JSON.parse(c.stdout) as { trials: number; ran: number; best: { params: object } };
    expect(full.trials).toBe(30);
    expect(full.ran).toBe(30);

    const killed = join(tmp, 'killed');
    mkdirSync(killed); // watched before the sweep creates its files
    const child = spawn(process.execPath, [BIN, ...SWEEP, '--out', killed], { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((res) =>
      child.on('exit', (_code, signal) => res(signal)),
    );
    await linesReached(join(killed, 'trials.jsonl'), 3);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const before = readFileSync(join(killed, 'trials.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.endsWith('}')).length;
    expect(before).toBeGreaterThanOrEqual(3);
    expect(before).toBeLessThan(30);

    const again = await fxflow(...SWEEP, '--out', killed, '--json');
    expect(again.code).toBe(0);
    const r = JSON.parse(again.stdout) as {
      trials: number;
      ran: number;
      resumed: number;
      best: { params: object };
    };
    expect(r.trials).toBe(30);
    expect(r.resumed).toBeGreaterThanOrEqual(before - 1); // the line being written at the kill may be cut
    expect(r.ran).toBe(30 - r.resumed);
    expect(r.best).toEqual(full.best);
    expect(readFileSync(join(killed, 'trials.csv'), 'utf8')).toBe(
      readFileSync(join(clean, 'trials.csv'), 'utf8'),
    );

    // A third run finds everything recorded: no trial runs; the candles come from the binary cache beside the catalog.
    const third = JSON.parse((await fxflow(...SWEEP, '--out', killed, '--json')).stdout) as {
      ran: number;
      resumed: number;
      data: { cachedSeries: number; candles: number };
    };
    expect(third.data.cachedSeries).toBe(1);
    expect(third.data.candles).toBeGreaterThan(1000);
    expect(third.ran).toBe(0);
    expect(third.resumed).toBe(30);
  });

  it('prints the top trials, the best, the overfitting figures and the folder', async () => {
    const r = await fxflow(
      'optimize',
      'strategies/sma-cross.ts',
      '--param',
      'fast=5,10,15',
      '--param',
      'slow=20,40',
      '--search',
      'random',
      '--trials',
      '4',
      '--seed',
      '3',
      '--workers',
      '2',
      '--out',
      join(tmp, 'text'),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('optimize sma-cross: random, 4 trials of 6 points, objective sharpe, seed 3');
    expect(r.stdout).toMatch(/Top 4:/);
    expect(r.stdout).toMatch(/Best: trial \d+ {2}fast=\d+ slow=\d+/);
    expect(r.stdout).toContain('Deflated Sharpe ratio');
    expect(r.stdout).toContain('PBO');
    const csv = readFileSync(join(tmp, 'text', 'trials.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(csv).toHaveLength(5);
  });
});

describe('fxflow walkforward', () => {
  it('anchored windows: a sweep per training window, the choice run out of sample, stitched, with efficiency and stability', async () => {
    const out = join(tmp, 'wf');
    const r = await fxflow(
      'walkforward',
      'strategies/sma-cross.ts',
      '--param',
      'fast=5,10,15',
      '--param',
      'slow=20,40',
      '--train',
      '3mo',
      '--test',
      '3mo',
      '--anchored',
      '--from',
      '2024-01-01',
      '--to',
      '2024-10-01',
      '--workers',
      '2',
      '--out',
      out,
      '--json',
    );
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      windows: {
        window: { trainFrom: number; trainTo: number; testFrom: number; testTo: number };
        params: { fast: number; slow: number };
        outOfSample: { trades: number; from: string; to: string } | null;
        inSample: { from: string };
      }[];
      oosEquity: { time: string; nav: number; window: number }[];
      stability: { fast: { values: number[]; distinct: number } };
    };
    // 2024-01 → 04 tested 04 → 07; 2024-01 → 07 tested 07 → 10.
    expect(doc.windows).toHaveLength(2);
    expect(doc.windows.map((w) => w.inSample.from)).toEqual([
      '2024-01-01T00:00:00.000Z',
      '2024-01-01T00:00:00.000Z',
    ]);
    expect(doc.windows.map((w) => w.outOfSample?.from)).toEqual([
      '2024-04-01T00:00:00.000Z',
      '2024-07-01T00:00:00.000Z',
    ]);
    for (const w of doc.windows) expect(w.outOfSample!.trades).toBeGreaterThan(0);
    expect(doc.stability.fast.values).toEqual(doc.windows.map((w) => w.params.fast));
    // The stitched curve is indexed by date: it starts at the first test period's first mark, NAV 1, and oos-equity.csv says the same.
    expect(doc.oosEquity[0]!.nav).toBe(1);
    expect(doc.oosEquity[0]!.time.startsWith('2024-04-01')).toBe(true);
    expect(doc.oosEquity[doc.oosEquity.length - 1]!.time <= '2024-10-01T00:00:00.000Z').toBe(true); // the last candle closes at the end
    const oosCsv = readFileSync(join(out, 'oos-equity.csv'), 'utf8').trim().split('\n');
    expect(oosCsv[0]).toBe('time,window,nav,epochMs');
    expect(oosCsv.slice(1).map((l) => l.split(',')[0])).toEqual(doc.oosEquity.map((p) => p.time));
    expect(oosCsv.slice(1).map((l) => Number(l.split(',')[3]))).toEqual(
      doc.oosEquity.map((p) => Date.parse(p.time)),
    );
    const csv = readFileSync(join(out, 'windows.csv'), 'utf8').trim().split('\n');
    expect(csv[0]!.startsWith('window,trainFrom,trainTo,testFrom,testTo,fast,slow,')).toBe(true);
    expect(csv).toHaveLength(3);
    expect(existsSync(join(out, 'window-01', 'trials.csv'))).toBe(true);

    // The terminal table (the same walk-forward printed, in its own folder) has each window's DSR
    // and PBO as walkforward.json has them, and its efficiency only over an in-sample gain.
    const textOut = join(tmp, 'wf-text');
    const text = await fxflow(
      'walkforward',
      'strategies/sma-cross.ts',
      '--param',
      'fast=5,10,15',
      '--param',
      'slow=20,40',
      '--train',
      '3mo',
      '--test',
      '3mo',
      '--anchored',
      '--from',
      '2024-01-01',
      '--to',
      '2024-10-01',
      '--workers',
      '2',
      '--out',
      textOut,
    );
    expect(text.code, text.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(join(textOut, 'walkforward.json'), 'utf8')) as {
      windows: {
        dsr: number | null;
        pbo: number | null;
        efficiency: number | null;
        inSample: { cagrPct: number | null };
      }[];
      efficiency: number | null;
      efficiencyWhyNot?: string;
    };
    const lines = text.stdout.split('\n');
    const header = lines.findIndex((l) => l.startsWith('win '));
    expect(
      lines[header]!.trim()
        .split(/\s{2,}/)
        .slice(-5),
    ).toEqual(['IS CAGR', 'OOS CAGR', 'WFE', 'DSR', 'PBO']);
    const shown = (x: number | null): string => (x === null ? 'n/a' : x.toFixed(2));
    saved.windows.forEach((w, i) => {
      const cells = lines[header + 1 + i]!.trim().split(/\s{2,}/);
      expect(cells.slice(-2)).toEqual([shown(w.dsr), shown(w.pbo)]);
      const isGain = w.inSample.cagrPct !== null && w.inSample.cagrPct > 0;
      expect(cells.at(-3)).toBe(isGain ? shown(w.efficiency) : 'n/a (IS ≤ 0)');
    });
    expect(text.stdout).toContain(
      saved.efficiency !== null
        ? `Walk-forward efficiency (mean OOS CAGR / mean IS CAGR): ${saved.efficiency.toFixed(2)}`
        : `Walk-forward efficiency (mean OOS CAGR / mean IS CAGR): n/a: ${saved.efficiencyWhyNot}`,
    );
  });
});
