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
 * The transactions are counted by a listener of notes where the checkout has them (no fill's
 * object is built, as in a sweep's trial), else of objects; `--objects` counts objects in any
 * build (every fill's object built, as with a run folder).
 *
 * Prints one JSON line: fills, transactions, CPU and wall µs a fill.
 */
import { arg, feed, loadSim } from './sim-scenario.ts';

const n = Number(arg('candles', '1000000'));
const rounds = Number(arg('rounds', '3'));
const objects = process.argv.includes('--objects');
if (!Number.isInteger(n) || n < 1000) {
  console.error(`--candles must be a whole number of at least 1000 (got '${arg('candles', '')}')`);
  process.exit(64);
}
const checkout = await loadSim();
checkout.tuneV8();

function round(orders: boolean): { wall: number; cpu: number; fills: number; transactions: number } {
  const sim = checkout.newSim();
  let transactions = 0;
  const count = (): void => {
    transactions++;
  };
  const stop = sim.listenNotes !== undefined && !objects ? sim.listenNotes(count) : sim.listen(count);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  feed(sim, checkout.candles(n), orders);
  const cpu = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  stop();
  return { wall, cpu: (cpu.user + cpu.system) / 1000, fills: sim.stats.fills, transactions };
}

function sim0Notes(c: typeof checkout): boolean {
  return c.newSim().listenNotes !== undefined;
}

let idle = { wall: Infinity, cpu: Infinity };
let busy = { wall: Infinity, cpu: Infinity, fills: 0, transactions: 0 };
for (let r = 0; r < rounds; r++) {
  const a = round(false);
  idle = { wall: Math.min(idle.wall, a.wall), cpu: Math.min(idle.cpu, a.cpu) };
  const b = round(true);
  busy = {
    wall: Math.min(busy.wall, b.wall),
    cpu: Math.min(busy.cpu, b.cpu),
    fills: b.fills,
    transactions: b.transactions,
  };
}
console.log(
  JSON.stringify({
    root: checkout.root,
    listener: sim0Notes(checkout) && !objects ? 'notes' : 'objects',
    fills: busy.fills,
    transactions: busy.transactions,
    cpuUsPerFill: +(((busy.cpu - idle.cpu) * 1000) / busy.fills).toFixed(3),
    wallUsPerFill: +(((busy.wall - idle.wall) * 1000) / busy.fills).toFixed(3),
  }),
);
