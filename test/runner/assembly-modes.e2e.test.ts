// Issue 33, item 9: one assembly for every mode. Each mode builds its engine, portfolio, risk gate,
// order path and broker in src/app/assembly.ts (which names the mode that built it); the modes
// differ only in their data source, clock and broker. And one set of limits refuses at the same
// decisions in `run --broker sim` and in the replay of that run.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/adapters/catalog/catalog.ts';
import { syntheticBatches } from '../../src/adapters/catalog/synthetic.ts';
import { type Assembly, type AssemblyMode, watchAssemblies } from '../../src/app/assembly.ts';
import { runBacktest } from '../../src/app/backtest.ts';
import { loadConfig } from '../../src/app/config.ts';
import { replayRun } from '../../src/app/replay.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { loadStrategy } from '../../src/app/load-strategy.ts';
import { WorkerPool } from '../../src/research/pool.ts';
import { decodeSeries } from '../../src/research/shared-series.ts';
import { buildSpace } from '../../src/research/space.ts';
import { runSweep } from '../../src/research/sweep.ts';
import { runWalkForward, windows } from '../../src/research/walkforward.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { pricePath, rig, startFxflowRun, until, type FxflowRun, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const catalog = new Catalog(resolve(ROOT, 'data/catalog'));
let r: Rig | undefined;
let run: FxflowRun | undefined;
let unwatch: (() => void) | undefined;
afterEach(async () => {
  unwatch?.();
  unwatch = undefined;
  run?.proc.kill('SIGKILL');
  run = undefined;
  await r?.close();
  r = undefined;
});

/** The assemblies built from now on, with the mode that built each. */
function watch(): { mode: AssemblyMode; a: Assembly }[] {
  const seen: { mode: AssemblyMode; a: Assembly }[] = [];
  unwatch = watchAssemblies((mode, a) => seen.push({ mode, a }));
  return seen;
}

