import fc from 'fast-check';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SweepStore, type TrialRecord } from '../research/store.ts';
import { folderKind, sweepModel, walkForwardModel } from './sweep-model.ts';
import { ReportError } from './run-folder.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-sweep-model-'));

/** A sweep folder as the sweep writes it (SweepStore), with `n` trials over fast × slow. */
function sweepFolder(name: string, n: number): string {
  const dir = join(tmp, name);
  const store = new SweepStore(dir, ['fast', 'slow']);
  writeFileSync(
    join(dir, 'sweep.json'),
    JSON.stringify({
      strategy: 's',
      search: 'grid',
      seed: 1,
      trials: n,
      objective: 'sharpe',
      params: [
        { name: 'fast', values: [1, 2, 3], ordered: true },
        { name: 'slow', values: [10, 20], ordered: true },
      ],
      fixed: { units: 1000 },
      config: { run: { from: '2024-01-01', to: '2024-02-01' }, account: { currency: 'USD' } },
    }),
  );
  for (let i = 0; i < n; i++) {
    const r: TrialRecord =
      i % 5 === 4
        ? {
            trial: i,
            id: `id${i}`,
            status: 'failed',
            params: { fast: 1 + (i % 3), slow: 10 * (1 + (i % 2)) },
            objective: null,
            error: 'boom, "quoted"',
          }
        : {
            trial: i,
            id: `id${i}`,
            status: 'ok',
            params: { fast: 1 + (i % 3), slow: 10 * (1 + (i % 2)) },
            objective: Math.sin(i) * 3,
            metrics: {
              netPL: i * 10.5,
              sharpe: Math.sin(i) * 3,
              trades: i,
            } as unknown as TrialRecord['metrics'],
          };
    store.append(r, r.status === 'ok' ? [0.001 * i, -0.002] : undefined);
  }
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({
      trials: n,
      spaceSize: 6,
      overfitting: { deflatedSharpe: null, pbo: null, note: 'too short' },
    }),
  );
  return dir;
}

describe('sweep folder model', () => {
  it('reads every trial SweepStore wrote; the best is the highest objective among the successful ones', () => {
    const dir = sweepFolder('full', 12);
    const m = sweepModel(dir);
    expect(m.warnings).toEqual([]);
    expect(m.trials.map((t) => t.trial)).toEqual([...Array(12).keys()]);
    const ok = m.trials.filter((t) => t.status === 'ok');
    expect(m.best!.objective).toBe(Math.max(...ok.map((t) => t.objective!)));
    expect(m.trials.find((t) => t.status === 'failed')!.error).toBe('boom, "quoted"');
    expect(m.currency).toBe('USD');
    expect(folderKind(dir)).toBe('sweep');
  });

  it('for any cut of trials.jsonl: never throws, keeps the complete lines, and says a line is cut exactly when one is', () => {
    const dir = sweepFolder('cut', 10);
    const whole0 = readFileSync(join(dir, 'trials.jsonl'), 'utf8');
    const ends = [...whole0.matchAll(/\n/g)].map((x) => x.index);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: whole0.length }), (at) => {
        writeFileSync(join(dir, 'trials.jsonl'), whole0.slice(0, at));
        const m = sweepModel(dir);
        const kept = whole0.slice(0, at).split('\n');
        const partial = kept[kept.length - 1]!;
        // A cut just before a newline leaves a whole record: it counts.
        const whole = partial.endsWith('}') && whole0.includes(`${partial}\n`);
        expect(m.trials).toHaveLength(kept.length - 1 + (whole ? 1 : 0));
        const cutWarning = m.warnings.find((w) => w.includes('cut short'));
        if (partial.length > 0 && !whole) expect(cutWarning).toContain(`line ${kept.length} is cut short`);
        else expect(cutWarning).toBeUndefined();
        if (m.trials.length !== 10)
          expect(m.warnings.join('\n')).toContain(
            `summary.json counts 10 trials but trials.jsonl holds ${m.trials.length} readable ones`,
          );
      }),
      // The boundaries: just before and just after a newline.
      {
        numRuns: 60,
        examples: [[0], [ends[0]!], [ends[0]! + 1], [ends[3]!], [ends[3]! - 1], [whole0.length]],
      },
    );
  });

  it('a line that is not a trial record in the middle is named, the others are kept', () => {
    const dir = sweepFolder('garbage', 4);
    const lines = readFileSync(join(dir, 'trials.jsonl'), 'utf8').split('\n');
    lines.splice(1, 0, '{"hello":1}');
    writeFileSync(join(dir, 'trials.jsonl'), lines.join('\n'));
    const m = sweepModel(dir);
    expect(m.trials).toHaveLength(4);
    expect(m.warnings[0]).toContain('trials.jsonl: line 2 is not a trial record');
  });

  it('bad input: not a sweep folder, a walk-forward folder without walkforward.json: clear errors naming the file', () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    expect(folderKind(empty)).toBe('run');
    expect(() => sweepModel(empty)).toThrow(ReportError);
    expect(() => sweepModel(empty)).toThrow('is not a sweep folder (no sweep.json)');
    expect(() => walkForwardModel(empty)).toThrow(
      'walkforward.json is missing: the walk-forward has not finished',
    );
    const broken = join(tmp, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'sweep.json'), '{"strategy":');
    expect(() => sweepModel(broken)).toThrow(`${join(broken, 'sweep.json')}:`);
  });
});

describe('walk-forward folder model', () => {
  const folder = (name: string, oosEquity: unknown[]): string => {
    const dir = join(tmp, name);
    mkdirSync(dir);
    const window = {
      trainFrom: Date.UTC(2024, 0, 1),
      trainTo: Date.UTC(2024, 2, 1),
      testFrom: Date.UTC(2024, 2, 1),
      testTo: Date.UTC(2024, 3, 1),
      index: 0,
    };
    writeFileSync(
      join(dir, 'walkforward.json'),
      JSON.stringify({
        windows: [{ window, params: { fast: 5 }, oosDays: oosEquity.length - 1, outOfSample: { netPL: 1 } }],
        oosEquity,
        oosReturnPct: 1,
        oosSharpe: null,
        efficiency: null,
        stability: {},
      }),
    );
    return dir;
  };

  it('the stitched out-of-sample equity is read by date (RFC 3339 times to epoch ms)', () => {
    const m = walkForwardModel(
      folder('wf-dated', [
        { time: '2024-03-01T01:00:00.000Z', nav: 1, window: 1 },
        { time: '2024-03-01T23:00:00.000Z', nav: 1.01, window: 1 },
      ]),
    );
    expect(m.oosEquity).toEqual([
      { time: Date.UTC(2024, 2, 1, 1), nav: 1 },
      { time: Date.UTC(2024, 2, 1, 23), nav: 1.01 },
    ]);
    expect(m.warnings).toEqual([]);
  });

  it('an older walkforward.json (equity by day number): a warning saying how to date it, no chart', () => {
    const dir = folder('wf-old', [1, 1.01, 1.02]);
    const m = walkForwardModel(dir);
    expect(m.oosEquity).toEqual([]);
    expect(m.warnings).toEqual([
      `${join(dir, 'walkforward.json')} is from an older fxflow (its "oosEquity" counts days, it has no dates): run the same \`fxflow walkforward\` command again to date it (the windows' sweeps are read back from their folders)`,
    ]);
  });
});
