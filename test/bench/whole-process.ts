/**
 * The whole-process bench (issue 27): what a user waits for, from the command line. Each figure is
 * one `fxflow` process, as a user runs it, timed from spawn to exit, with its own CPU time and peak
 * RSS (read by the process itself at exit, through a one-line `--import` preload).
 *
 * - `fxflow backtest --data <1M-bar one-sided M1 CSV>` with the run folder and report.html (the
 *   default), SMA 10/30 long-only, `config/classic.json`: the first time (no decoded-candle cache:
 *   it is built on the way) and once the file has been seen (read from the cache);
 * - the same on 100k bars (cached);
 * - peak RSS at 1M and 4M bars (cached);
 * - the floor: a plain Node process (`floor-sma.mjs`) that reads the same file and runs a
 *   hand-written SMA loop, on the 1M and on the 100k file, and `node -e 0` (start-up alone);
 * - start-up: `fxflow --version` and a backtest of 10 candles;
 * - the 20-point sweep (`fxflow optimize`, fast 5,10,15,20 × slow 30,40,50,60,80) on 100k bars with
 *   1 and 2 workers.
 * The CSVs are generated in a temporary folder (removed at the end), the cache lives in it too
 * (FXFLOW_DATA_CACHE). Runs of one kind are interleaved with the floor `--runs` times (default 3)
 * and medians reported: the machine is shared, so ratios taken in the same minutes are what count.
 *
 *   node --import tsx test/bench/whole-process.ts [--runs 3] [--no-4m]
 *   npm run bench -- --whole                  # the same from the main bench
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeOneSidedCsv } from './csv-file.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** Prints the process's CPU time and peak RSS at exit (read by the bench from stderr). */
const PRELOAD = `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('\\nBENCH '+JSON.stringify({cpuMs:(u.userCPUTime+u.systemCPUTime)/1000,peakRssMB:u.maxRSS/1024})+'\\n')})`;

export interface ProcessFigures {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssMB: number;
}

export function timed(args: readonly string[], env: NodeJS.ProcessEnv): ProcessFigures & { stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', PRELOAD, ...args], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const line = r.stderr
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('BENCH '));
  const own = JSON.parse(line!.slice(6)) as { cpuMs: number; peakRssMB: number };
  return { wallMs, ...own, stdout: r.stdout };
}

export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const med = (xs: readonly ProcessFigures[]): ProcessFigures & { wallMinMs: number; wallMaxMs: number } => ({
  wallMs: median(xs.map((x) => x.wallMs)),
  cpuMs: median(xs.map((x) => x.cpuMs)),
  peakRssMB: median(xs.map((x) => x.peakRssMB)),
  wallMinMs: Math.min(...xs.map((x) => x.wallMs)),
  wallMaxMs: Math.max(...xs.map((x) => x.wallMs)),
});

/**
 * `fxflow backtest --data <file>` as the whole-process bench runs it: SMA 10/30 long-only on a
 * one-sided M1 CSV, `config/classic.json`, with the run folder and report.html (the default).
 */
export const backtestArgs = (file: string, runsDir: string): string[] => [
  'bin/fxflow.js',
  'backtest',
  'strategies/sma-cross.ts',
  '--data',
  file,
  '--side',
  'mid',
  '--config',
  'config/classic.json',
  '--granularity',
  'M1',
  '--param',
  'longOnly=true',
  '--from',
  '2019-01-01',
  '--to',
  '2035-01-01',
  '--runs-dir',
  runsDir,
];

/** The same backtest on 10 of the file's candles (New Year's Day opens at 22:00 UTC, so the 2nd): start-up, the run folder and the report. */
export const tinyBacktestArgs = (file: string, runsDir: string): string[] => [
  ...backtestArgs(file, runsDir).slice(0, -6),
  '--from',
  '2019-01-02T00:00:00Z',
  '--to',
  '2019-01-02T00:10:00Z',
  '--runs-dir',
  runsDir,
];

/** The plain-Node floor: reads the same file and runs a hand-written SMA loop (floor-sma.mjs). */
export const floorArgs = (file: string): string[] => [join(ROOT, 'test/bench/floor-sma.mjs'), file];

/** The plain-Node start-up floor. */
export const NODE_FLOOR: readonly string[] = ['-e', '0'];

/** The 20-point sweep (`fxflow optimize`, fast 5,10,15,20 × slow 30,40,50,60,80) on the file. */
export const sweepArgs = (file: string, workers: number, runsDir: string, out: string): string[] => [
  'bin/fxflow.js',
  'optimize',
  'strategies/sma-cross.ts',
  '--data',
  file,
  '--side',
  'mid',
  '--config',
  'config/classic.json',
  '--granularity',
  'M1',
  '--param',
  'longOnly=true',
  '--param',
  'fast=5,10,15,20',
  '--param',
  'slow=30,40,50,60,80',
  '--from',
  '2019-01-01',
  '--to',
  '2035-01-01',
  '--workers',
  String(workers),
  '--runs-dir',
  runsDir,
  '--out',
  out,
];

