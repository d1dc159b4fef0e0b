// ctx.plot in a live run: the runner (here on the sandbox, broker sim) hands the strategy's plots to
// its sink as in a backtest, and two sessions of one run folder add to one plots.csv.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlotFile } from '../../src/app/plot-file.ts';
import { readPlots } from '../../src/report/plots.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { pricePath, rig, waitTicks, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** Plots each tick's mid, and a dot in a pane every third tick. */
const plotter = defineStrategy({
  params: {},
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ n: 0 }),
  onTick(ctx, s) {
    const t = ctx.tick!;
    ctx.plot('mid', (t.bid + t.ask) / 2);
    if ((s.n + 1) % 3 === 0) ctx.plot('every third', s.n + 1, { pane: 'count', style: 'dot' });
    return { state: { n: s.n + 1 } };
  },
});

const path = pricePath(9);

async function session(rg: Rig, plots: PlotFile, from: number, to: number): Promise<void> {
  const runner: Runner = rg.runner({
    broker: 'sim',
    strategy: plotter as never,
    name: 'plotter',
    params: {},
    onPlot: plots.plot,
  });
  await runner.start();
  let seen = 0;
  for (let i = from; i < to; i++) {
    rg.sandbox.setTime(path[i]!.time);
    rg.sandbox.pushPrice(path[i]!);
    await waitTicks(runner, ++seen);
  }
  await runner.stop('test');
  plots.close();
}

describe('ctx.plot in fxflow run', () => {
  it('writes the plots of each price as it is handled; a restart adds to the same plots.csv under one header', async () => {
    r = await rig();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-live-plots-'));
    await session(r, new PlotFile(dir, { append: true }), 0, 5);
    await session(r, new PlotFile(dir, { append: true }), 5, 9);
    const lines = readFileSync(join(dir, 'plots.csv'), 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.startsWith('time,'))).toHaveLength(1);
    const warnings: string[] = [];
    const plots = readPlots(join(dir, 'plots.csv'), warnings);
    expect(warnings).toEqual([]);
    const mid = plots.find((p) => p.name === 'mid')!;
    expect(mid.t).toEqual(path.map((p) => p.time / 1000));
    expect(mid.v).toEqual(path.map((p) => (p.bid + p.ask) / 2));
    expect(mid.instrument).toBe('EUR_USD');
    // The second session's strategy starts from its saved state: its count goes on (3, 6, 9).
    const third = plots.find((p) => p.name === 'every third')!;
    expect(third.pane).toBe('count');
    expect(third.style).toBe('dot');
    expect(third.t).toEqual([path[2]!, path[5]!, path[8]!].map((p) => p.time / 1000));
  }, 60_000);

  it('a bad plot name stops with a message naming the call; a run that plots nothing leaves no plots.csv', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-live-plots-'));
    const plots = new PlotFile(dir);
    expect(() => plots.plot(0, 'a,b', 1, '', 'line', '')).toThrow(
      /ctx\.plot\("a,b"\): a plot's name is 1 to 64 characters with no comma/,
    );
    expect(() => plots.plot(0, 'ok', 1, '', 'arrow' as never, '')).toThrow(
      /style.*one of line, up, down, dot/,
    );
    plots.close();
    expect(existsSync(join(dir, 'plots.csv'))).toBe(false);
  });
});
