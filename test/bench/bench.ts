/**
 * `npm run bench`: SMA(10)/SMA(30) crossover over generated bid/ask M1 candles, through the real
 * engine, simulated broker and portfolio, against a hand-written loop doing the same trading on the
 * same candles. Each measurement runs in its own child process so peak RSS is its own.
 *
 * A second pair of runs does the same with a take profit, a stop loss and a trailing stop on every
 * entry (`test/bench/sma-cross-exits.ts`), and a hand-written loop that walks each candle's path
 * for those exits exactly as the simulator does (adaptive path, gaps at the open, trailing ratchet).
 *
 * Each pair also runs "warm": twice in one process, the second run measured, which shows the cost of
 * JIT warm-up (the engine has far more code to compile than the loop). The targets are judged on
 * the cold runs, as a user's backtest process runs.
 *
 * Every run has the V8 settings the fxflow command applies at start (`src/cli/v8-tuning.ts`); the
 * engine pair also runs with V8's default allocation-site pretenuring, to show what that is worth.
 *
 * The simulator alone (`sim-only`): the same candles fed straight to a SimBroker, with and without
 * a reversal every 25 candles carrying the same exits, compiled (fastest of three rounds in one
 * process): what the v20 simulator itself costs per fill and per transaction, the floor under the
 * engine's cost per fill.
 *
 * Then the paper/live runner's tick-to-order latency against a local sandbox (`latency.ts`), and
 * start-up: `fxflow --version` and a 10-candle backtest, whole process, compiled and from the
 * sources (`startup.ts`; `--startup` runs that section alone).
 *
 * Prints a table, then one JSON line with the figures (the last line of output).
 *   npm run bench                       # 1,000,000 candles
 *   npm run bench -- --candles 250000   # another size
 *   npm run bench -- --runs 5           # median of 5 runs per measurement (default 3)
 *   npm run bench -- --startup          # start-up alone (median of --runs, default 3)
 *   npm run bench -- --startup --before ../other   # beside another checkout's bin/fxflow.js
 *   npm run bench -- --whole            # only the whole-process figures (whole-process.ts)
 *   npm run bench -- --table            # only issue 36's table (issue-table.ts): each figure beside
 *                                       # its target and the plain-Node floors of the same minutes
 *
 * Last, the whole-process figures of issue 27 (`whole-process.ts`): `fxflow backtest --data` on a
 * 1M-bar one-sided M1 CSV the first time and cached, 100k bars, peak RSS at 1M and 4M, beside a
 * plain-Node floor reading the same file, and the 20-point sweep with 1 and 2 workers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Catalog } from '../../src/adapters/catalog/catalog.ts';
import { ensureSample, SAMPLE } from '../../src/adapters/catalog/sample.ts';
import { syntheticBatches } from '../../src/adapters/catalog/synthetic.ts';
import type { Candle } from '../../src/domain/candle.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { SimBroker } from '../../src/adapters/sim/broker.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import { runBacktest } from '../../src/app/backtest.ts';
import { loadConfig } from '../../src/app/config.ts';
import { loadStrategy } from '../../src/app/load-strategy.ts';
import { tuneV8 } from '../../src/cli/v8-tuning.ts';
import { handLoop, HAND_LOOP_EXITS } from './hand-loop.ts';
import { benchLatency } from './latency.ts';
import { benchStartup, formatStartup } from './startup.ts';
import { benchWholeProcess } from './whole-process.ts';
import { formatIssueTable, measureSetup, type IssueFigures, type WholeFigures } from './issue-table.ts';

const FROM = Date.UTC(2019, 0, 1);
/** Five years hold about 1.8M M1 candles; larger runs get more years (the first candles stay the same). */
const yearsFor = (n: number): number => Math.max(5, Math.ceil(n / 340_000));
let TO = Date.UTC(2024, 0, 1);
const SEED = 20240101;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** The first `n` generated EUR_USD M1 candles, streamed in batches (never all in memory). */
function* candles(n: number): Generator<readonly Candle[]> {
  let left = n;
  for (const batch of syntheticBatches({
    instrument: 'EUR_USD',
    granularity: 'M1',
    from: FROM,
    to: TO,
    seed: SEED,
  })) {
    if (batch.length >= left) {
      yield batch.slice(0, left);
      return;
    }
    left -= batch.length;
    yield batch;
  }
  throw new Error(
    `the generator produced fewer than ${n} candles between ${new Date(FROM).toISOString()} and ${new Date(TO).toISOString()}`,
  );
}

