/**
 * Sweep bench (`node --import tsx test/bench/sweep.ts`): the research layer's figures.
 *
 * - Sweep A: 100 trials of the SMA crossover with TP/SL/trailing exits (`sma-cross-exits.ts`),
 *   fast 5…50 × slow 60…240 (a 10 × 10 grid), over one year of generated EUR_USD M1 (~370k candles).
 * - Sweep B: 20 trials of `strategies/sma-cross.ts`, fast 5, 10, 15, 20 × slow 30, 40, 50, 60, 80,
 *   over 100k M1 candles.
 * Each with 1 and 2 worker threads, each in its own process (so peak RSS is its own), against one
 * backtest of the same data in its own process. Then the adaptive search against random search on
 * sweep A's real figures: over 25 seeds, the number of trials until a top-5% trial of the grid.
 *
 *   node --import tsx test/bench/sweep.ts            # everything
 *   node --import tsx test/bench/sweep.ts --quick    # sweep B only
 * Prints a table, then one JSON line with the figures.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticBatches } from '../../src/adapters/catalog/synthetic.ts';
import { loadConfig } from '../../src/cli/config.ts';
import { loadStrategy } from '../../src/cli/load-strategy.ts';
import { tuneV8 } from '../../src/cli/v8-tuning.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { RandomSearch, TpeSearch, simulateSearch, type Search } from '../../src/research/search.ts';
import { decodeSeries, type SharedSeries } from '../../src/research/shared-series.ts';
import { buildSpace } from '../../src/research/space.ts';
import { runSweep } from '../../src/research/sweep.ts';
import { runTrial } from '../../src/research/trial.ts';

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
  B: { name: 'B', file: CROSS, params: ['fast=5,10,15,20', 'slow=30,40,50,60,80', 'granularity=M1'], candles: 100_000 },
};

/** The first n generated EUR_USD M1 candles, decoded into shared memory. */
async function data(n: number): Promise<{ series: SharedSeries; to: number }> {
  let left = n;
  let last = FROM;
  const s = await decodeSeries('EUR_USD', 'M1', (async function* () {
    for (const b of syntheticBatches({ instrument: 'EUR_USD', granularity: 'M1', from: FROM, to: Date.UTC(2021, 0, 1), seed: SEED })) {
      const take = b.length >= left ? b.slice(0, left) : b;
      left -= take.length;
      last = take[take.length - 1]!.at;
      yield take;
      if (left === 0) return;
    }
  })());
  return { series: s, to: last };
}

function configFor(to: number): ReturnType<typeof loadConfig> {
  return loadConfig(undefined, { run: { instrument: 'EUR_USD', granularity: 'M1', from: new Date(FROM).toISOString(), to: new Date(to).toISOString() }, costs: { financing: false } });
}

/** Child: one sweep (or one backtest with --single), prints its figures as JSON. */
async function child(c: Case, workers: number, single: boolean): Promise<void> {
  const { series, to } = await data(c.candles);
  const config = configFor(to);
  const loaded = await loadStrategy(c.file, []);
  const space = buildSpace(loaded.params, c.params, []);
  if (single) {
    const t0 = performance.now();
    const o = await runTrial({ loaded: { ...loaded }, params: space.params(0), config, instruments: loadInstruments(), series: new Map([['EUR_USD:M1', series]]) });
    process.stdout.write(`${JSON.stringify({ wallMs: performance.now() - t0, peakRssMB: process.resourceUsage().maxRSS / 1024, trades: o.metrics.trades })}\n`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-sweep-bench-'));
  const r = await runSweep({
    strategyFile: loaded.file, strategyName: loaded.name, space, search: 'grid', trials: space.size, seed: 1, objective: 'sharpe',
    workers, batch: 1, lag: 2, config, series: [series], dataHash: `bench-${c.name}`, dir,
  });
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ trials: r.ran, wallMs: r.wallMs, trialsPerSecond: r.trialsPerSecond, peakRssMB: process.resourceUsage().maxRSS / 1024, workerStartMs: r.workerStartMs, failed: r.failed })}\n`);
}

/** Child: the whole grid's objective (Sharpe) by point, for the search comparison. */
async function table(c: Case): Promise<void> {
  const { series, to } = await data(c.candles);
  const config = configFor(to);
  const loaded = await loadStrategy(c.file, []);
  const space = buildSpace(loaded.params, c.params, []);
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-sweep-bench-'));
  const r = await runSweep({ strategyFile: loaded.file, strategyName: loaded.name, space, search: 'grid', trials: space.size, seed: 1, objective: 'sharpe', workers: 2, batch: 1, lag: 2, config, series: [series], dataHash: `bench-${c.name}`, dir });
  const { readFileSync } = await import('node:fs');
  const rows = readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { trial: number; objective: number | null });
  rmSync(dir, { recursive: true, force: true });
  void r;
  process.stdout.write(`${JSON.stringify(rows.map((x) => x.objective ?? -Infinity))}\n`);
}

function spawnChild(args: string[]): Record<string, unknown> {
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
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
  if (at('--child')) return child(CASES[at('--child')!]!, Number(at('--workers') ?? 1), argv.includes('--single'));
  if (at('--table')) return table(CASES[at('--table')!]!);
  const cases = argv.includes('--quick') ? [CASES.B!] : [CASES.A!, CASES.B!];
  const figures: Record<string, unknown> = {};
  for (const c of cases) {
    const single = spawnChild(['--child', c.name, '--single']);
    const one = spawnChild(['--child', c.name, '--workers', '1']);
    const two = spawnChild(['--child', c.name, '--workers', '2']);
    const speedup = (two.trialsPerSecond as number) / (one.trialsPerSecond as number);
    figures[c.name] = { candles: c.candles, single, workers1: one, workers2: two, speedup };
    console.log(`sweep ${c.name}: ${one.trials} trials × ${c.candles.toLocaleString('en-US')} M1 candles`);
    console.log(`  one backtest:  ${((single.wallMs as number) / 1000).toFixed(2)} s, peak RSS ${(single.peakRssMB as number).toFixed(0)} MB`);
    for (const [k, f] of [['1 worker ', one], ['2 workers', two]] as const) {
      console.log(`  ${k}:     ${f.failed ? `${f.failed} FAILED TRIALS; ` : ''}${(f.trialsPerSecond as number).toFixed(2)} trials/s (${((f.wallMs as number) / 1000).toFixed(1)} s), peak RSS ${(f.peakRssMB as number).toFixed(0)} MB, worker start ${(f.workerStartMs as number[]).join('/')} ms`);
    }
    console.log(`  2 workers / 1 worker: ${speedup.toFixed(2)}×; peak RSS 2 workers / one backtest: ${((two.peakRssMB as number) / (single.peakRssMB as number)).toFixed(2)}×`);
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
    console.log(`search on sweep A's figures (top 5% = ${Math.ceil(values.length * 0.05)} of ${values.length}; 25 seeds): tpe median ${median(tpe)} trials [${tpe.join(' ')}], random median ${median(rnd)} [${rnd.join(' ')}]`);
  }
  console.log(JSON.stringify(figures));
}

await main();
