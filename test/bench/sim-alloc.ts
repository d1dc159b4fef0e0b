/**
 * Bytes the simulator allocates per fill in the bench's `sim-only` scenario (bench.ts `simOnly`:
 * generated EUR_USD M1 candles fed straight to a SimBroker, a reversal every 25 candles with
 * TP/SL/trailing), from V8's sampling heap profiler with collected objects included: a round with
 * orders minus an idle round over the same 300k candles (held in memory, so their cost cancels),
 * after two warm-up rounds of each. `--root` measures another checkout's src/:
 *
 *   node --import tsx test/bench/sim-alloc.ts [--root /path/to/other] [--objects]
 *
 * Prints one JSON line: fills, KB allocated a fill. Sampling: steady to about ±0.05 KB between runs.
 */
import { Session } from 'node:inspector/promises';
import { feed, loadSim } from './sim-scenario.ts';

interface ProfileNode {
  selfSize: number;
  children: ProfileNode[];
}

const checkout = await loadSim();
const batches = [...checkout.candles(300_000)];

// `--objects`: a listener of objects, so every fill's object is built (a run folder's cost); by
// default none listens (a sweep's trial: no object since stop 31; before it, built all the same).
const objects = process.argv.includes('--objects');

function round(orders: boolean): number {
  const sim = checkout.newSim();
  if (objects) sim.listen(() => {});
  feed(sim, batches, orders);
  return sim.stats.fills;
}

for (let r = 0; r < 2; r++) {
  round(false);
  round(true);
}
const session = new Session();
session.connect();
async function allocated(orders: boolean): Promise<{ bytes: number; fills: number }> {
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  } as never);
  const fills = round(orders);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: ProfileNode };
  };
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
console.log(
  JSON.stringify({
    root: checkout.root,
    objects,
    fills: busy.fills,
    kbPerFill: +((busy.bytes - idle.bytes) / busy.fills / 1024).toFixed(2),
  }),
);
