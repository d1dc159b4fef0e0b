import { Observable } from 'rxjs';
import type { MarketEvent } from '../domain/events.ts';

/**
 * Merges time-ordered sources into one time-ordered event stream (a k-way merge on `at`).
 *
 * Each source yields batches in non-decreasing `at` order. Ties go to the source listed first, so
 * callers list ticks before fine candles before coarse candles: at an instant where an M1 and an H1
 * candle both close, the M1 candle is seen first. The merge emits runs: it forwards events from the
 * leading source until that source passes the head of the next one, so with one source (the common
 * case) it is a plain loop over the batches.
 *
 * Only batch boundaries are asynchronous; inside a batch events are emitted synchronously.
 * Unsubscribing stops the loop at the next batch and closes every source iterator.
 */
export function mergeSources(sources: readonly AsyncIterable<readonly MarketEvent[]>[]): Observable<MarketEvent> {
  return new Observable<MarketEvent>((subscriber) => {
    const iterators = sources.map((s) => s[Symbol.asyncIterator]());
    let closed = false;

    const run = async (): Promise<void> => {
      const batch: (readonly MarketEvent[])[] = [];
      const pos: number[] = [];
      const live: number[] = [];
      const refill = async (i: number): Promise<boolean> => {
        for (;;) {
          const r = await iterators[i]!.next();
          if (r.done) return false;
          if (r.value.length > 0) {
            batch[i] = r.value;
            pos[i] = 0;
            return true;
          }
        }
      };
      for (let i = 0; i < iterators.length; i++) if (await refill(i)) live.push(i);

      let last = -Infinity;
      while (live.length > 0 && !closed) {
        // Pick the source with the earliest head (ties: lowest index), and the head it must not pass.
        let lead = live[0]!;
        let leadAt = batch[lead]![pos[lead]!]!.at;
        for (let k = 1; k < live.length; k++) {
          const i = live[k]!;
          const at = batch[i]![pos[i]!]!.at;
          if (at < leadAt || (at === leadAt && i < lead)) {
            lead = i;
            leadAt = at;
          }
        }
        let limit = Infinity;
        let limitIndex = Infinity;
        for (const i of live) {
          if (i === lead) continue;
          const at = batch[i]![pos[i]!]!.at;
          if (at < limit || (at === limit && i < limitIndex)) {
            limit = at;
            limitIndex = i;
          }
        }
        const events = batch[lead]!;
        let p = pos[lead]!;
        const n = events.length;
        const leadWinsTies = lead < limitIndex;
        while (p < n) {
          const ev = events[p]!;
          const at = ev.at;
          if (at > limit || (at === limit && !leadWinsTies)) break;
          if (at < last) {
            throw new Error(`source ${lead} went back in time: ${new Date(at).toISOString()} after ${new Date(last).toISOString()}`);
          }
          last = at;
          subscriber.next(ev);
          p++;
        }
        pos[lead] = p;
        if (subscriber.closed) return;
        if (p >= n && !(await refill(lead))) live.splice(live.indexOf(lead), 1);
      }
      subscriber.complete();
    };

    run().catch((e: unknown) => subscriber.error(e));
    return () => {
      closed = true;
      for (const it of iterators) void it.return?.();
    };
  });
}

/** Wraps a synchronous iterable of batches (a generator, an array) as an async source. */
export async function* fromBatches<T>(batches: Iterable<readonly T[]>): AsyncIterable<readonly T[]> {
  for (const b of batches) yield b;
}
