import fc from 'fast-check';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { syntheticBatches } from '../adapters/catalog/synthetic.ts';
import { loadConfig } from '../app/config.ts';
import { loadStrategy } from '../app/load-strategy.ts';
import { decodeSeries, type SharedSeries } from './shared-series.ts';
import { buildSpace } from './space.ts';
import { runSweep, type SweepOptions } from './sweep.ts';
import { objective as fragileObjective } from './fixtures/fragile-cross.ts';

const FROM = Date.UTC(2024, 0, 1);
const TO = Date.UTC(2024, 4, 1);
const FRAGILE = resolve(import.meta.dirname, 'fixtures/fragile-cross.ts');
const config = loadConfig(undefined, {
  run: { instrument: 'EUR_USD', granularity: 'H1', from: '2024-01-01', to: '2024-05-01' },
  costs: { financing: false },
});
let series: SharedSeries[];
let base: Omit<SweepOptions, 'dir' | 'workers'>;
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-sweep-'));
let n = 0;
const dir = (): string => join(tmp, `s${n++}`);

beforeAll(async () => {
  series = [
    await decodeSeries(
      'EUR_USD',
      'H1',
      (async function* () {
        yield* syntheticBatches({ instrument: 'EUR_USD', granularity: 'H1', from: FROM, to: TO, seed: 7 });
      })(),
    ),
  ];
  const loaded = await loadStrategy(FRAGILE, []);
  base = {
    strategyFile: loaded.file,
    strategyName: loaded.name,
    space: buildSpace(loaded.params, ['fast=3:9:2', 'slow=10,20,30'], ['fast < slow']),
    search: 'tpe',
    trials: 9,
    seed: 42,
    objective: 'sharpe',
    batch: 1,
    lag: 2,
    config,
    series,
    dataHash: 'synthetic-7',
    pboBlocks: 4,
  };
});

const csv = (d: string): string => readFileSync(join(d, 'trials.csv'), 'utf8');

