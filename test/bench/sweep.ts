/**
 * Sweep bench (`node --import tsx test/bench/sweep.ts`): the research layer's figures.
 * A trial's set-up (the time it spends getting its candles) is measured beside each sweep: kept by
 * the worker from an earlier trial against built and priced by the trial itself (`--setup A|B`).
 *
 * - Sweep A: 100 trials of the SMA crossover with TP/SL/trailing exits (`sma-cross-exits.ts`),
 *   fast 5…50 × slow 60…240 (a 10 × 10 grid), over one year of generated EUR_USD M1 (~370k candles).
 * - Sweep B: 20 trials of `strategies/sma-cross.ts`, fast 5, 10, 15, 20 × slow 30, 40, 50, 60, 80,
 *   over 100k M1 candles.
 * Each with 1 and 2 workers, each in its own process (so peak RSS is its own), against one
 * backtest of the same data in its own process. As `fxflow optimize` runs them, the process's own
 * thread is one of the workers: 1 worker starts no thread, 2 start one (src/research/pool.ts). Then the same sweep through Redis: a redis-server
 * the bench starts on a free port, the coordinator (`runSweep` on a `RedisTrialRunner`) and two
 * `fxflow worker --threads 1` processes reading the same candles from a catalog written for the
 * bench (decoded once into its binary cache first); its trials/s against the 2-thread figure
 * (target within 15%) and its peak RSS (each worker process's, read from /proc before it stops).
 * With `--rounds N`, the 2-thread and the Redis sweeps alternate N times (medians): the machine is
 * shared, so the two are compared interleaved. Then the adaptive search against random search on
 * sweep A's real figures: over 25 seeds, the number of trials until a top-5% trial of the grid.
 *
 *   node --import tsx test/bench/sweep.ts                 # everything
 *   node --import tsx test/bench/sweep.ts --quick         # sweep B only
 *   node --import tsx test/bench/sweep.ts --rounds 3      # 2 threads vs Redis, 3 interleaved rounds
 *   node --import tsx test/bench/sweep.ts --no-queue      # without Redis
 * Prints a table, then one JSON line with the figures.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog } from '../../src/adapters/catalog/catalog.ts';
import { dataCatalog } from '../../src/app/sources.ts';
import { RedisTrialRunner } from '../../src/research/queue.ts';
import { catalogSourceHash } from '../../src/research/series-cache.ts';
import { loadSweepData } from '../../src/research/sweep-data.ts';
import { canonical, sha256, sweepHashes } from '../../src/research/sweep.ts';
import { fileURLToPath } from 'node:url';
import { syntheticBatches } from '../../src/adapters/catalog/synthetic.ts';
import { loadConfig } from '../../src/app/config.ts';
import { loadStrategy } from '../../src/app/load-strategy.ts';
import { tuneV8 } from '../../src/cli/v8-tuning.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { RandomSearch, TpeSearch, simulateSearch, type Search } from '../../src/research/search.ts';
import { decodeSeries, type SharedSeries } from '../../src/research/shared-series.ts';
import { buildSpace } from '../../src/research/space.ts';
import { runSweep } from '../../src/research/sweep.ts';
import { WorkerPool } from '../../src/research/pool.ts';
import { runTrial } from '../../src/research/trial.ts';
import { formatSetup, type SetupFigures } from './issue-table.ts';

tuneV8();
const FROM = Date.UTC(2019, 0, 1);
const SEED = 20240101;
const EXITS = fileURLToPath(new URL('./sma-cross-exits.ts', import.meta.url));
const CROSS = fileURLToPath(new URL('../../strategies/sma-cross.ts', import.meta.url));

interface Case {
  name: string;
  file: string;
  params: string[];
  candles: number;
}
const CASES: Record<string, Case> = {
  A: { name: 'A', file: EXITS, params: ['fast=5:50:5', 'slow=60:240:20'], candles: 370_000 },
  B: {
    name: 'B',
    file: CROSS,
    params: ['fast=5,10,15,20', 'slow=30,40,50,60,80', 'granularity=M1'],
    candles: 100_000,
  },
};

/** The first n generated EUR_USD M1 candles, decoded into shared memory. */
async function data(n: number): Promise<{ series: SharedSeries; to: number }> {
  let left = n;
  let last = FROM;
  const s = await decodeSeries(
    'EUR_USD',
    'M1',
    (async function* () {
      for (const b of syntheticBatches({
        instrument: 'EUR_USD',
        granularity: 'M1',
        from: FROM,
        to: Date.UTC(2021, 0, 1),
        seed: SEED,
      })) {
        const take = b.length >= left ? b.slice(0, left) : b;
        left -= take.length;
        last = take[take.length - 1]!.at;
        yield take;
        if (left === 0) return;
      }
    })(),
  );
  return { series: s, to: last };
}

