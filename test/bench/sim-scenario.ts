/**
 * The bench's `sim-only` scenario (bench.ts `simOnly`) for the A/B tools (sim-cpu.ts, sim-alloc.ts),
 * against any checkout: `loadSim(root)` imports that checkout's simulator, `feed` plays generated
 * EUR_USD M1 candles into it with, when `orders`, a reversal every 25 candles carrying the bench's
 * take profit, stop loss and trailing stop.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

export interface Sim {
  onEvent(ev: unknown): void;
  submit(intent: unknown): void;
  listen(l: (tx: unknown) => void): () => void;
  /** Builds after stop 31 (notes: a fill's object only when asked for). */
  listenNotes?(l: (note: unknown) => void): () => void;
  readonly ledger: { position(i: string): { long: number; short: number } };
  readonly stats: { fills: number };
}

export interface SimCheckout {
  readonly root: string;
  /** A new simulated account of 100,000 USD, no financing (the bench's). */
  newSim(): Sim;
  /** The generated candles, in batches, `count` of them from 2019 on. */
  candles(count: number): Generator<readonly unknown[]>;
  /** The checkout's V8 settings (the CLI's). */
  tuneV8(): void;
}

/** `--root` (default this checkout): the simulator, instruments and generator of that checkout's src/. */
export async function loadSim(at?: string): Promise<SimCheckout> {
  const root = resolve(at ?? arg('root', new URL('../..', import.meta.url).pathname));
  const load = async <T>(rel: string): Promise<T> =>
    (await import(pathToFileURL(`${root}/${rel}`).href)) as T;
  const { SimBroker } = await load<{ SimBroker: new (o: unknown) => Sim }>('src/adapters/sim/broker.ts');
  const { loadInstruments } = await load<{ loadInstruments: () => unknown }>('src/domain/instrument.ts');
  const { syntheticBatches } = await load<{ syntheticBatches: (s: unknown) => Iterable<readonly unknown[]> }>(
    'src/adapters/catalog/synthetic.ts',
  );
  const { tuneV8 } = await load<{ tuneV8: () => void }>('src/cli/v8-tuning.ts');
  const instruments = loadInstruments();
  return {
    root,
    newSim: () =>
      new SimBroker({
        instruments,
        currency: 'USD',
        initialBalance: '100000',
        marginRate: '0.02',
        financing: false,
      }),
    *candles(count: number) {
      let left = count;
      for (const batch of syntheticBatches({
        instrument: 'EUR_USD',
        granularity: 'M1',
        from: Date.UTC(2019, 0, 1),
        to: Date.UTC(2024, 0, 1),
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
    tuneV8,
  };
}

/** Feeds the batches to `sim`; with `orders`, a reversal every 25 candles with TP 15, SL 10 and a trailing stop of 8 pips. */
export function feed(sim: Sim, batches: Iterable<readonly unknown[]>, orders: boolean): void {
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
        request: {
          type: 'MARKET',
          instrument: 'EUR_USD',
          units: String(units),
          takeProfitOnFill: { distance: '0.00150' },
          stopLossOnFill: { distance: '0.00100' },
          trailingStopLossOnFill: { distance: '0.00080' },
          clientExtensions: { id },
        },
      });
    }
  }
}
