import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/adapters/catalog/catalog.ts';
import { SimBroker } from '../../src/adapters/sim/broker.ts';
import type { Candle } from '../../src/domain/candle.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import { Engine } from '../../src/engine/engine.ts';
import { fromBatches } from '../../src/engine/merge.ts';
import { driveSources } from '../../src/engine/drive.testkit.ts';
import { Portfolio } from '../../src/engine/portfolio.ts';
import { VirtualClock } from '../../src/ports/clock.ts';
import type { Params, Strategy } from '../../src/strategy/api.ts';
import smaCross from '../../strategies/sma-cross.ts';
import { rig, settle, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const params = { ...smaCross.params, granularity: 'M1', fast: 3, slow: 8, units: 1000 } as Params;
const FROM = Date.UTC(2024, 0, 2, 10, 0);
const TO = Date.UTC(2024, 0, 2, 13, 0);
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const show = (x: { intent: OrderIntent; at: number }) =>
  `${new Date(x.at).toISOString()} ${x.intent.id} ${JSON.stringify(x.intent)}`;

describe('same decisions', () => {
  it('sma-cross through the runner over a replayed period gives the same intents as a backtest of that period', async () => {
    const candles: Candle[] = [];
    for await (const b of new Catalog(resolve(ROOT, 'data/catalog')).candles({
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: FROM,
      to: TO,
    }))
      candles.push(...b);
    expect(candles.length).toBeGreaterThan(100);

    // Backtest: the engine and the simulated broker over the catalog candles.
    const inst = loadInstruments();
    const sim = new SimBroker({
      instruments: inst,
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
    const backtest: { intent: OrderIntent; at: number }[] = [];
    const clock = new VirtualClock();
    const engine = new Engine({
      strategy: smaCross as unknown as Strategy<Params, unknown>,
      name: 'sma-cross',
      params,
      execution: sim,
      portfolio,
      instruments: inst,
      clock,
      log: silent,
      marginRate: 0.02,
      onIntent: (intent) => backtest.push({ intent, at: clock.now() }),
    });
    let started = false;
    await driveSources(engine, [fromBatches([candles])], (e) => {
      if (!started) {
        started = true;
        sim.start(e.at - 60_000);
      }
      sim.onEvent(e);
    });

    // Live: the same candles as ticks (open, high, low, close inside each minute) into the sandbox.
    r = await rig();
    const live: { intent: OrderIntent; at: number }[] = [];
    const runner = r.runner({
      strategy: smaCross as never,
      name: 'sma-cross',
      params,
      onIntent: (intent, at) => live.push({ intent, at }),
    });
    await runner.start();
    const push = async (time: number, bid: number, ask: number): Promise<void> => {
      r!.sandbox.setTime(time);
      r!.sandbox.pushPrice({ instrument: 'EUR_USD', bid, ask, time });
      const t0 = Date.now();
      // A completed candle is fetched from the candles endpoint: wait for it too, so that the next
      // price moves the clock only after the strategy has seen it (as in the backtest).
      while (
        runner.ticks === 0 ||
        (runner as unknown as { ticks: number }).ticks < pushed ||
        runner.candles.pending > 0
      ) {
        if (Date.now() - t0 > 10_000) throw new Error('price not seen');
        await new Promise((res) => setTimeout(res, 2));
      }
      await settle(r!, runner);
    };
    let pushed = 0;
    for (const c of candles) {
      const pts: [number, number, number][] = [
        [c.time, c.bo, c.ao],
        [c.time + 15_000, c.bh, c.ah],
        [c.time + 30_000, c.bl, c.al],
        [c.time + 59_000, c.bc, c.ac],
      ];
      for (const [t, b, a] of pts) {
        pushed++;
        await push(t, b, a);
      }
    }
    pushed++;
    await push(TO, candles[candles.length - 1]!.bc, candles[candles.length - 1]!.ac); // completes the last candle
    const res = await runner.stop('end');
    console.log(
      `[decisions] ${candles.length} M1 candles (${pushed} ticks through the sandbox; candles: ${res.candles.official} official, ${res.candles.fromTicks} from ticks): backtest ${backtest.length} intents, runner ${live.length} intents; first: ${live[0] ? show(live[0]) : '-'}`,
    );
    expect(res.candles).toMatchObject({
      source: 'endpoint',
      official: candles.length,
      fromTicks: 0,
      pending: 0,
      dropped: 0,
    });
    expect(backtest.length).toBeGreaterThan(3);
    // The same decisions; a live run's client IDs carry its run identity (`sma-cross-<run>-<n>`).
    expect(live.map(show).map((x) => x.replaceAll(`-${runner.runId}-`, '-'))).toEqual(backtest.map(show));
  }, 240_000);
});
