/**
 * Start-up, whole process (`npm run bench -- --startup` for this section alone): what a user waits
 * for before a backtest does any work. `fxflow --version` and a 10-candle backtest (sma-cross on a
 * 10-row CSV, writing its run folder and report.html, as `fxflow backtest` does by default), each
 * run from the compiled build (dist/, what bin/fxflow.js runs when it is current) and from the
 * TypeScript sources through tsx (FXFLOW_RUN_FROM=source: what every run cost before the build),
 * beside the floor of an empty `node` process. Runs are interleaved, one process each, after one
 * unmeasured round (tsx's transform cache and the strategy's type-check cache are warm, as they are
 * for a user's second run); the median wall time of `runs` rounds is reported.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// @ts-expect-error: plain JavaScript with no declarations
import { buildState } from '../../scripts/build-stamp.mjs';

const ROOT = resolve(import.meta.dirname, '../..');

export interface StartupFigures {
  readonly runs: number;
  /** Median wall milliseconds of each command; `min`/`max` are the spread of the rounds. */
  readonly nodeMs: Spread;
  readonly version: { readonly dist: Spread; readonly source: Spread };
  readonly backtest10: { readonly dist: Spread; readonly source: Spread };
}
interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** Ten H1 candles, both sides, in the generic CSV format. */
function tenCandles(dir: string): string {
  const t0 = Date.parse('2024-03-04T10:00:00Z');
  const rows = Array.from({ length: 10 }, (_, i) => {
    const m = 1.1 + (i % 4) * 0.0004;
    return `${new Date(t0 + i * 3_600_000).toISOString()},${m},${m + 0.001},${m - 0.001},${m + 0.0002},${m + 0.0001},${m + 0.0011},${m - 0.0009},${m + 0.0003},10`;
  });
  const file = join(dir, 'EUR_USD_H1.csv');
  writeFileSync(file, ['time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume', ...rows, ''].join('\n'));
  return file;
}

export function benchStartup(runs: number): StartupFigures {
  if (!(buildState as (root: string) => { current: boolean })(ROOT).current) {
    // The build of these sources (what `npm ci` leaves); nothing is measured against a stale one.
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  }
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-bench-startup-'));
  const data = tenCandles(dir);
  const bin = join(ROOT, 'bin/fxflow.js');
  const backtest = [bin, 'backtest', join(ROOT, 'strategies/sma-cross.ts'), '--data', data, '--instrument', 'EUR_USD', '--granularity', 'H1', '--runs-dir', join(dir, 'runs')];
  const commands: Record<string, { args: string[]; from?: string }> = {
    node: { args: ['-e', '0'] },
    'version-dist': { args: [bin, '--version'], from: 'dist' },
    'version-source': { args: [bin, '--version'], from: 'source' },
    'backtest-dist': { args: backtest, from: 'dist' },
    'backtest-source': { args: backtest, from: 'source' },
  };
  const once = (name: string): number => {
    const c = commands[name]!;
    const t0 = performance.now();
    const r = spawnSync(process.execPath, c.args, { cwd: dir, env: { ...process.env, FXFLOW_RUN_FROM: c.from ?? '' }, encoding: 'utf8' });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`start-up bench: ${name} exited ${r.status}:\n${r.stderr}`);
    return ms;
  };
  const samples = new Map(Object.keys(commands).map((k) => [k, [] as number[]]));
  for (const name of Object.keys(commands)) once(name);
  for (let r = 0; r < runs; r++) for (const name of Object.keys(commands)) samples.get(name)!.push(once(name));
  rmSync(dir, { recursive: true, force: true });
  const spread = (name: string): Spread => {
    const xs = [...samples.get(name)!].sort((a, b) => a - b);
    return { median: Math.round(xs[Math.floor((xs.length - 1) / 2)]!), min: Math.round(xs[0]!), max: Math.round(xs[xs.length - 1]!) };
  };
  return {
    runs,
    nodeMs: spread('node'),
    version: { dist: spread('version-dist'), source: spread('version-source') },
    backtest10: { dist: spread('backtest-dist'), source: spread('backtest-source') },
  };
}

/** The section of the bench's table. */
export function formatStartup(f: StartupFigures): string {
  const row = (label: string, s: Spread): string => `  ${label.padEnd(48)}${`${s.median} ms`.padStart(8)}  (${s.min}-${s.max})`;
  return [
    `Start-up, whole process (median of ${f.runs}, interleaved):`,
    row('node -e 0 (the floor)', f.nodeMs),
    row('fxflow --version, compiled (dist/)', f.version.dist),
    row('fxflow --version, from the sources (tsx)', f.version.source),
    row('10-candle backtest + run folder, compiled', f.backtest10.dist),
    row('10-candle backtest + run folder, from sources', f.backtest10.source),
    `  compiled / from sources: --version ${(f.version.dist.median / f.version.source.median).toFixed(2)}, backtest ${(f.backtest10.dist.median / f.backtest10.source.median).toFixed(2)}`,
  ].join('\n');
}