function configFor(to: number, catalog?: string): ReturnType<typeof loadConfig> {
  return loadConfig(undefined, {
    run: {
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: new Date(FROM).toISOString(),
      to: new Date(to).toISOString(),
    },
    costs: { financing: false },
    ...(catalog ? { data: { catalog } } : {}),
  });
}

/** A catalog holding the first n generated EUR_USD M1 candles (what `fxflow worker` processes read). */
async function writeCatalog(n: number, dir: string): Promise<number> {
  let left = n;
  let last = FROM;
  await new Catalog(dir).write(
    'EUR_USD',
    'M1',
    (function* () {
      for (const b of syntheticBatches({
        instrument: 'EUR_USD',
        granularity: 'M1',
        from: FROM,
        to: Date.UTC(2021, 0, 1),
        seed: SEED,
      })) {
        const take = b.length >= left ? b.slice(0, left) : b;
        left -= take.length;
        last = take[take.length - 1]!.at;
        yield take;
        if (left === 0) return;
      }
    })(),
    {
      meta: {
        synthetic: true,
        sides: 'bid/ask',
        sources: [
          {
            file: 'sweep bench',
            sha256: '',
            bytes: 0,
            format: 'synthetic',
            rows: 0,
            importedAt: new Date().toISOString(),
          },
        ],
      },
    },
  );
  return last;
}

const BIN = fileURLToPath(new URL('../../bin/fxflow.js', import.meta.url));

