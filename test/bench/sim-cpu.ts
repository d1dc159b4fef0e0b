/**
 * The bench's `sim-only` scenario (bench.ts `simOnly`) in CPU time as well as wall time, for A/B
 * comparisons of the simulator on this shared machine: generated EUR_USD M1 candles fed straight to
 * a SimBroker, idle rounds and rounds with a reversal every 25 candles carrying TP/SL/trailing, three
 * of each in one process, the fastest of each; the difference per fill. `--root` runs another
 * checkout's src/ (its own build), so two builds can be run alternately, one process each:
 *
 *   for r in 1 2 3 4 5 6; do
 *     node --import tsx test/bench/sim-cpu.ts --root /path/to/main
 *     node --import tsx test/bench/sim-cpu.ts
 *   done
 *
 * Prints one JSON line: fills, transactions, CPU and wall µs a fill.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const root = resolve(arg('root', new URL('../..', import.meta.url).pathname));
const n = Number(arg('candles', '1000000'));
const rounds = Number(arg('rounds', '3'));
if (!Number.isInteger(n) || n < 1000) {
  console.error(`--candles must be a whole number of at least 1000 (got '${arg('candles', '')}')`);
  process.exit(64);
}

type Sim = {
  onEvent(ev: unknown): void;
  submit(intent: unknown): void;
  listen(l: (tx: unknown) => void): () => void;
  ledger: { position(i: string): { long: number; short: number } };
  stats: { fills: number };
};
const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(`${root}/${rel}`).href)) as T;
const { SimBroker } = await load<{ SimBroker: new (o: unknown) => Sim }>('src/adapters/sim/broker.ts');
const { loadInstruments } = await load<{ loadInstruments: () => unknown }>('src/domain/instrument.ts');
const { syntheticBatches } = await load<{ syntheticBatches: (s: unknown) => Iterable<readonly unknown[]> }>('src/adapters/catalog/synthetic.ts');
const { tuneV8 } = await load<{ tuneV8: () => void }>('src/cli/v8-tuning.ts');
tuneV8();

const instruments = loadInstruments();
const EXITS = { tp: 0.0015, sl: 0.001, trailing: 0.0008 };

function* candles(count: number): Generator<readonly unknown[]> {
  let left = count;
  for (const batch of syntheticBatches({ instrument: 'EUR_USD', granularity: 'M1', from: Date.UTC(2019, 0, 1), to: Date.UTC(2024, 0, 1), seed: 20240101 })) {
    if (batch.length >= left) {
      yield batch.slice(0, left);
      return;
    }
    left -= batch.length;
    yield batch;
  }
}

function round(orders: boolean): { wall: number; cpu: number; fills: number; transactions: number } {
  const sim = new SimBroker({ instruments, currency: 'USD', initialBalance: '100000', marginRate: '0.02', financing: false });
  let transactions = 0;
  const stop = sim.listen(() => {
    transactions++;
  });
  let i = 0;
  let seq = 0;
  let side = 1;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const batch of candles(n)) {
    for (let k = 0; k < batch.length; k++, i++) {
      sim.onEvent(batch[k]!);
      if (!orders || i % 25 !== 24) continue;
      const { long, short } = sim.ledger.position('EUR_USD');
      side = -side;
      const units = side * 10_000 - (long + short);
      if (units === 0) continue;
      const id = `b${++seq}`;
      sim.submit({
        kind: 'order',
        id,
        request: {
          type: 'MARKET',
          instrument: 'EUR_USD',
          units: String(units),
          takeProfitOnFill: { distance: EXITS.tp.toFixed(5) },
          stopLossOnFill: { distance: EXITS.sl.toFixed(5) },
          trailingStopLossOnFill: { distance: EXITS.trailing.toFixed(5) },
          clientExtensions: { id },
        },
      });
    }
  }
  const cpu = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  stop();
  return { wall, cpu: (cpu.user + cpu.system) / 1000, fills: sim.stats.fills, transactions };
}

let idle = { wall: Infinity, cpu: Infinity };
let busy = { wall: Infinity, cpu: Infinity, fills: 0, transactions: 0 };
for (let r = 0; r < rounds; r++) {
  const a = round(false);
  idle = { wall: Math.min(idle.wall, a.wall), cpu: Math.min(idle.cpu, a.cpu) };
  const b = round(true);
  busy = { wall: Math.min(busy.wall, b.wall), cpu: Math.min(busy.cpu, b.cpu), fills: b.fills, transactions: b.transactions };
}
console.log(
  JSON.stringify({
    root,
    fills: busy.fills,
    transactions: busy.transactions,
    cpuUsPerFill: +(((busy.cpu - idle.cpu) * 1000) / busy.fills).toFixed(3),
    wallUsPerFill: +(((busy.wall - idle.wall) * 1000) / busy.fills).toFixed(3),
  }),
);
