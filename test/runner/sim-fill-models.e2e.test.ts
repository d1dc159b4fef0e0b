import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { formatTime } from '../../src/domain/time.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { pricePath, rig, settle, startFxflowRun, waitTicks, type Rig } from './harness.ts';

// The simulators of `fxflow run` (--broker sim, --shadow) take the fill models a backtest takes.
// Real sandbox, real runner (in process and as its own process), real journal files.

const eurUsd = loadInstruments().get('EUR_USD');
let r: Rig | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await r?.close();
  r = undefined;
});

type Fill = Transaction & {
  units: string;
  price: string;
  time: string;
  fullPrice: { bids: { price: string }[]; asks: { price: string }[] };
};
const fillsOf = (txs: readonly Transaction[]): Fill[] => txs.filter((t) => t.type === 'ORDER_FILL') as Fill[];

/** The fill's own quote (fullPrice) worsened by `pips`: a buy's ask higher, a sell's bid lower. */
const worsened = (f: Fill, pips: number): string =>
  Number(f.units) > 0
    ? eurUsd.price(Number(f.fullPrice.asks[0]!.price) + pips * eurUsd.pip)
    : eurUsd.price(Number(f.fullPrice.bids[0]!.price) - pips * eurUsd.pip);

describe('fxflow run: the simulators take the configured fill models', () => {
  it('--broker sim with slippage fixed:1 and latency fixed:1500: each order fills at the first price 1.5 s after its decision, a pip worse; the report names the models', async () => {
    r = await rig();
    const runner = r.runner({
      broker: 'sim',
      fill: { slippage: 'fixed:1', latency: 'fixed:1500', commission: '0' },
    });
    await runner.start();
    const path = pricePath(14);
    for (const [i, p] of path.entries()) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await waitTicks(runner, i + 1);
      // Ping-pong decides on every 3rd price (path[2], path[5], ...): its order waits in the simulator.
      if (i % 3 === 2) {
        for (let k = 0; runner.sim!.queuedMarketOrders() === 0; k++) {
          if (k > 4000) throw new Error(`the order decided at path[${i}] never reached the simulator`);
          await new Promise((res) => setTimeout(res, 5));
        }
      }
    }
    const res = await runner.stop('end');
    const fills = fillsOf(Journal.read(r.journalDir).transactions);
    // Decided at path[2 + 3k] (1 s apart): arrives 1.5 s later, so the first price at or after it is path[4 + 3k].
    expect(fills.map((f) => f.time)).toEqual([4, 7, 10, 13].map((i) => formatTime(path[i]!.time)));
    for (const [k, f] of fills.entries()) {
      const p = path[4 + 3 * k]!;
      expect(Number(f.units) > 0 ? f.fullPrice.asks[0]!.price : f.fullPrice.bids[0]!.price).toBe(
        eurUsd.price(Number(f.units) > 0 ? p.ask : p.bid),
      );
      expect(f.price).toBe(worsened(f, 1));
    }
    expect(res.models).toEqual({ slippage: 'fixed:1', latency: 'fixed:1500', commission: 'none' });
    expect(res.report).toContain('fill models: slippage fixed:1 · latency fixed:1500 · commission none');
  });

  it('--shadow with slippage fixed:1: the simulator fills a pip worse than the next price, and the comparison says which models it ran', async () => {
    r = await rig();
    const runner = r.runner({ shadow: true, fill: { slippage: 'fixed:1' } });
    await runner.start();
    const path = pricePath(12);
    for (const p of path) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    const res = await runner.stop('end');
    const simFills = fillsOf(runner.shadowBook!.txs);
    expect(simFills.length).toBe(3);
    // The first order comes on the 3rd price, a buy: the simulator fills it at the 4th price's ask, a pip worse.
    expect(simFills[0]!.price).toBe(eurUsd.price(path[3]!.ask + eurUsd.pip));
    for (const f of simFills) expect(f.price).toBe(worsened(f, 1));
    expect(res.shadow).toMatch(/^Shadow comparison: 4 intents, 4 differ \(outcome 1, price 3, time 0\)/);
    expect(res.shadow!.split('\n').at(-1)).toBe(
      'Shadow simulator fill models: slippage fixed:1 · latency none · commission none',
    );
    expect(res.models).toEqual({ slippage: 'fixed:1', latency: 'none', commission: 'none' });
  });

  it('`fxflow run --broker sim --slippage fixed:1` as a process: slipped fills in its journal, the models in its start line and report', async () => {
    r = await rig();
    const run = await startFxflowRun(
      r.sandbox,
      'test/runner/ping-pong-strategy.ts',
      [
        '--broker',
        'sim',
        '--slippage',
        'fixed:1',
        '--journal',
        r.journalDir,
        '--log-file',
        join(r.journalDir, 'run.log'),
      ],
      1,
    );
    child = run.proc;
    expect(run.out()).toContain('fill models: slippage fixed:1 · latency none · commission none');
    const path = pricePath(12);
    for (const p of path) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
    }
    // Orders on the 3rd, 6th, 9th and 12th prices; the first three fill at the next price.
    for (let k = 0; fillsOf(Journal.read(r.journalDir).transactions).length < 3; k++) {
      if (k > 6000)
        throw new Error(
          `the run journaled ${fillsOf(Journal.read(r.journalDir).transactions).length} fills of 3: ${run.out()} ${run.err()}`,
        );
      await new Promise((res) => setTimeout(res, 5));
    }
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const fills = fillsOf(Journal.read(r.journalDir).transactions);
    const quotes = new Set(path.flatMap((p) => [eurUsd.price(p.bid), eurUsd.price(p.ask)]));
    expect(fills.length).toBeGreaterThanOrEqual(3);
    for (const f of fills) {
      expect(quotes.has(Number(f.units) > 0 ? f.fullPrice.asks[0]!.price : f.fullPrice.bids[0]!.price)).toBe(
        true,
      );
      expect(f.price).toBe(worsened(f, 1));
    }
    expect(run.out()).toMatch(/\nfill models: slippage fixed:1 · latency none · commission none\n/);
  }, 60_000);

  it('fill model flags without a simulator, or a bad model, stop the run before it starts, naming the flag', async () => {
    const { runFillModels } = await import('../../src/cli/run.ts');
    expect(() => runFillModels({ broker: 'v20', slippage: 'fixed:1' })).toThrow(
      /--slippage shapes the simulated fills: use it with --broker sim or --shadow/,
    );
    expect(runFillModels({ broker: 'v20' })).toBeUndefined();
    expect(runFillModels({ broker: 'sim', latency: 'fixed:250', commission: 'oanda-core' })).toEqual({
      slippage: 'none',
      latency: 'fixed:250',
      commission: 'oanda-core',
      marketHours: true,
    });
    expect(runFillModels({ broker: 'v20', shadow: true, commission: '35' })).toEqual({
      slippage: 'none',
      latency: 'none',
      commission: '35',
      marketHours: true,
    });
    // --no-market-hours, as backtest takes it (src/cli/sim-flags.ts), reaches the simulator; without one it is a mistake.
    expect(runFillModels({ broker: 'sim', marketHours: false })?.marketHours).toBe(false);
    expect(() => runFillModels({ broker: 'v20', marketHours: false })).toThrow(
      /--no-market-hours shapes the simulated fills/,
    );
    expect(() => runFillModels({ broker: 'sim', slippage: 'lots' })).toThrow(
      /fill\.slippage is wrong: slippage must be none/,
    );
    expect(() => runFillModels({ broker: 'sim', config: '/nonexistent/run.json' })).toThrow(
      /\/nonexistent\/run\.json: \(file\) does not exist/,
    );
  });
});