/** Peak resident set of a running process (VmHWM), in MB. */
function peakRssMB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * Child: the sweep through Redis. Decodes the bench catalog once (filling its binary cache, as a
 * first sweep over a catalog does), starts two `fxflow worker --threads 1` processes and waits
 * until they wait for trials (workers are long-running: their process start is not a sweep's),
 * then opens the queue and runs the sweep. Its wall time includes each worker's preparation for the
 * sweep (reading the manifest, loading the strategy, the data from the binary cache and its hash
 * check, starting its thread), as the threads' figure includes starting the threads.
 */
async function queueChild(c: Case, url: string, catalog: string, to: number): Promise<void> {
  const config = configFor(to, catalog);
  const loaded = await loadStrategy(c.file, []);
  const space = buildSpace(loaded.params, c.params, []);
  const from = FROM;
  const source = await dataCatalog(catalog);
  const data = await loadSweepData({
    strategy: loaded.strategy,
    name: loaded.name,
    params: space.params(0),
    currency: config.account.currency,
    instruments: loadInstruments(),
    candles: source.candles,
    available: source.available,
    from,
    to,
    cache: { dir: join(catalog, '.cache'), sourceHash: (i, g) => catalogSourceHash(catalog, i, g, from, to) },
  });
  const { strategyHash, configHash } = sweepHashes(loaded.file, config);
  const sweepId = `${loaded.name}-bench-${sha256(canonical({ strategyHash, configHash, dataHash: data.dataHash })).slice(0, 10)}`;
  const workers: ChildProcess[] = [];
  const logs: string[] = [];
  const waiting: Promise<void>[] = [];
  for (let i = 0; i < 2; i++) {
    const w = spawn(process.execPath, [BIN, 'worker', '--queue', url, '--threads', '1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    waiting.push(
      new Promise<void>((res, rej) => {
        w.stderr!.on('data', (d: Buffer) => {
          log += d.toString();
          if (log.includes('waiting for trials')) res();
        });
        w.once('exit', (code) => rej(new Error(`fxflow worker exited (${code}): ${log}`)));
      }),
    );
    w.on('close', () => logs.push(log));
    workers.push(w);
  }
  await Promise.all(waiting);
  const runner = await RedisTrialRunner.open(url, {
    sweepId,
    strategyName: loaded.name,
    strategyFile: loaded.file,
    strategyHash,
    config,
    configHash,
    dataHash: data.dataHash,
    data: { catalog },
    subscriptionParams: space.params(0),
    createdAt: new Date().toISOString(),
  });
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-sweep-bench-'));
  try {
    const r = await runSweep({
      strategyFile: loaded.file,
      strategyName: loaded.name,
      space,
      search: 'grid',
      trials: space.size,
      seed: 1,
      objective: 'sharpe',
      workers: 2,
      batch: 1,
      lag: 2,
      config,
      series: data.series,
      dataHash: data.dataHash,
      dir,
      pool: Promise.resolve(runner),
    });
    const workerRssMB = workers.map((w) => peakRssMB(w.pid!));
    const exits = workers.map((w) => new Promise<void>((res) => w.once('close', () => res())));
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(exits);
    const perWorker = logs.map((l) => (l.match(/trial \d+ of .* done/g) ?? []).length);
    process.stdout.write(
      `${JSON.stringify({ trials: r.ran, wallMs: r.wallMs, trialsPerSecond: r.trialsPerSecond, failed: r.failed, coordinatorRssMB: process.resourceUsage().maxRSS / 1024, workerRssMB, perWorker })}\n`,
    );
  } finally {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A redis-server for the bench on a free port (no disk); resolves once it accepts connections. */
async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await new Promise<number>((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) res();
    });
    child.once('exit', (code) => rej(new Error(`redis-server exited (${code}): ${out}`)));
  });
  return { url: `redis://127.0.0.1:${port}/0`, child };
}

