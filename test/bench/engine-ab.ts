/**
 * The bench's engine-with-exits run (bench.ts `engine-exits`: SMA 10/30 with TP, SL and trailing
 * stop on 1M generated M1 candles, no run folder) of two checkouts in ONE process, alternated, the
 * fastest CPU time of each kept (as sim-ab.ts, for a machine shared with other work).
 *
 *   node --import tsx test/bench/engine-ab.ts --base /path/to/other [--candles 1000000] [--rounds 4]
 *
 * Prints one JSON line per checkout: fills, final balance (they must agree), fastest CPU ms.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { arg } from './sim-scenario.ts';

const n = Number(arg('candles', '1000000'));
const rounds = Number(arg('rounds', '4'));
const FROM = Date.UTC(2019, 0, 1);
const TO = Date.UTC(2019 + Math.max(5, Math.ceil(n / 340_000)), 0, 1);

interface Checkout {
  root: string;
  run(): Promise<{ cpu: number; fills: number; balance: number }>;
  best: number;
  fills: number;
  balance: number;
}

async function checkout(rootArg: string): Promise<Checkout> {
  const root = resolve(rootArg);
  const load = async <T>(rel: string): Promise<T> =>
    (await import(pathToFileURL(`${root}/${rel}`).href)) as T;
  const { runBacktest } = await load<{
    runBacktest: (o: unknown) => Promise<{ sim: { fills: number }; summary: { finalBalance?: number } }>;
  }>('src/app/backtest.ts');
  const { loadConfig } = await load<{ loadConfig: (f: undefined, o: unknown) => unknown }>(
    'src/app/config.ts',
  );
  const { loadStrategy } = await load<{ loadStrategy: (f: string, p: string[]) => Promise<unknown> }>(
    'src/app/load-strategy.ts',
  );
  const { loadInstruments } = await load<{ loadInstruments: () => unknown }>('src/domain/instrument.ts');
  const { syntheticBatches } = await load<{ syntheticBatches: (s: unknown) => Iterable<readonly unknown[]> }>(
    'src/adapters/catalog/synthetic.ts',
  );
  const config = loadConfig(undefined, {
    run: {
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: new Date(FROM).toISOString(),
      to: new Date(TO).toISOString(),
    },
    costs: { financing: false },
  });
  // Each checkout's own copy of the strategy: it imports that checkout's src/ (one copy of each module per run).
  const loaded = await loadStrategy(`${root}/test/bench/sma-cross-exits.ts`, [
    'fast=10',
    'slow=30',
    'tp=0.0015',
    'sl=0.001',
    'trailing=0.0008',
  ]);
  const instruments = loadInstruments();
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  return {
    root,
    best: Infinity,
    fills: 0,
    balance: 0,
    async run() {
      const c0 = process.cpuUsage();
      const r = await runBacktest({
        loaded,
        config,
        instruments,
        log: silent,
        candles: async function* () {
          let left = n;
          for (const batch of syntheticBatches({
            instrument: 'EUR_USD',
            granularity: 'M1',
            from: FROM,
            to: TO,
            seed: 20240101,
          })) {
            if (batch.length >= left) {
              yield batch.slice(0, left);
              return;
            }
            left -= batch.length;
            yield batch;
          }
        },
      });
      const c = process.cpuUsage(c0);
      return {
        cpu: (c.user + c.system) / 1000,
        fills: r.sim.fills,
        balance: Number(r.summary.finalBalance ?? Number.NaN),
      };
    },
  };
}

const here = await checkout(new URL('../..', import.meta.url).pathname);
const base = await checkout(arg('base', ''));
const { tuneV8 } = (await import('../../src/cli/v8-tuning.ts')) as { tuneV8: () => void };
tuneV8();
for (let r = 0; r < rounds; r++) {
  // Each checkout first in every other round: neither always runs on the other's garbage.
  for (const c of r % 2 === 0 ? [base, here] : [here, base]) {
    const x = await c.run();
    c.best = Math.min(c.best, x.cpu);
    c.fills = x.fills;
    c.balance = x.balance;
  }
}
for (const c of [base, here])
  console.log(
    JSON.stringify({
      root: c.root,
      fills: c.fills,
      finalBalance: c.balance,
      fastestCpuMs: +c.best.toFixed(0),
    }),
  );
