/**
 * Bytes the simulator allocates per fill in the bench's `sim-only` scenario (bench.ts `simOnly`:
 * generated EUR_USD M1 candles fed straight to a SimBroker, a reversal every 25 candles with
 * TP/SL/trailing), from V8's sampling heap profiler with collected objects included: a round with
 * orders minus an idle round over the same 300k candles (held in memory, so their cost cancels),
 * after two warm-up rounds of each. `--root` measures another checkout's src/:
 *
 *   node --import tsx test/bench/sim-alloc.ts [--root /path/to/other]
 *
 * Prints one JSON line: fills, KB allocated a fill. Sampling: steady to about ±0.05 KB between runs.
 */
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

type Sim = {
  onEvent(ev: unknown): void;
  submit(intent: unknown): void;
  ledger: { position(i: string): { long: number; short: number } };
  stats: { fills: number };
};
interface ProfileNode {
  selfSize: number;
  children: ProfileNode[];
}

const root = resolve(arg('root', new URL('../..', import.meta.url).pathname));
const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(`${root}/${rel}`).href)) as T;
const { SimBroker } = await load<{ SimBroker: new (o: unknown) => Sim }>('src/adapters/sim/broker.ts');
const { loadInstruments } = await load<{ loadInstruments: () => unknown }>('src/domain/instrument.ts');
const { syntheticBatches } = await load<{ syntheticBatches: (s: unknown) => Iterable<readonly unknown[]> }>('src/adapters/catalog/synthetic.ts');

const instruments = loadInstruments();
const batches: (readonly unknown[])[] = [];
let held = 0;
for (const b of syntheticBatches({ instrument: 'EUR_USD', granularity: 'M1', from: Date.UTC(2019, 0, 1), to: Date.UTC(2020, 0, 1), seed: 20240101 })) {
  batches.push(b);
  held += b.length;
  if (held >= 300_000) break;
}

function round(orders: boolean): number {
  const sim = new SimBroker({ instruments, currency: 'USD', initialBalance: '100000', marginRate: '0.02', financing: false });
  let i = 0;
  let seq = 0;
  let side = 1;
  for (const batch of batches) {
    for (let k = 0; k < batch.length; k++, i++) {
      sim.onEvent(batch[k]);
      if (!orders || i % 25 !== 24) continue;
      const { long, short } = sim.ledger.position('EUR_USD');
      side = -side;
      const units = side * 10_000 - (long + short);
      if (units === 0) continue;
      const id = `b${++seq}`;
      sim.submit({
        kind: 'order',
        id,
        request: { type: 'MARKET', instrument: 'EUR_USD', units: String(units), takeProfitOnFill: { distance: '0.00150' }, stopLossOnFill: { distance: '0.00100' }, trailingStopLossOnFill: { distance: '0.00080' }, clientExtensions: { id } },
      });
    }
  }
  return sim.stats.fills;
}

for (let r = 0; r < 2; r++) {
  round(false);
  round(true);
}
const session = new Session();
session.connect();
async function allocated(orders: boolean): Promise<{ bytes: number; fills: number }> {
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  const fills = round(orders);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: ProfileNode } };
  let bytes = 0;
  const walk = (n: ProfileNode): void => {
    bytes += n.selfSize;
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  return { bytes, fills };
}
const idle = await allocated(false);
const busy = await allocated(true);
console.log(JSON.stringify({ root, fills: busy.fills, kbPerFill: +((busy.bytes - idle.bytes) / busy.fills / 1024).toFixed(2) }));
