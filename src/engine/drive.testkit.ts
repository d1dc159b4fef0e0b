// The engine's tests drive it the one way every mode does (attach, feed, stop), over merged sources.
import type { MarketEvent } from '../domain/events.ts';
import type { Params } from '../strategy/api.ts';
import type { Engine } from './engine.ts';
import { mergeBatches } from './merge.ts';

/**
 * Feeds the merged sources to `engine` one event at a time, `before` (the simulated broker) seeing
 * each event first, then calls onStop; rejects with what a handler threw.
 */
export async function driveSources<P extends Params, S>(
  engine: Engine<P, S>,
  sources: AsyncIterable<readonly MarketEvent[]>[],
  before?: (ev: MarketEvent) => void,
): Promise<void> {
  const detach = engine.attach();
  try {
    for await (const batch of mergeBatches(sources))
      for (const ev of batch) {
        before?.(ev);
        engine.feed([ev]);
      }
    engine.stop();
  } finally {
    detach();
  }
}
