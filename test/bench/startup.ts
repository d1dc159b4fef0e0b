/**
 * Start-up, whole process (`npm run bench -- --startup` for this section alone): what a user waits
 * for before a backtest does any work. `fxflow --version` and a 10-candle backtest (sma-cross on a
 * 10-row CSV, writing its run folder and report.html, as `fxflow backtest` does by default), each
 * run from the build's bundle (dist/bundle/, what bin/fxflow.js runs when it is current) and the
 * backtest also from the TypeScript sources through tsx (FXFLOW_RUN_FROM=source: what every run
 * cost before the build; `--version` alone is answered by bin/fxflow.js from package.json),
 * beside the floor of an empty `node` process. Runs are interleaved, one process each, after one
 * unmeasured round (tsx's transform cache and the strategy's type-check cache are warm, as they are
 * for a user's second run); the median wall time of `runs` rounds is reported, with the median CPU
 * time of the process (steadier than wall time on a shared machine). `--before <checkout>` adds
 * another checkout's bin/fxflow.js (e.g. the commit before the build) to the same rounds.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// @ts-expect-error: plain JavaScript with no declarations
import { buildState } from '../../scripts/build-stamp.mjs';

const ROOT = resolve(import.meta.dirname, '../..');

export interface StartupFigures {
  readonly runs: number;
  readonly nodeMs: Spread;
  readonly version: Sides;
  readonly backtest10: Sides;
}
/** The build (dist/), the sources through tsx, and another checkout's bin/fxflow.js when `--before <root>` names one. */
interface Sides {
  readonly dist: Spread;
  /** None for `--version`: bin/fxflow.js answers it from package.json, before it chooses the build or the sources. */
  readonly source?: Spread;
  readonly before?: Spread;
}
/** Median wall milliseconds of the rounds, their spread, and the median CPU milliseconds (user + system: steadier on a shared machine). */
interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly cpuMs: number;
}

/** CPU milliseconds used so far by this process's finished children (Linux: /proc/self/stat cutime + cstime, 10 ms ticks); NaN elsewhere. */
function childrenCpuMs(): number {
  if (!existsSync('/proc/self/stat')) return Number.NaN;
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ": state is field 3, cutime 16 and cstime 17 (1-based), in clock ticks of 10 ms.
  return (Number(fields[16 - 3]) + Number(fields[17 - 3])) * 10;
}

/** Ten H1 candles, both sides, in the generic CSV format (also test/startup-modules.test.ts). */
export function tenCandles(dir: string): string {
  const t0 = Date.parse('2024-03-04T10:00:00Z');
  const rows = Array.from({ length: 10 }, (_, i) => {
    const m = 1.1 + (i % 4) * 0.0004;
    return `${new Date(t0 + i * 3_600_000).toISOString()},${m},${m + 0.001},${m - 0.001},${m + 0.0002},${m + 0.0001},${m + 0.0011},${m - 0.0009},${m + 0.0003},10`;
  });
  const file = join(dir, 'EUR_USD_H1.csv');
  writeFileSync(
    file,
    ['time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume', ...rows, ''].join('\n'),
  );
  return file;
}

export function benchStartup(runs: number, before?: string): StartupFigures {
  if (!(buildState as (root: string) => { current: boolean })(ROOT).current) {
    // The build of these sources (what `npm ci` leaves); nothing is measured against a stale one.
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  }
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-bench-startup-'));
  const data = tenCandles(dir);
  const backtest = (bin: string): string[] => [
    bin,
    'backtest',
    join(ROOT, 'strategies/sma-cross.ts'),
    '--data',
    data,
    '--instrument',
    'EUR_USD',
    '--granularity',
    'H1',
    '--from',
    '2024-03-04',
    '--to',
    '2024-03-05',
    '--runs-dir',
    join(dir, 'runs'),
  ];
  const bin = join(ROOT, 'bin/fxflow.js');
  const commands: Record<string, { args: string[]; from?: string }> = {
    node: { args: ['-e', '0'] },
    'version-dist': { args: [bin, '--version'], from: 'dist' },
    'backtest-dist': { args: backtest(bin), from: 'dist' },
    'backtest-source': { args: backtest(bin), from: 'source' },
  };
  if (before !== undefined) {
    const old = join(resolve(before), 'bin/fxflow.js');
    commands['version-before'] = { args: [old, '--version'] };
    commands['backtest-before'] = { args: backtest(old) };
  }
  const once = (name: string): [number, number] => {
    const c = commands[name]!;
    const cpu0 = childrenCpuMs();
    const t0 = performance.now();
    const r = spawnSync(process.execPath, c.args, {
      cwd: dir,
      env: { ...process.env, FXFLOW_RUN_FROM: c.from ?? '' },
      encoding: 'utf8',
    });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`start-up bench: ${name} exited ${r.status}:\n${r.stderr}`);
    return [ms, childrenCpuMs() - cpu0];
  };
  const samples = new Map(Object.keys(commands).map((k) => [k, [] as [number, number][]]));
  for (const name of Object.keys(commands)) once(name);
  for (let r = 0; r < runs; r++)
    for (const name of Object.keys(commands)) samples.get(name)!.push(once(name));
  rmSync(dir, { recursive: true, force: true });
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const spread = (name: string): Spread => {
    const wall = samples.get(name)!.map((x) => x[0]);
    return {
      median: Math.round(median(wall)),
      min: Math.round(Math.min(...wall)),
      max: Math.round(Math.max(...wall)),
      cpuMs: Math.round(median(samples.get(name)!.map((x) => x[1]))),
    };
  };
  const sides = (what: string): Sides => ({
    dist: spread(`${what}-dist`),
    ...(samples.has(`${what}-source`) ? { source: spread(`${what}-source`) } : {}),
    ...(before !== undefined ? { before: spread(`${what}-before`) } : {}),
  });
  return { runs, nodeMs: spread('node'), version: sides('version'), backtest10: sides('backtest') };
}

/** The section of the bench's table. */
export function formatStartup(f: StartupFigures): string {
  const row = (label: string, s: Spread | undefined): string[] =>
    s === undefined
      ? []
      : [`  ${label.padEnd(50)}${`${s.median} ms`.padStart(8)}  (${s.min}-${s.max})  CPU ${s.cpuMs} ms`];
  return [
    `Start-up, whole process (median of ${f.runs}, interleaved; wall, its spread, CPU):`,
    ...row('node -e 0 (the floor)', f.nodeMs),
    ...row('fxflow --version (bin/fxflow.js, from package.json)', f.version.dist),
    ...row('fxflow --version, --before checkout', f.version.before),
    ...row('10-candle backtest + run folder, the bundle', f.backtest10.dist),
    ...row('10-candle backtest + run folder, from the sources', f.backtest10.source),
    ...row('10-candle backtest + run folder, --before checkout', f.backtest10.before),
    `  over the floor, CPU: --version +${f.version.dist.cpuMs - f.nodeMs.cpuMs} ms (target +50), backtest +${f.backtest10.dist.cpuMs - f.nodeMs.cpuMs} ms (target +150)`,
    ...(f.backtest10.source === undefined
      ? []
      : [
          `  the bundle / from the sources, CPU: backtest ${(f.backtest10.dist.cpuMs / f.backtest10.source.cpuMs).toFixed(2)}`,
        ]),
  ].join('\n');
}
