/**
 * Two checkouts' simulators in ONE process, rounds alternated (A idle, A busy, B idle, B busy, ...),
 * the fastest round of each kept: on a machine shared with other work, the minimum over many
 * alternated rounds is the figure least moved by the neighbours (each process-level A/B pays its
 * own start, JIT and neighbours). The bench's `sim-only` scenario (sim-scenario.ts) over the same
 * candles held in memory; CPU µs a fill = (fastest busy round - fastest idle round) / fills.
 * Each checkout is counted by a listener of notes where it has them, else of objects; `objects`
 * rows count objects (every fill's object built, as with a run folder).
 *
 *   node --import tsx test/bench/sim-ab.ts --base /path/to/other [--candles 300000] [--rounds 8]
 *
 * Prints one JSON line per variant.
 */
import { arg, feed, loadSim, type Sim, type SimCheckout } from './sim-scenario.ts';

const n = Number(arg('candles', '300000'));
const rounds = Number(arg('rounds', '8'));
const here = await loadSim(new URL('../..', import.meta.url).pathname);
const base = await loadSim(arg('base', ''));
here.tuneV8();
const batches = [...here.candles(n)];

interface Variant {
  name: string;
  checkout: SimCheckout;
  objects: boolean;
  idle: number;
  busy: number;
  fills: number;
}
const variants: Variant[] = [
  { name: 'base', checkout: base, objects: true, idle: Infinity, busy: Infinity, fills: 0 },
  { name: 'this', checkout: here, objects: false, idle: Infinity, busy: Infinity, fills: 0 },
  { name: 'this, objects', checkout: here, objects: true, idle: Infinity, busy: Infinity, fills: 0 },
];

function round(v: Variant, orders: boolean): { cpu: number; fills: number } {
  const sim: Sim = v.checkout.newSim();
  let transactions = 0;
  const count = (): void => {
    transactions++;
  };
  const stop = sim.listenNotes !== undefined && !v.objects ? sim.listenNotes(count) : sim.listen(count);
  const c0 = process.cpuUsage();
  feed(sim, batches, orders);
  const c = process.cpuUsage(c0);
  stop();
  return { cpu: (c.user + c.system) / 1000, fills: sim.stats.fills };
}

for (let r = 0; r < rounds; r++) {
  // The order turns each round: no variant always runs on another's garbage.
  for (let k = 0; k < variants.length; k++) {
    const v = variants[(k + r) % variants.length]!;
    v.idle = Math.min(v.idle, round(v, false).cpu);
    const b = round(v, true);
    v.busy = Math.min(v.busy, b.cpu);
    v.fills = b.fills;
  }
}
for (const v of variants) {
  console.log(
    JSON.stringify({
      variant: v.name,
      root: v.checkout.root,
      fills: v.fills,
      idleMs: +v.idle.toFixed(1),
      busyMs: +v.busy.toFixed(1),
      cpuUsPerFill: +(((v.busy - v.idle) * 1000) / v.fills).toFixed(3),
    }),
  );
}
