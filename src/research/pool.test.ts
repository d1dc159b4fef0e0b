import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticBatches } from '../adapters/catalog/synthetic.ts';
import { loadConfig } from '../app/config.ts';
import { loadStrategy, type LoadedStrategy } from '../app/load-strategy.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { WorkerPool, WorkerStartError, type Done } from './pool.ts';
import { decodeSeries, seriesMap, type SharedSeries } from './shared-series.ts';
import { buildSpace } from './space.ts';
import { runSweep, type SweepOptions } from './sweep.ts';
import { runTrial } from './trial.ts';

// The main thread as one of a sweep's workers (fxflow optimize's pool): real backtests, real threads.
const MARK = resolve(import.meta.dirname, 'fixtures/thread-mark.ts');
const config = loadConfig(undefined, {
  run: { instrument: 'EUR_USD', granularity: 'H1', from: '2024-01-01', to: '2024-05-01' },
  costs: { financing: false },
});
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-pool-'));
const log = join(tmp, 'threads.log');
let n = 0;
const dir = (): string => join(tmp, `s${n++}`);
let series: SharedSeries[];
let loaded: LoadedStrategy;
let base: Omit<SweepOptions, 'dir' | 'workers'>;
const instruments = loadInstruments();

beforeAll(async () => {
  series = [
    await decodeSeries(
      'EUR_USD',
      'H1',
      (async function* () {
        yield* syntheticBatches({
          instrument: 'EUR_USD',
          granularity: 'H1',
          from: Date.UTC(2024, 0, 1),
          to: Date.UTC(2024, 4, 1),
          seed: 11,
        });
      })(),
    ),
  ];
  loaded = await loadStrategy(MARK, []);
  base = {
    strategyFile: loaded.file,
    strategyName: loaded.name,
    space: buildSpace(loaded.params, ['fast=3:9:2', 'slow=10,20,30'], ['fast < slow']),
    search: 'grid',
    trials: 12,
    seed: 1,
    objective: 'sharpe',
    batch: 1,
    lag: 2,
    config,
    series,
    dataHash: 'synthetic-11',
    pboBlocks: 4,
  };
  // Threads copy the environment when they start: set before any pool.
  process.env.FXFLOW_THREAD_LOG = log;
});

afterAll(() => {
  delete process.env.FXFLOW_THREAD_LOG;
});

/** Who ran the trials since the log was emptied: thread ids (0: the main thread). */
function threadsSince(): number[] {
  const ids = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => Number(l.split(' ')[0]));
  writeFileSync(log, '');
  return ids;
}

const files = (d: string): string[] =>
  ['trials.csv', 'trials.jsonl', 'returns.jsonl'].map((f) => readFileSync(join(d, f), 'utf8'));

describe('WorkerPool with the main thread as a slot', () => {
  it('1 worker starts no thread and 2 start one; both give the files and figures of a sweep on threads alone', async () => {
    writeFileSync(log, '');
    const ref = dir();
    const r0 = await runSweep({ ...base, dir: ref, workers: 2 });
    expect(threadsSince().every((id) => id !== 0)).toBe(true); // the default pool: threads only

    const one = dir();
    const pool1 = WorkerPool.start(1, { strategyFile: loaded.file }, { loaded, instruments });
    const r1 = await runSweep({ ...base, dir: one, workers: 1, pool: pool1 });
    expect(threadsSince()).toEqual(Array(12).fill(0));
    expect(r1.workerStartMs).toEqual([]);

    const two = dir();
    const p2 = await WorkerPool.start(2, { strategyFile: loaded.file }, { loaded, instruments });
    await p2.ready(); // so the thread surely takes trials (else the main thread may finish first)
    const r2 = await runSweep({ ...base, dir: two, workers: 2, pool: Promise.resolve(p2) });
    const ran = threadsSince();
    expect(ran).toHaveLength(12);
    expect(ran.filter((id) => id === 0).length).toBeGreaterThan(0);
    expect(new Set(ran.filter((id) => id !== 0)).size).toBe(1);
    expect(r2.workerStartMs).toHaveLength(1);

    expect(files(one)).toEqual(files(ref));
    expect(files(two)).toEqual(files(ref));
    for (const r of [r1, r2]) {
      expect(r.best).toEqual(r0.best);
      expect(r.top).toEqual(r0.top);
      expect(r.overfitting).toEqual(r0.overfitting);
    }
  });

  it('any order and number of trials asked at once: each is answered once, with the figures of the trial run alone', async () => {
    const points = base.space.validPoints();
    const shared = seriesMap(series);
    const alone = new Map<number, unknown>();
    for (const p of points)
      alone.set(
        p,
        (await runTrial({ loaded, params: base.space.params(p), config, instruments, series: shared }))
          .metrics,
      );
    const pool = await WorkerPool.start(2, { strategyFile: loaded.file }, { loaded, instruments });
    try {
      pool.share(series);
      await pool.ready();
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom(...points), { minLength: 1, maxLength: 10 }),
          fc.integer({ min: 1, max: 10 }),
          async (asked, atOnce) => {
            // Asked in waves of `atOnce`, as a sweep keeps that many in flight.
            const answers: Done[] = [];
            for (let k = 0; k < asked.length; k += atOnce) {
              answers.push(
                ...(await Promise.all(
                  asked.slice(k, k + atOnce).map((p, j) => pool.run(k + j, base.space.params(p), config)),
                )),
              );
            }
            expect(answers.map((d) => d.trial)).toEqual(asked.map((_, i) => i));
            for (let i = 0; i < asked.length; i++) {
              const d = answers[i]!;
              expect(d.ok).toBe(true);
              if (d.ok) expect(d.metrics).toEqual(alone.get(asked[i]!));
            }
          },
        ),
        { numRuns: 6 },
      );
    } finally {
      await pool.close();
    }
    writeFileSync(log, '');
  });

  it('a thread that cannot start: ready() rejects with the reason, and the trials asked for after fail with it', async () => {
    const missing = join(tmp, 'no-such-strategy.ts');
    const pool = await WorkerPool.start(2, { strategyFile: missing }, { loaded, instruments });
    try {
      pool.share(series);
      const err = await pool.ready().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkerStartError);
      expect((err as Error).message).toContain('no-such-strategy.ts');
      await expect(pool.run(0, base.space.params(base.space.validPoints()[0]!), config)).rejects.toBe(err);
    } finally {
      await pool.close();
    }
  });
});