/** Runs the whole-process bench and prints its table; returns the figures. */
export function benchWholeProcess(o: { runs?: number; fourMillion?: boolean } = {}): Record<string, unknown> {
  const runs = Math.max(1, o.runs ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-whole-'));
  const env = { ...process.env, FXFLOW_DATA_CACHE: join(dir, 'cache') };
  try {
    const files = {
      '100k': join(dir, 'm1-100k.csv'),
      '1M': join(dir, 'm1-1m.csv'),
      '4M': join(dir, 'm1-4m.csv'),
    };
    writeOneSidedCsv(files['100k'], 100_000);
    writeOneSidedCsv(files['1M'], 1_000_000);
    if (o.fourMillion !== false) writeOneSidedCsv(files['4M'], 4_000_000);
    const backtest = (file: string): string[] => backtestArgs(file, join(dir, 'runs'));
    const floor = (file: string): string[] => floorArgs(file);
    let sweeps = 0;
    const sweep = (workers: number): string[] =>
      sweepArgs(files['100k'], workers, join(dir, 'runs'), join(dir, `sweep-${++sweeps}`));
    const first: ProcessFigures[] = [];
    const cached: ProcessFigures[] = [];
    const small: ProcessFigures[] = [];
    const floors: ProcessFigures[] = [];
    const floorsSmall: ProcessFigures[] = [];
    const nodeFloor: ProcessFigures[] = [];
    const version: ProcessFigures[] = [];
    const tiny: ProcessFigures[] = [];
    const sweep1: ProcessFigures[] = [];
    const sweep2: ProcessFigures[] = [];
    const big: ProcessFigures[] = [];
    let fills = '';
    let sweepTrials = '';
    for (let r = 0; r < runs; r++) {
      // The first time: no cache (it is built during the run).
      rmSync(join(dir, 'cache'), { recursive: true, force: true });
      first.push(timed(backtest(files['1M']), env));
      floors.push(timed(floor(files['1M']), env));
      const c = timed(backtest(files['1M']), env);
      cached.push(c);
      fills = /Trades \(closed\)\s+(\S+)/.exec(c.stdout)?.[1] ?? fills;
      small.push(timed(backtest(files['100k']), env));
      floorsSmall.push(timed(floor(files['100k']), env));
      // Start-up alone: plain Node, the version, and a backtest of 10 candles (run folder and report included).
      nodeFloor.push(timed(NODE_FLOOR, env));
      version.push(timed(['bin/fxflow.js', '--version'], env));
      tiny.push(timed(tinyBacktestArgs(files['100k'], join(dir, 'runs')), env));
      sweep1.push(timed(sweep(1), env));
      const s2 = timed(sweep(2), env);
      sweep2.push(s2);
      sweepTrials =
        /ran \d+ now \(\d+ already in the folder\), \d+ failed/.exec(s2.stdout)?.[0] ?? sweepTrials;
    }
    if (o.fourMillion !== false) {
      timed(backtest(files['4M']), env); // builds its cache
      for (let r = 0; r < runs; r++) big.push(timed(backtest(files['4M']), env));
    }
    const f = {
      first: med(first),
      cached: med(cached),
      small: med(small),
      floor: med(floors),
      floorSmall: med(floorsSmall),
      node: med(nodeFloor),
      version: med(version),
      tiny: med(tiny),
      sweep1: med(sweep1),
      sweep2: med(sweep2),
      ...(big.length ? { big: med(big) } : {}),
    };
    const s = (ms: number): string => (ms / 1000).toFixed(2);
    const rows: string[][] = [
      ['whole process (medians)', 'wall s', 'wall range s', 'cpu s', 'peak RSS MB', 'target'],
      [
        'backtest --data 1M bars, first time',
        s(f.first.wallMs),
        `${s(f.first.wallMinMs)}–${s(f.first.wallMaxMs)}`,
        s(f.first.cpuMs),
        f.first.peakRssMB.toFixed(0),
        '≤ 2.0 s',
      ],
      [
        'backtest --data 1M bars, cached',
        s(f.cached.wallMs),
        `${s(f.cached.wallMinMs)}–${s(f.cached.wallMaxMs)}`,
        s(f.cached.cpuMs),
        f.cached.peakRssMB.toFixed(0),
        '≤ 1.2 s, ≤ 2× floor',
      ],
      [
        'floor: plain Node reads it, SMA loop',
        s(f.floor.wallMs),
        `${s(f.floor.wallMinMs)}–${s(f.floor.wallMaxMs)}`,
        s(f.floor.cpuMs),
        f.floor.peakRssMB.toFixed(0),
        '',
      ],
      [
        'floor on 100k bars',
        s(f.floorSmall.wallMs),
        `${s(f.floorSmall.wallMinMs)}–${s(f.floorSmall.wallMaxMs)}`,
        s(f.floorSmall.cpuMs),
        f.floorSmall.peakRssMB.toFixed(0),
        '',
      ],
      [
        'floor: node -e 0',
        s(f.node.wallMs),
        `${s(f.node.wallMinMs)}–${s(f.node.wallMaxMs)}`,
        s(f.node.cpuMs),
        f.node.peakRssMB.toFixed(0),
        '',
      ],
      [
        'fxflow --version',
        s(f.version.wallMs),
        `${s(f.version.wallMinMs)}–${s(f.version.wallMaxMs)}`,
        s(f.version.cpuMs),
        f.version.peakRssMB.toFixed(0),
        '',
      ],
      [
        'backtest --data, 10 candles',
        s(f.tiny.wallMs),
        `${s(f.tiny.wallMinMs)}–${s(f.tiny.wallMaxMs)}`,
        s(f.tiny.cpuMs),
        f.tiny.peakRssMB.toFixed(0),
        '',
      ],
      [
        'backtest --data 100k bars, cached',
        s(f.small.wallMs),
        `${s(f.small.wallMinMs)}–${s(f.small.wallMaxMs)}`,
        s(f.small.cpuMs),
        f.small.peakRssMB.toFixed(0),
        '≤ 0.35 s',
      ],
      ...(f.big
        ? [
            [
              'backtest --data 4M bars, cached',
              s(f.big.wallMs),
              `${s(f.big.wallMinMs)}–${s(f.big.wallMaxMs)}`,
              s(f.big.cpuMs),
              f.big.peakRssMB.toFixed(0),
              '≤ 1.25× 1M, ≤ 250 MB',
            ],
          ]
        : []),
      [
        '20-point sweep, 100k bars, 1 worker',
        s(f.sweep1.wallMs),
        `${s(f.sweep1.wallMinMs)}–${s(f.sweep1.wallMaxMs)}`,
        s(f.sweep1.cpuMs),
        f.sweep1.peakRssMB.toFixed(0),
        '',
      ],
      [
        '20-point sweep, 100k bars, 2 workers',
        s(f.sweep2.wallMs),
        `${s(f.sweep2.wallMinMs)}–${s(f.sweep2.wallMaxMs)}`,
        s(f.sweep2.cpuMs),
        f.sweep2.peakRssMB.toFixed(0),
        '≤ 1.2 s',
      ],
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows)
      console.log(
        r.map((c, i) => (i === 0 || i === 5 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '),
      );
    const ratio = f.cached.wallMs / f.floor.wallMs;
    const cpuRatio = f.cached.cpuMs / f.floor.cpuMs;
    const rss = f.big ? f.big.peakRssMB / f.cached.peakRssMB : Number.NaN;
    console.log(
      `cached 1M backtest against the floor: ${ratio.toFixed(2)}× wall, ${cpuRatio.toFixed(2)}× CPU (target ≤ 2×); first time / cached ${(f.first.wallMs / f.cached.wallMs).toFixed(2)}×; ${fills} trades closed`,
    );
    if (f.big)
      console.log(
        `peak RSS 4M / 1M: ${rss.toFixed(2)}× (target ≤ 1.25×), ${f.big.peakRssMB.toFixed(0)} MB (target ≤ 250 MB)`,
      );
    console.log(
      `sweep: 2 workers ${(f.sweep1.wallMs / f.sweep2.wallMs).toFixed(2)}× one (medians of ${runs}; the machine's other work shares the 2 cores)`,
    );
    return {
      ...Object.fromEntries(
        Object.entries(f).map(([k, v]) => [
          k,
          { wallMs: Math.round(v.wallMs), cpuMs: Math.round(v.cpuMs), peakRssMB: Math.round(v.peakRssMB) },
        ]),
      ),
      ratio: Number(ratio.toFixed(3)),
      cpuRatio: Number(cpuRatio.toFixed(3)),
      sweepTrials,
      rssGrowth: Number.isNaN(rss) ? null : Number(rss.toFixed(3)),
      targets: {
        cached: f.cached.wallMs <= 1200,
        first: f.first.wallMs <= 2000,
        floor: ratio <= 2,
        small: f.small.wallMs <= 350,
        rss: f.big ? rss <= 1.25 && f.big.peakRssMB <= 250 : null,
        sweep: f.sweep2.wallMs <= 1200,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === import.meta.filename) {
  const i = process.argv.indexOf('--runs');
  console.log(
    JSON.stringify(
      benchWholeProcess({
        runs: i > 0 ? Number(process.argv[i + 1]) : 3,
        fourMillion: !process.argv.includes('--no-4m'),
      }),
    ),
  );
}