/** Child: one sweep (or one backtest with --single), prints its figures as JSON. */
async function child(c: Case, workers: number, single: boolean): Promise<void> {
  const { series, to } = await data(c.candles);
  const config = configFor(to);
  const loaded = await loadStrategy(c.file, []);
  const space = buildSpace(loaded.params, c.params, []);
  if (single) {
    const t0 = performance.now();
    const o = await runTrial({
      loaded: { ...loaded },
      params: space.params(0),
      config,
      instruments: loadInstruments(),
      series: new Map([['EUR_USD:M1', series]]),
    });
    process.stdout.write(
      `${JSON.stringify({ wallMs: performance.now() - t0, peakRssMB: process.resourceUsage().maxRSS / 1024, trades: o.metrics.trades })}\n`,
    );
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-sweep-bench-'));
  // CPU time of the whole process (every thread) over the sweep: a figure the machine's load changes less than the wall time.
  const cpu0 = process.cpuUsage();
  // As `fxflow optimize` runs it: this thread is one of the workers (1 worker starts no thread).
  const pool = WorkerPool.start(
    workers,
    { strategyFile: loaded.file },
    { loaded, instruments: loadInstruments() },
  );
  const r = await runSweep({
    strategyFile: loaded.file,
    strategyName: loaded.name,
    space,
    search: 'grid',
    trials: space.size,
    seed: 1,
    objective: 'sharpe',
    workers,
    batch: 1,
    lag: 2,
    config,
    series: [series],
    dataHash: `bench-${c.name}`,
    dir,
    pool,
  });
  rmSync(dir, { recursive: true, force: true });
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(
    `${JSON.stringify({ trials: r.ran, wallMs: r.wallMs, trialsPerSecond: r.trialsPerSecond, cpuMsPerTrial: (cpu.user + cpu.system) / 1000 / r.ran, peakRssMB: process.resourceUsage().maxRSS / 1024, workerStartMs: r.workerStartMs, failed: r.failed })}\n`,
  );
}

/** Child: the whole grid's objective (Sharpe) by point, for the search comparison. */
async function table(c: Case): Promise<void> {
  const { series, to } = await data(c.candles);
  const config = configFor(to);
  const loaded = await loadStrategy(c.file, []);
  const space = buildSpace(loaded.params, c.params, []);
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-sweep-bench-'));
  const r = await runSweep({
    strategyFile: loaded.file,
    strategyName: loaded.name,
    space,
    search: 'grid',
    trials: space.size,
    seed: 1,
    objective: 'sharpe',
    workers: 2,
    batch: 1,
    lag: 2,
    config,
    series: [series],
    dataHash: `bench-${c.name}`,
    dir,
  });
  const { readFileSync } = await import('node:fs');
  const rows = readFileSync(join(dir, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { trial: number; objective: number | null });
  rmSync(dir, { recursive: true, force: true });
  void r;
  process.stdout.write(`${JSON.stringify(rows.map((x) => x.objective ?? -Infinity))}\n`);
}

/**
 * Child: a trial's set-up, the time it spends getting its candles (runTrial's candleMs). The first
 * 20 grid points in this thread, trial by trial alternated: on the sweep's one series map, where a
 * worker keeps the candles the first trial built and priced, and on a map where each trial builds
 * them from the shared columns and prices them (as every trial did before).
 */
async function setup(c: Case, oneSided: boolean): Promise<void> {
  const d = await data(c.candles);
  const to = d.to;
  let series = d.series;
  let config = configFor(to);
  if (oneSided) {
    // Bid-only data (ask = bid) with a fixed spread of 1.2 pips: the spread model has work to do.
    const prices = new Float64Array(series.prices);
    for (let p = 0; p < prices.length; p += 8) prices.set(prices.subarray(p, p + 4), p + 4);
    series = { ...series, prices, origin: { source: 'bench', sides: 'bid', synthetic: true } };
    config = { ...config, data: { ...config.data, spread: 'fixed', spreadPips: 1.2 } };
  }
  const loaded = await loadStrategy(c.file, []);
  const space = buildSpace(loaded.params, c.params, []);
  const instruments = loadInstruments();
  const shared = new Map([['EUR_USD:M1', series]]);
  // The built side: its own map (its own watch, found once, as on the kept side), and data options
  // that differ in name only from trial to trial, so nothing kept matches and each trial builds.
  const other = new Map(shared);
  const rename = (i: number): typeof config => ({
    ...config,
    data: { ...config.data, [`unused${i}`]: i } as typeof config.data,
  });
  await runTrial({ loaded, params: space.params(0), config, instruments, series: shared });
  await runTrial({ loaded, params: space.params(0), config: rename(-1), instruments, series: other });
  const kept: { candleMs: number; setupMs: number; wallMs: number }[] = [];
  const built: { candleMs: number; setupMs: number; wallMs: number }[] = [];
  let same = 0;
  const n = Math.min(20, space.size);
  for (let i = 0; i < n; i++) {
    const a = await runTrial({ loaded, params: space.params(i), config, instruments, series: shared });
    const b = await runTrial({
      loaded,
      params: space.params(i),
      config: rename(i),
      instruments,
      series: other,
    });
    kept.push(a);
    built.push(b);
    if (
      JSON.stringify(a.metrics) === JSON.stringify(b.metrics) &&
      JSON.stringify(a.returns) === JSON.stringify(b.returns)
    )
      same++;
  }
  const pick = (xs: { candleMs: number; setupMs: number; wallMs: number }[]) => ({
    candleMs: median(xs.map((x) => x.candleMs)),
    setupMs: median(xs.map((x) => x.setupMs)),
    wallMs: median(xs.map((x) => x.wallMs)),
  });
  process.stdout.write(`${JSON.stringify({ trials: n, same, kept: pick(kept), built: pick(built) })}\n`);
}

function spawnChild(args: string[]): Record<string, unknown> {
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const at = (k: string): string | undefined => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : undefined);
  if (at('--child'))
    return child(CASES[at('--child')!]!, Number(at('--workers') ?? 1), argv.includes('--single'));
  if (at('--table')) return table(CASES[at('--table')!]!);
  if (at('--setup')) return setup(CASES[at('--setup')!]!, argv.includes('--one-sided'));
  if (at('--queue-child'))
    return queueChild(CASES[at('--queue-child')!]!, at('--url')!, at('--catalog')!, Number(at('--to')));
  const cases = argv.includes('--quick') ? [CASES.B!] : [CASES.A!, CASES.B!];
  const rounds = Math.max(1, Number(at('--rounds') ?? 1));
  const queue = !argv.includes('--no-queue') && spawnSync('redis-server', ['--version']).status === 0;
  if (!argv.includes('--no-queue') && !queue)
    console.log('(no redis-server on this machine: the Redis figures are left out)');
  const redis = queue ? await startRedis() : undefined;
  const figures: Record<string, unknown> = {};
  try {
    for (const c of cases) {
      const single = spawnChild(['--child', c.name, '--single']);
      const one = spawnChild(['--child', c.name, '--workers', '1']);
      // 2 threads and Redis alternate (round by round) so the machine's load falls on both alike.
      const twos: Record<string, unknown>[] = [];
      const queued: Record<string, unknown>[] = [];
      let catalog: string | undefined;
      let to = 0;
      if (redis) {
        catalog = mkdtempSync(join(tmpdir(), 'fxflow-sweep-bench-catalog-'));
        to = await writeCatalog(c.candles, catalog);
      }
      for (let k = 0; k < rounds; k++) {
        twos.push(spawnChild(['--child', c.name, '--workers', '2']));
        if (redis && catalog)
          queued.push(
            spawnChild([
              '--queue-child',
              c.name,
              '--url',
              `${redis.url}?name=bench-${c.name}-${k}`,
              '--catalog',
              catalog,
              '--to',
              String(to),
            ]),
          );
      }
      if (catalog && existsSync(catalog)) rmSync(catalog, { recursive: true, force: true });
      const byRate = (xs: Record<string, unknown>[]): Record<string, unknown> =>
        [...xs].sort((a, b) => (a.trialsPerSecond as number) - (b.trialsPerSecond as number))[
          (xs.length - 1) >> 1
        ]!;
      const two = byRate(twos);
      const speedup = (two.trialsPerSecond as number) / (one.trialsPerSecond as number);
      figures[c.name] = {
        candles: c.candles,
        single,
        workers1: one,
        workers2: two,
        speedup,
        ...(rounds > 1 ? { workers2Rounds: twos.map((x) => x.trialsPerSecond) } : {}),
      };
      console.log(`sweep ${c.name}: ${one.trials} trials × ${c.candles.toLocaleString('en-US')} M1 candles`);
      console.log(
        `  one backtest:  ${((single.wallMs as number) / 1000).toFixed(2)} s, peak RSS ${(single.peakRssMB as number).toFixed(0)} MB`,
      );
      for (const [k, f] of [
        ['1 worker ', one],
        ['2 workers', two],
      ] as const) {
        console.log(
          `  ${k}:     ${f.failed ? `${f.failed} FAILED TRIALS; ` : ''}${(f.trialsPerSecond as number).toFixed(2)} trials/s (${((f.wallMs as number) / 1000).toFixed(1)} s; CPU ${(f.cpuMsPerTrial as number).toFixed(0)} ms per trial, all threads), peak RSS ${(f.peakRssMB as number).toFixed(0)} MB, worker start ${(f.workerStartMs as number[]).join('/')} ms`,
        );
      }
      console.log(
        `  2 workers / 1 worker: ${speedup.toFixed(2)}×; peak RSS 2 workers / one backtest: ${((two.peakRssMB as number) / (single.peakRssMB as number)).toFixed(2)}×`,
      );
      for (const [label, extra] of [
        ['bid/ask data, native spread', []],
        ['bid-only data, fixed 1.2 pips', ['--one-sided']],
      ] as const) {
        const st = spawnChild(['--setup', c.name, ...extra]) as unknown as SetupFigures;
        (figures[c.name] as Record<string, unknown>)[extra.length ? 'setupOneSided' : 'setup'] = st;
        console.log(`  ${formatSetup(label, st)}`);
      }
      if (queued.length > 0) {
        const q = byRate(queued);
        const ratio = (q.trialsPerSecond as number) / (two.trialsPerSecond as number);
        const rss = q.workerRssMB as number[];
        const total = (q.coordinatorRssMB as number) + rss.reduce((a, b) => a + b, 0);
        (figures[c.name] as Record<string, unknown>).redis = {
          ...q,
          ratioToThreads: ratio,
          ...(rounds > 1 ? { rounds: queued.map((x) => x.trialsPerSecond) } : {}),
        };
        console.log(
          `  Redis, 2 × fxflow worker --threads 1: ${q.failed ? `${q.failed} FAILED TRIALS; ` : ''}${(q.trialsPerSecond as number).toFixed(2)} trials/s (${((q.wallMs as number) / 1000).toFixed(1)} s; trials per worker ${(q.perWorker as number[]).join('/')}), ${ratio.toFixed(2)}× the 2 threads (target ≥ 0.85)${rounds > 1 ? `; median of ${rounds} interleaved rounds: threads ${twos.map((x) => (x.trialsPerSecond as number).toFixed(2)).join(' ')}, Redis ${queued.map((x) => (x.trialsPerSecond as number).toFixed(2)).join(' ')}` : ''}`,
        );
        console.log(
          `    peak RSS: each worker process ${rss.map((x) => x.toFixed(0)).join(' / ')} MB (${(Math.max(...rss) / (single.peakRssMB as number)).toFixed(2)}× one backtest), coordinator ${(q.coordinatorRssMB as number).toFixed(0)} MB; all three ${total.toFixed(0)} MB (${(total / (single.peakRssMB as number)).toFixed(2)}× one backtest)`,
        );
      }
    }
  } finally {
    redis?.child.kill('SIGTERM');
  }
  if (!argv.includes('--quick')) {
    // Adaptive vs random on sweep A's real figures: trials until a top-5% point, 25 seeds.
    const values = spawnChild(['--table', 'A']) as unknown as number[];
    const loaded = await loadStrategy(CASES.A!.file, []);
    const space = buildSpace(loaded.params, CASES.A!.params, []);
    const f = (p: number): number => values[space.validPoints().indexOf(p)]!;
    const sorted = [...values].sort((a, b) => b - a);
    const threshold = sorted[Math.ceil(values.length * 0.05) - 1]!;
    const hit = (s: Search): number => {
      const order = simulateSearch(s, f, values.length, 1, 2);
      return order.findIndex((p) => f(p) >= threshold) + 1;
    };
    const seeds = Array.from({ length: 25 }, (_, i) => 1 + i * 7919);
    const tpe = seeds.map((s) => hit(new TpeSearch(space, s)));
    const rnd = seeds.map((s) => hit(new RandomSearch(space, s)));
    figures.search = { tpeMedian: median(tpe), randomMedian: median(rnd), tpe, random: rnd };
    console.log(
      `search on sweep A's figures (top 5% = ${Math.ceil(values.length * 0.05)} of ${values.length}; 25 seeds): tpe median ${median(tpe)} trials [${tpe.join(' ')}], random median ${median(rnd)} [${rnd.join(' ')}]`,
    );
  }
  console.log(JSON.stringify(figures));
}

await main();