/** The exits of the second variant, in price units (as the strategy's params). */
const EXITS = HAND_LOOP_EXITS;

interface Figures {
  mode: string;
  candles: number;
  wallMs: number;
  /** CPU time of the run (user + system): steadier than wall time on a shared machine. */
  cpuMs: number;
  processMs: number;
  candlesPerSec: number;
  peakRssMB: number;
  fills: number;
  finalBalance: number;
  /** Fastest and slowest wall time over the runs (the figures are the median run's). */
  wallMinMs?: number;
  wallMaxMs?: number;
}

async function engineRun(n: number, exits: boolean, save = false, idle = false): Promise<Figures> {
  const config = loadConfig(undefined, {
    run: {
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: new Date(FROM).toISOString(),
      to: new Date(TO).toISOString(),
    },
    costs: { financing: false },
  });
  const loaded = idle
    ? await loadStrategy(fileURLToPath(new URL('./sma-idle.ts', import.meta.url)), ['fast=10', 'slow=30'])
    : exits
      ? await loadStrategy(fileURLToPath(new URL('./sma-cross-exits.ts', import.meta.url)), [
          'fast=10',
          'slow=30',
          `tp=${EXITS.tp}`,
          `sl=${EXITS.sl}`,
          `trailing=${EXITS.trailing}`,
        ])
      : await loadStrategy(fileURLToPath(new URL('../../strategies/sma-cross.ts', import.meta.url)), [
          'instrument=EUR_USD',
          'granularity=M1',
          'component=M',
          'fast=10',
          'slow=30',
        ]);
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  // `save`: the run folder a CLI backtest writes by default (every transaction and intent as JSON lines).
  const runDir = save ? mkdtempSync(join(tmpdir(), 'fxflow-bench-')) : undefined;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = await runBacktest({
    ...(runDir ? { runDir } : {}),
    loaded,
    config,
    instruments: loadInstruments(),
    candles: async function* () {
      yield* candles(n);
    },
    log: silent,
  });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  if (runDir) rmSync(runDir, { recursive: true, force: true });
  return {
    mode: idle ? 'engine-idle' : exits ? 'engine-exits' : 'engine',
    candles: r.engine.candles,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    processMs: performance.now(),
    candlesPerSec: r.engine.candles / (wallMs / 1000),
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    fills: r.sim.fills,
    finalBalance: r.summary.finalBalance,
  };
}

/** The hand-written loop (hand-loop.ts) over the first `n` generated candles, timed in this process. */
function loopRun(n: number, exits: boolean): Figures {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const { count, fills, balance } = handLoop(candles(n), exits);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return {
    mode: exits ? 'loop-exits' : 'loop',
    candles: count,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    processMs: performance.now(),
    candlesPerSec: count / (wallMs / 1000),
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    fills,
    finalBalance: balance,
  };
}

/**
 * Reading the catalog: every M1 candle of the bundled sample (CSV month files, three instruments),
 * as a backtest reads its data; generated first if missing (outside the timing).
 */