describe('runSweep (real backtests on worker threads)', () => {
  it('the same seed gives the same trials and figures with 1 and 2 workers; a strategy that throws fails its trial and the sweep goes on', async () => {
    const a = dir();
    const b = dir();
    const r1 = await runSweep({ ...base, dir: a, workers: 1 });
    const r2 = await runSweep({ ...base, dir: b, workers: 2 });
    expect(csv(a)).toBe(csv(b));
    expect(readFileSync(join(a, 'trials.jsonl'), 'utf8')).toBe(readFileSync(join(b, 'trials.jsonl'), 'utf8'));
    expect(r1.overfitting).toEqual(r2.overfitting);
    expect(r1.best).toEqual(r2.best);
    expect(r1.trials).toBe(9);
    // fast 7 is in the space (3, 5, 7, 9) and throws on its 50th candle: recorded as failed, with the message.
    const failed = r1.failures.filter((f) => f.params.fast === 7);
    expect(failed.length).toBeGreaterThan(0);
    for (const f of failed) expect(f.error).toContain('fast=7 is not supported (fixture)');
    expect(r1.failed).toBe(r1.failures.length);
    expect(r1.trials - r1.failed).toBeGreaterThan(0);
    const rows = csv(a).trim().split('\n');
    expect(rows[0]!.startsWith('trial,id,status,objective,fast,slow,netPL,')).toBe(true);
    // What became of each trial's orders: placed, filled, rejected (a market order here always fills).
    expect(rows[0]!.endsWith(',orders,fills,rejects,error')).toBe(true);
    for (const t of r1.top) {
      const cells = rows.find((r) => r.startsWith(`${t.trial},`))!.split(',');
      const [orders, fills, rejects] = cells.slice(-4, -1).map(Number);
      expect([orders, fills, rejects]).toEqual([
        t.metrics.orders!.placed,
        t.metrics.orders!.filled,
        t.metrics.orders!.rejected,
      ]);
      expect(fills).toBeGreaterThan(0);
      expect(fills! + rejects!).toBeLessThanOrEqual(orders!);
    }
    expect(rows).toHaveLength(10);
    expect(rows.filter((r) => r.includes(',failed,'))).toHaveLength(r1.failed);
    // DSR and PBO are in the summary, and in summary.json.
    expect(r1.overfitting.deflatedSharpe?.trials).toBe(r1.trials - r1.failed);
    expect(r1.overfitting.pbo?.splits).toBe(6);
    // Computed on an adaptive search's trials: labelled not comparable with grid or random.
    expect(r1.overfitting.pbo).toMatchObject({ search: 'tpe', comparable: false });
    expect(r1.overfitting.pbo?.label).toMatch(/not comparable with the PBO of a grid or random search/);
    expect(JSON.parse(readFileSync(join(a, 'summary.json'), 'utf8')).overfitting).toEqual(
      JSON.parse(JSON.stringify(r1.overfitting)),
    );
  });

  it('resume: running again runs only the trials missing from the folder, and ends with the same files', async () => {
    const full = dir();
    await runSweep({ ...base, search: 'grid', trials: 12, dir: full, workers: 2 });
    const expected = csv(full);
    const lines = readFileSync(join(full, 'trials.jsonl'), 'utf8').trim().split('\n');
    await fc.assert(
      fc.asyncProperty(fc.subarray(lines.map((_, i) => i)), async (keep) => {
        const d = dir();
        const { mkdirSync } = await import('node:fs');
        mkdirSync(d, { recursive: true });
        // The kept records, in a shuffled (completion) order, the last one cut in half as a kill leaves it.
        const kept = keep.map((i) => lines[i]!).reverse();
        const text = kept.join('\n') + (kept.length ? '\n' : '') + (lines[0] ? lines[0].slice(0, 40) : '');
        writeFileSync(join(d, 'trials.jsonl'), text);
        writeFileSync(join(d, 'returns.jsonl'), readFileSync(join(full, 'returns.jsonl'), 'utf8'));
        const r = await runSweep({ ...base, search: 'grid', trials: 12, dir: d, workers: 1 });
        expect(r.resumed).toBe(keep.length);
        expect(r.ran).toBe(lines.length - keep.length);
        expect(csv(d)).toBe(expected);
      }),
      { numRuns: 4 },
    );
  });

  it("a custom objective: the strategy module's exported function ranks the trials", async () => {
    const d = dir();
    const r = await runSweep({
      ...base,
      search: 'grid',
      trials: 12,
      objective: 'custom',
      objectiveFn: fragileObjective,
      dir: d,
      workers: 2,
    });
    for (const t of r.top) expect(t.objective).toBeCloseTo(t.metrics.netPL / (1 + t.metrics.maxDrawdown), 10);
    const objectives = r.top.map((t) => t.objective);
    expect(objectives).toEqual([...objectives].sort((x, y) => y - x));
  });

  it('a trial whose thread died runs again (not recorded failed); on resume, an infrastructure failure in the folder runs again while a strategy failure stays failed', async () => {
    const DIE = resolve(import.meta.dirname, 'fixtures/die-once.ts');
    const loaded = await loadStrategy(DIE, []);
    const die = {
      ...base,
      strategyFile: loaded.file,
      strategyName: loaded.name,
      space: buildSpace(loaded.params, ['fast=3:9:2', 'slow=10,20'], ['fast < slow']),
      search: 'grid' as const,
      trials: 8,
    };
    // A reference where nothing dies (the marker is claimed already), then the same sweep where fast=5's thread ends once.
    const claimed = mkdtempSync(join(tmp, 'claimed-'));
    writeFileSync(join(claimed, 'claimed'), '');
    const fresh = mkdtempSync(join(tmp, 'die-'));
    process.env.FXFLOW_DIE_FAST = '5';
    const ref = dir();
    const d = dir();
    let r: Awaited<ReturnType<typeof runSweep>>;
    try {
      process.env.FXFLOW_DIE_DIR = claimed;
      await runSweep({ ...die, dir: ref, workers: 1 });
      process.env.FXFLOW_DIE_DIR = fresh;
      r = await runSweep({ ...die, dir: d, workers: 1 });
    } finally {
      delete process.env.FXFLOW_DIE_DIR;
      delete process.env.FXFLOW_DIE_FAST;
    }
    expect(readdirSync(fresh)).toEqual(['claimed']); // a thread did die
    expect(r.failed).toBe(0);
    expect(r.ran).toBe(8);
    expect(r.overfitting.pbo).toMatchObject({ search: 'grid', comparable: true });
    expect(csv(d)).toBe(csv(ref));

    // Resume: a folder where one trial is recorded 'worker died' (as older versions recorded it) and one failed in the strategy.
    const f = dir();
    await runSweep({ ...base, search: 'grid', trials: 12, dir: f, workers: 1 });
    const expected = csv(f);
    const lines = readFileSync(join(f, 'trials.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { status: string; error?: string; metrics?: unknown; params: { fast: number } },
      );
    const strategyFailures = lines.filter((l) => l.status === 'failed').length;
    expect(strategyFailures).toBeGreaterThan(0);
    const victim = lines.findIndex((l) => l.status === 'ok');
    const { metrics: _, ...rest } = lines[victim]!;
    lines[victim] = { ...rest, status: 'failed', error: 'worker died: the worker thread exited with code 1' };
    writeFileSync(join(f, 'trials.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const again = await runSweep({ ...base, search: 'grid', trials: 12, dir: f, workers: 1 });
    expect(again.ran).toBe(1);
    expect(again.failed).toBe(strategyFailures);
    expect(csv(f)).toBe(expected);
  });
});