describe('one assembly for every mode', () => {
  it('a backtest, a sweep trial and a walk-forward fold are assembled there, with the gate only when limited', async () => {
    const seen = watch();
    const strategy = defineStrategy({
      name: 'once',
      params: {},
      subscribe: { candles: ['EUR_USD:H1'] },
      init: () => ({ done: false }),
      onCandle: (ctx, s) =>
        s.done ? undefined : { state: { done: true }, intents: [ctx.market('EUR_USD', 1)] },
    });
    const loaded = { strategy, name: 'once', params: {}, file: 'once.ts' } as never;
    const go = (mode: 'backtest' | 'optimize' | 'walkforward', risk: Record<string, number>) =>
      runBacktest({
        mode,
        loaded,
        config: loadConfig(undefined, { run: { from: '2024-01-02', to: '2024-01-03' }, risk } as never),
        instruments: loadInstruments(),
        candles: (q) => catalog.candles(q),
        available: (i, g) => catalog.has(i, g),
        log: { debug() {}, info() {}, warn() {}, error() {} },
      });
    const plain = await go('backtest', { maxOrdersPerMinute: 0, maxIntentsPerEvent: 0 });
    const limited = await go('optimize', { maxUnits: 0.5 });
    await go('walkforward', {});
    expect(seen.map((s) => s.mode)).toEqual(['backtest', 'optimize', 'walkforward']);
    // Without limits there is no gate (it would refuse nothing); with one, the gate refuses the order.
    expect(seen[0]!.a.risk).toBeUndefined();
    expect(seen[0]!.a.execution).toBe(seen[0]!.a.sim);
    expect(plain.summary.orders!.placed).toBe(1);
    expect(seen[1]!.a.risk).toBeDefined();
    expect(limited.summary.orders!.placed).toBe(0);
    expect(limited.summary.risk?.refused).toEqual({ maxUnits: 1 });
  }, 60_000);

  it('a sweep trial is assembled as optimize, a walk-forward fold (its training trials and its out-of-sample run) as walkforward', async () => {
    const FROM = Date.UTC(2024, 0, 1);
    const TO = Date.UTC(2024, 3, 1);
    const series = [
      await decodeSeries(
        'EUR_USD',
        'H1',
        (async function* () {
          yield* syntheticBatches({ instrument: 'EUR_USD', granularity: 'H1', from: FROM, to: TO, seed: 7 });
        })(),
      ),
    ];
    const loaded = await loadStrategy(resolve(ROOT, 'src/research/fixtures/fragile-cross.ts'), []);
    const instruments = loadInstruments();
    const config = loadConfig(undefined, {
      run: { instrument: 'EUR_USD', granularity: 'H1', from: '2024-01-01', to: '2024-04-01' },
      costs: { financing: false },
    } as never);
    const base = {
      strategyFile: loaded.file,
      strategyName: loaded.name,
      space: buildSpace(loaded.params, ['fast=3,5', 'slow=20'], []),
      search: 'grid' as const,
      trials: 2,
      seed: 1,
      objective: 'sharpe' as const,
      workers: 1,
      batch: 1,
      lag: 0,
      config,
      series,
      dataHash: 'synthetic-7',
    };
    // One slot, the calling thread: no worker thread, so every trial's assembly is seen here.
    const pool = () => WorkerPool.start(1, { strategyFile: loaded.file }, { loaded, instruments });
    const tmp = mkdtempSync(join(tmpdir(), 'fxflow-assembly-wf-'));
    const sweep = watch();
    await runSweep({ ...base, dir: join(tmp, 'sweep'), pool: pool() });
    expect(sweep.map((s) => s.mode)).toEqual(['optimize', 'optimize']);
    unwatch!();
    const wf = watch();
    const ws = windows(FROM, TO, { months: 1 }, { months: 1 }, { months: 1 }, false);
    const r = await runWalkForward({ ...base, dir: join(tmp, 'wf'), windows: ws, pool: pool() });
    expect(r.windows.every((w) => w.outOfSample !== null)).toBe(true);
    // Two windows: each its two training trials and its out-of-sample run, all assembled as walkforward.
    expect(ws).toHaveLength(2);
    expect(wf.map((s) => s.mode)).toEqual(Array<AssemblyMode>(6).fill('walkforward'));
  }, 120_000);

  it('run --broker sim, --shadow and a live run: the runner is handed the assembly and trades through its gate', async () => {
    const seen = watch();
    r = await rig();
    for (const o of [{ broker: 'sim' as const }, { shadow: true }, {}]) {
      const runner = r.runner({ ...o, journalDir: mkdtempSync(join(tmpdir(), 'fxflow-assembly-run-')) });
      await runner.start();
      const a = runner.assembly!;
      // The runner's gate, engine view and broker are the assembly's.
      expect(runner.risk).toBe(a.risk);
      expect(runner.portfolio).toBe(a.portfolio);
      expect(runner.sim).toBe(a.sim);
      expect(runner.execution).toBe(a.v20);
      await runner.stop('end');
    }
    expect(seen.map((s) => s.mode)).toEqual(['run-sim', 'shadow', 'live']);
    expect(seen[0]!.a.sim).toBeDefined();
    expect(seen[0]!.a.v20).toBeUndefined();
    expect(seen[2]!.a.v20).toBeDefined();
    expect(seen[2]!.a.sim).toBeUndefined();
  }, 60_000);

  it('one limit refuses at the same decisions in run --broker sim and in its replay, both assembled in one place', async () => {
    r = await rig();
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-assembly-modes-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-assembly-journal-'));
    // replay-strategy decides every 3 s (a buy from flat, a sell while long), 10 times in 30 s: with
    // at most 2 openings a minute, buy, sell, buy, sell pass and every later buy is refused (the
    // strategy stays flat, so each later decision is a buy).
    run = await startFxflowRun(
      r.sandbox,
      'test/runner/replay-strategy.ts',
      ['--broker', 'sim', '--max-orders-per-minute', '2', '--journal', journal, '--out', out],
      1,
    );
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
    }
    await until(
      () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === 4,
      'the 4 fills that pass the limit',
    );
    const stopped = run;
    run = undefined;
    stopped.proc.kill('SIGTERM');
    expect(await stopped.exited).toBe(0);
    // The run's own count of refusals, from its report: every decision after the 4 that passed.
    const refused = Number(/risk refusals (\d+)/.exec(stopped.out())![1]);
    const seen = watch();
    const rec = await replayRun({ dir: out });
    expect(seen.map((s) => s.mode)).toEqual(['replay']);
    // The replay's gate, with the run's limit, refused the same decisions: no difference.
    expect(rec.decisions).toMatchObject({ live: 4 + refused, replay: 4 + refused, differ: 0 });
    expect(rec.money.live.fills).toBe(4);
    expect(rec.money.replay.fills).toBe(4);
    expect(seen[0]!.a.risk!.refused.maxOrdersPerMinute ?? 0).toBe(refused);
  }, 120_000);
});