async function catalogRun(): Promise<Figures> {
  const root = fileURLToPath(new URL('../../data/catalog', import.meta.url));
  await ensureSample(root);
  const catalog = new Catalog(root);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let count = 0;
  for (const instrument of SAMPLE.instruments) {
    for await (const b of catalog.candles({ instrument, granularity: 'M1' })) count += b.length;
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return {
    mode: 'catalog',
    candles: count,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    processMs: performance.now(),
    candlesPerSec: count / (wallMs / 1000),
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    fills: 0,
    finalBalance: 0,
  };
}

/** What the simulator alone costs per fill and per transaction, compiled (see simOnly). */
interface SimFloor {
  candles: number;
  idleMs: number;
  ordersMs: number;
  fills: number;
  transactions: number;
  usPerFill: number;
  nsPerTransaction: number;
}

/**
 * The simulator alone, warm: the generated candles fed straight to a SimBroker (no engine, no
 * strategy, no portfolio), once with no orders and once with a reversal every 25 candles carrying
 * the benchmark's take profit, stop loss and trailing stop, three rounds in one process, the
 * fastest of each. The difference per fill and per transaction is what the v20 simulator itself
 * costs once compiled: a floor under the engine's cost per fill (the data's cost cancels out).
 */
function simOnly(n: number): SimFloor {
  const instruments = loadInstruments();
  const round = (orders: boolean): { ms: number; fills: number; transactions: number } => {
    const sim = new SimBroker({
      instruments,
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    let transactions = 0;
    // Counted as notes: no fill's object is built (as in a sweep's trial or a run without a folder).
    const stop = sim.listenNotes(() => {
      transactions++;
    });
    let i = 0;
    let seq = 0;
    let side = 1;
    const t0 = performance.now();
    for (const batch of candles(n)) {
      for (let k = 0; k < batch.length; k++, i++) {
        sim.onEvent(batch[k]!);
        if (!orders || i % 25 !== 24) continue;
        const { long, short } = sim.ledger.position('EUR_USD');
        side = -side;
        const units = side * 10_000 - (long + short);
        if (units === 0) continue;
        const id = `b${++seq}`;
        const intent: OrderIntent = {
          kind: 'order',
          id,
          request: {
            type: 'MARKET',
            instrument: 'EUR_USD',
            units: String(units),
            takeProfitOnFill: { distance: EXITS.tp.toFixed(5) },
            stopLossOnFill: { distance: EXITS.sl.toFixed(5) },
            trailingStopLossOnFill: { distance: EXITS.trailing.toFixed(5) },
            clientExtensions: { id },
          },
        } as OrderIntent;
        sim.submit(intent);
      }
    }
    const ms = performance.now() - t0;
    stop();
    return { ms, fills: sim.stats.fills, transactions };
  };
  let idle = Infinity;
  let busy = { ms: Infinity, fills: 0, transactions: 0 };
  for (let r = 0; r < 3; r++) {
    idle = Math.min(idle, round(false).ms);
    const b = round(true);
    if (b.ms < busy.ms) busy = b;
  }
  const extra = busy.ms - idle;
  return {
    candles: n,
    idleMs: idle,
    ordersMs: busy.ms,
    fills: busy.fills,
    transactions: busy.transactions,
    usPerFill: (extra * 1000) / busy.fills,
    nsPerTransaction: (extra * 1e6) / busy.transactions,
  };
}

/** The simulator alone (`sim-only`), in a process of its own. */
function simChild(n: number): SimFloor {
  return JSON.parse(
    execFileSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', 'sim-only', '--candles', String(n)],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n')
      .pop()!,
  ) as SimFloor;
}

/**
 * Issue 36's figures from runs measured here: the engine with exits against its loop (runs
 * interleaved; medians, and the fastest of each), the simulator alone, the whole-process figures
 * with their floors, and a sweep trial's set-up (measured now).
 */
function issueTable(
  engines: readonly Figures[],
  loops: readonly Figures[],
  sim: SimFloor,
  whole: Record<string, unknown>,
  runs: number,
): IssueFigures {
  const mid = (xs: readonly Figures[]): number =>
    [...xs.map((x) => x.wallMs)].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const min = (xs: readonly Figures[]): number => Math.min(...xs.map((x) => x.wallMs));
  return {
    whole: whole as unknown as WholeFigures,
    exitsRatio: Number((mid(engines) / mid(loops)).toFixed(3)),
    exitsRatioFastest: Number((min(engines) / min(loops)).toFixed(3)),
    simUsPerFill: Number(sim.usPerFill.toFixed(2)),
    setup: measureSetup(false),
    setupOneSided: measureSetup(true),
    runs,
  };
}

function child(mode: string, n: number, nodeFlags: readonly string[] = []): Figures {
  const out = execFileSync(
    process.execPath,
    [
      ...nodeFlags,
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--child',
      mode,
      '--candles',
      String(n),
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as Figures;
}

/**
 * V8's default allocation-site pretenuring, which the fxflow command turns off (src/cli/v8-tuning.ts):
 * the engine runs again with it, `--runs` times, to show what the setting is worth.
 */
const V8_DEFAULT = ['--allocation-site-pretenuring'];

async function main(): Promise<void> {
  if (process.argv.includes('--whole')) {
    console.log(JSON.stringify(benchWholeProcess({ runs: Number(arg('runs', '3')) })));
    return;
  }
  const mode = arg('child', '');
  const n = Number(arg('candles', '1000000'));
  if (!Number.isInteger(n) || n < 1000) {
    console.error(`--candles must be a whole number of at least 1000 (got '${arg('candles', '')}')`);
    process.exitCode = 64;
    return;
  }
  if (process.argv.includes('--table')) {
    // Issue 36's table alone: the engine with exits and its loop (interleaved), the simulator alone,
    // the whole-process figures with their floors, and a sweep trial's set-up.
    const runs = Math.max(1, Number(arg('runs', '3')));
    const engines: Figures[] = [];
    const loops: Figures[] = [];
    for (let r = 0; r < runs; r++) {
      engines.push(child('engine-exits', n));
      loops.push(child('loop-exits', n));
    }
    const sim = simChild(n);
    const whole = benchWholeProcess({ runs });
    const table = issueTable(engines, loops, sim, whole, runs);
    for (const line of formatIssueTable(table)) console.log(line);
    console.log(JSON.stringify({ issue36: table }));
    return;
  }
  TO = Date.UTC(2019 + yearsFor(n), 0, 1);
  if (process.argv.includes('--startup')) {
    const startup = benchStartup(
      Math.max(1, Number(arg('runs', '3'))),
      process.argv.includes('--before') ? arg('before', '') : undefined,
    );
    console.log(formatStartup(startup));
    console.log(JSON.stringify({ startup }));
    return;
  }
  // Every run, engine and loop alike (and the latency bench in this process), has the V8 settings
  // the fxflow command applies at start; a child started with `--allocation-site-pretenuring`
  // keeps V8's default (see V8_DEFAULT).
  tuneV8();
  // `-warm`: the same run twice in one process, the second measured (compiled code, no JIT warm-up).
  const warm = mode.endsWith('-warm');
  const base = warm ? mode.slice(0, -'-warm'.length) : mode;
  if (base === 'data') {
    // The data alone: the generator's batches, counted (the floor every run here stands on).
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let count = 0;
    for (const b of candles(n)) count += b.length;
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    console.log(
      JSON.stringify({
        mode,
        candles: count,
        wallMs,
        cpuMs: (cpu.user + cpu.system) / 1000,
        processMs: performance.now(),
        candlesPerSec: count / (wallMs / 1000),
        peakRssMB: process.resourceUsage().maxRSS / 1024,
        fills: 0,
        finalBalance: 0,
      }),
    );
    return;
  }
  if (base === 'sim-only') {
    console.log(JSON.stringify(simOnly(n)));
    return;
  }
  if (base === 'engine-idle') {
    console.log(JSON.stringify(await engineRun(n, false, false, true)));
    return;
  }
  if (base === 'catalog') {
    console.log(JSON.stringify(await catalogRun()));
    return;
  }
  if (base === 'engine-exits-save') {
    console.log(JSON.stringify({ ...(await engineRun(n, true, true)), mode }));
    return;
  }
  if (base === 'engine' || base === 'engine-exits') {
    if (warm) await engineRun(n, base === 'engine-exits');
    console.log(JSON.stringify({ ...(await engineRun(n, base === 'engine-exits')), mode }));
    return;
  }
  if (base === 'loop' || base === 'loop-exits') {
    if (warm) loopRun(n, base === 'loop-exits');
    console.log(JSON.stringify({ ...loopRun(n, base === 'loop-exits'), mode }));
    return;
  }
  // Each measurement runs `--runs` times (default 3), engine and loop interleaved so both see the
  // same machine; the median run (by wall time) is reported, with the spread of the wall times.
  const runs = Math.max(1, Number(arg('runs', '3')));
  const modes = [
    'engine',
    'loop',
    'engine-exits',
    'loop-exits',
    'engine-warm',
    'loop-warm',
    'engine-exits-warm',
    'loop-exits-warm',
  ] as const;
  const samples = new Map<string, Figures[]>(
    [...modes, 'engine-v8-default', 'engine-exits-v8-default'].map((m) => [m, []]),
  );
  // Peak memory is compared between 1M and a quarter of it, each the median of `runs` runs: one
  // run's peak RSS swings with when V8 collects (150 to 275 MB for the same run).
  const quarters: Figures[] = [];
  for (let r = 0; r < runs; r++) {
    for (const m of modes) samples.get(m)!.push(child(m, n));
    samples.get('engine-v8-default')!.push(child('engine', n, V8_DEFAULT));
    samples.get('engine-exits-v8-default')!.push(child('engine-exits', n, V8_DEFAULT));
    quarters.push(child('engine', Math.floor(n / 4)));
  }
  const medianOf = (xs: readonly number[]): number =>
    [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const median = (m: string): Figures => {
    const xs = [...samples.get(m)!].sort((a, b) => a.wallMs - b.wallMs);
    const mid = xs[Math.floor((xs.length - 1) / 2)]!;
    const fills = new Set(xs.map((x) => `${x.fills}/${x.finalBalance}`));
    if (fills.size !== 1)
      throw new Error(
        `${m}: runs disagree on fills/balance (${[...fills].join(', ')}): the backtest is not deterministic`,
      );
    return { ...mid, wallMinMs: xs[0]!.wallMs, wallMaxMs: xs[xs.length - 1]!.wallMs };
  };
  const engine = median('engine');
  const loop = median('loop');
  const quarter = {
    ...quarters.sort((a, b) => a.wallMs - b.wallMs)[Math.floor((quarters.length - 1) / 2)]!,
    peakRssMB: medianOf(quarters.map((q) => q.peakRssMB)),
  };
  const engineRss = medianOf(samples.get('engine')!.map((x) => x.peakRssMB));
  const engineX = median('engine-exits');
  const loopX = median('loop-exits');
  const engineW = median('engine-warm');
  const loopW = median('loop-warm');
  const engineXW = median('engine-exits-warm');
  const loopXW = median('loop-exits-warm');
  // Once each: the CLI's default run folder, reading real CSV files, and the breakdown (the data
  // alone; the engine with the same signals and no orders).
  const engineXS = child('engine-exits-save', n);
  const catalog = child('catalog', n);
  const data = child('data', n);
  const idle = child('engine-idle', n);
  const floor = simChild(n);
  const engineD = median('engine-v8-default');
  const engineXD = median('engine-exits-v8-default');
  const ratioW = loopW.candlesPerSec / engineW.candlesPerSec;
  const ratioXW = loopXW.candlesPerSec / engineXW.candlesPerSec;
  const ratio = loop.candlesPerSec / engine.candlesPerSec;
  const ratioX = loopX.candlesPerSec / engineX.candlesPerSec;
  // The fastest run of each side: this machine's noise only ever adds time, so the ratio of the
  // fastest runs is the steadiest view of what the code costs (the targets are judged on medians).
  const fastest = (e: Figures, l: Figures): number => (e.wallMinMs ?? e.wallMs) / (l.wallMinMs ?? l.wallMs);
  const ratioFastest = fastest(engine, loop);
  const ratioFastestX = fastest(engineX, loopX);
  const cpuRatio = engine.cpuMs / loop.cpuMs;
  const cpuRatioX = engineX.cpuMs / loopX.cpuMs;
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
  const row = (name: string, x: Figures): string[] => [
    name,
    fmt(x.candles),
    (x.wallMs / 1000).toFixed(3),
    x.wallMinMs !== undefined && x.wallMaxMs !== undefined
      ? `${(x.wallMinMs / 1000).toFixed(2)}–${(x.wallMaxMs / 1000).toFixed(2)}`
      : '',
    (x.cpuMs / 1000).toFixed(3),
    (x.processMs / 1000).toFixed(3),
    fmt(x.candlesPerSec),
    x.peakRssMB.toFixed(1),
    String(x.fills),
    x.finalBalance.toFixed(2),
  ];
  const rows = [
    [
      '',
      'candles',
      'wall s',
      'wall range s',
      'cpu s',
      'process s',
      'candles/s',
      'peak RSS MB',
      'fills',
      'balance',
    ],
    row('engine', engine),
    row('hand loop', loop),
    row('engine ¼', quarter),
    row('engine, TP/SL/trailing', engineX),
    row('hand loop, TP/SL/trailing', loopX),
    row('engine, warm', engineW),
    row('hand loop, warm', loopW),
    row('engine, TP/SL/trailing, warm', engineXW),
    row('hand loop, TP/SL/trailing, warm', loopXW),
    row('engine, TP/SL/trailing, run folder', engineXS),
    row('catalog read (sample M1 CSV)', catalog),
    row('data only (the generator)', data),
    row('engine, signals, no orders', idle),
    row('engine, V8 default pretenuring', engineD),
    row('engine, TP/SL/trailing, V8 default pretenuring', engineXD),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  const rssGrowth = engineRss / quarter.peakRssMB;
  console.log(
    `engine is ${ratio.toFixed(2)}× slower than the hand-written loop (target ≤ 2×); peak RSS ×${rssGrowth.toFixed(2)} for 4× the candles (medians of ${runs} runs: ${engineRss.toFixed(0)} MB and ${quarter.peakRssMB.toFixed(0)} MB)`,
  );
  console.log(
    `with TP/SL/trailing on every entry: engine ${ratioX.toFixed(2)}× slower than its hand-written loop`,
  );
  console.log(
    `in CPU time (steadier on a shared machine): ${cpuRatio.toFixed(2)}×, with TP/SL/trailing ${cpuRatioX.toFixed(2)}×`,
  );
  console.log(
    `fastest run of each side: ${ratioFastest.toFixed(2)}×, with TP/SL/trailing ${ratioFastestX.toFixed(2)}× (engine ${((engine.wallMinMs ?? engine.wallMs) / 1000).toFixed(3)} s and ${((engineX.wallMinMs ?? engineX.wallMs) / 1000).toFixed(3)} s)`,
  );
  console.log(
    `warm (the second run in a process: no JIT warm-up): ${ratioW.toFixed(2)}×, with TP/SL/trailing ${ratioXW.toFixed(2)}×`,
  );
  // Where the engine's time goes (cold runs, one each, so rough): data, per-candle engine work, fills.
  const perFill = (x: Figures): number => ((x.wallMs - idle.wallMs) * 1000) / x.fills; // µs
  console.log(
    `breakdown: data ${(data.wallMs / 1000).toFixed(3)} s; engine per candle (signals, no orders) +${((idle.wallMs - data.wallMs) / 1000).toFixed(3)} s; ` +
      `fills +${((engine.wallMs - idle.wallMs) / 1000).toFixed(3)} s (${perFill(engine).toFixed(1)} µs a fill), with TP/SL/trailing +${((engineX.wallMs - idle.wallMs) / 1000).toFixed(3)} s (${perFill(engineX).toFixed(1)} µs a fill); the loops: ${((loop.wallMs - data.wallMs) / 1000).toFixed(3)} s and ${((loopX.wallMs - data.wallMs) / 1000).toFixed(3)} s over the data`,
  );
  console.log(
    `the simulator alone, compiled (no engine; a reversal every 25 candles with TP/SL/trailing, fastest of 3 rounds in one process): ` +
      `${floor.usPerFill.toFixed(2)} µs a fill, ${floor.nsPerTransaction.toFixed(0)} ns a transaction (${floor.fills} fills, ${floor.transactions} transactions; ${floor.idleMs.toFixed(0)} ms without orders, ${floor.ordersMs.toFixed(0)} ms with)`,
  );
  console.log(
    `with V8's default allocation-site pretenuring (which fxflow turns off): engine ${(engineD.wallMs / 1000).toFixed(3)} s (${((engineD.wallMinMs ?? 0) / 1000).toFixed(2)}–${((engineD.wallMaxMs ?? 0) / 1000).toFixed(2)}), ` +
      `with TP/SL/trailing ${(engineXD.wallMs / 1000).toFixed(3)} s (${((engineXD.wallMinMs ?? 0) / 1000).toFixed(2)}–${((engineXD.wallMaxMs ?? 0) / 1000).toFixed(2)}); ratios to the loops ${(loop.candlesPerSec / engineD.candlesPerSec).toFixed(2)}× and ${(loopX.candlesPerSec / engineXD.candlesPerSec).toFixed(2)}×`,
  );
  if (engine.fills !== loop.fills)
    console.log(`note: fills differ (engine ${engine.fills}, loop ${loop.fills})`);
  if (engineX.fills !== loopX.fills)
    console.log(`note: fills differ with exits (engine ${engineX.fills}, loop ${loopX.fills})`);
  // Paper/live: the runner against a sandbox on loopback, price line received → order request written.
  const latency = await benchLatency();
  // Start-up, whole process: compiled build against the sources (startup.ts).
  const startup = benchStartup(runs);
  console.log(formatStartup(startup));
  // What a user waits for from the command line (issue 27), beside the plain-Node floor.
  const wholeProcess = benchWholeProcess({ runs });
  const issue36 = issueTable(
    samples.get('engine-exits')!,
    samples.get('loop-exits')!,
    floor,
    wholeProcess,
    runs,
  );
  for (const line of formatIssueTable(issue36)) console.log(line);
  const brief = (x: Figures): Record<string, number> => ({
    candlesPerSec: Math.round(x.candlesPerSec),
    wallMs: Math.round(x.wallMs),
    wallMinMs: Math.round(x.wallMinMs ?? x.wallMs),
    wallMaxMs: Math.round(x.wallMaxMs ?? x.wallMs),
    cpuMs: Math.round(x.cpuMs),
    processMs: Math.round(x.processMs),
    peakRssMB: Math.round(x.peakRssMB),
    fills: x.fills,
  });
  console.log(
    JSON.stringify({
      candles: engine.candles,
      runs,
      engine: brief(engine),
      loop: brief(loop),
      ratio: Number(ratio.toFixed(3)),
      cpuRatio: Number(cpuRatio.toFixed(3)),
      ratioFastest: Number(ratioFastest.toFixed(3)),
      quarter: { candles: quarter.candles, peakRssMB: Math.round(quarter.peakRssMB) },
      rssGrowth: Number(rssGrowth.toFixed(3)),
      exits: {
        engine: brief(engineX),
        loop: brief(loopX),
        ratio: Number(ratioX.toFixed(3)),
        cpuRatio: Number(cpuRatioX.toFixed(3)),
        ratioFastest: Number(ratioFastestX.toFixed(3)),
      },
      runFolder: { exits: brief(engineXS) },
      v8Default: { engine: brief(engineD), exits: { engine: brief(engineXD) } },
      breakdown: {
        dataMs: Math.round(data.wallMs),
        idleMs: Math.round(idle.wallMs),
        perFillUs: Number(perFill(engine).toFixed(2)),
        perFillExitsUs: Number(perFill(engineX).toFixed(2)),
      },
      simFloor: {
        usPerFill: Number(floor.usPerFill.toFixed(2)),
        nsPerTransaction: Math.round(floor.nsPerTransaction),
        fills: floor.fills,
        transactions: floor.transactions,
      },
      catalog: {
        candles: catalog.candles,
        candlesPerSec: Math.round(catalog.candlesPerSec),
        wallMs: Math.round(catalog.wallMs),
        peakRssMB: Math.round(catalog.peakRssMB),
      },
      warm: {
        engine: brief(engineW),
        loop: brief(loopW),
        ratio: Number(ratioW.toFixed(3)),
        exits: { engine: brief(engineXW), loop: brief(loopXW), ratio: Number(ratioXW.toFixed(3)) },
      },
      targets: {
        candlesPerSec: engine.candlesPerSec >= 1_000_000,
        ratio: ratio <= 2,
        exitsCandlesPerSec: engineX.candlesPerSec >= 1_000_000,
        exitsRatio: ratioX <= 2,
        latencyP99: latency.p99 < 1,
      },
      latency,
      startup,
      wholeProcess,
      issue36,
    }),
  );
}

await main();
