import { describe, expect, it } from 'vitest';
import { SimBroker } from '../adapters/sim/broker.ts';
import { candle, instruments, MINUTE, T0 } from '../adapters/sim/testkit.ts';
import { RUNNER_ID_PREFIX } from '../domain/intents.ts';
import { VirtualClock } from '../ports/clock.ts';
import { isRunnerIntent } from '../runner/order-path/order-lifecycle.ts';
import { defineStrategy, type Strategy } from '../strategy/api.ts';
import { Engine, StrategyError } from './engine.ts';
import { fromBatches } from './merge.ts';
import { driveSources } from './drive.testkit.ts';
import { Portfolio } from './portfolio.ts';

// The runner tells its own intents (kill switch, flatten) from the strategy's by a reserved client-ID
// namespace; the strategy API refuses it, so no strategy can make an intent that passes for the runner's.

const bars = [0, 1, 2].map((i) => candle('EUR_USD', T0 + i * MINUTE, [1.1, 1.1005, 1.0995, 1.1001]));
const silent = { debug() {}, info() {}, warn() {}, error() {} };

function engine(
  strategy: Strategy<Record<string, never>, unknown>,
  name: string,
  clientIdPrefix?: string,
): { engine: Engine<Record<string, never>, unknown>; ids: string[]; sim: SimBroker } {
  const inst = instruments();
  const sim = new SimBroker({
    instruments: inst,
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
  });
  const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
  const ids: string[] = [];
  const e = new Engine({
    strategy,
    name,
    params: {},
    execution: sim,
    portfolio,
    instruments: inst,
    clock: new VirtualClock(),
    log: silent,
    marginRate: 0.02,
    onIntent: (i) => ids.push(i.id),
    ...(clientIdPrefix !== undefined ? { clientIdPrefix } : {}),
  });
  return { engine: e, ids, sim };
}

function run(x: { engine: Engine<Record<string, never>, unknown>; sim: SimBroker }): Promise<unknown> {
  return driveSources(x.engine, [fromBatches([bars])], (ev) => x.sim.onEvent(ev));
}

const buying = (clientId?: string) =>
  defineStrategy({
    params: {},
    subscribe: { candles: ['EUR_USD:M1'] },
    onCandle: (ctx) => [ctx.market('EUR_USD', 1000, clientId !== undefined ? { clientId } : {})],
  });

describe('the runner-reserved client-ID namespace', () => {
  it.each(['kill', 'flat', 'exit'])(
    "a strategy named '%s' trades under IDs the runner never takes for its own",
    async (name) => {
      const x = engine(buying() as never, name, `${name}-run1`);
      const { ids } = x;
      await run(x);
      expect(ids).toEqual([`${name}-run1-1`, `${name}-run1-2`, `${name}-run1-3`]);
      expect(ids.map((id) => isRunnerIntent({ kind: 'cancel', id, orderSpecifier: '1' }))).toEqual([
        false,
        false,
        false,
      ]);
      expect(
        isRunnerIntent({ kind: 'cancel', id: `${RUNNER_ID_PREFIX}kill-run1-1`, orderSpecifier: '1' }),
      ).toBe(true);
    },
  );

  it('refuses a clientId in the reserved namespace, naming it and what to do', async () => {
    const x = engine(buying(`${RUNNER_ID_PREFIX}kill-run1-1`) as never, 'forger');
    const { ids, sim } = x;
    const err = await run(x).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StrategyError);
    expect((err as Error).message).toMatch(
      /client ID 'fxflow-kill-run1-1'.*reserved for the runner's own closes and cancels.*choose another clientId/,
    );
    expect(ids).toEqual([]);
    expect(sim.queuedMarketOrders()).toBe(0);
  });

  it('refuses a strategy name that would put its client IDs in the namespace, at construction', () => {
    expect(() => engine(buying() as never, 'fxflow')).toThrow(
      /strategy 'fxflow': its client IDs would start 'fxflow'.*rename the strategy/,
    );
    expect(() => engine(buying() as never, 'x', 'fxflow-exit-run1')).toThrow(StrategyError);
    // Names that merely look alike are fine.
    expect(() => engine(buying() as never, 'fxflowish')).not.toThrow();
  });
});
