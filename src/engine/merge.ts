// Observable alone, from its own module: 'rxjs' itself loads all of rxjs (about 220 CommonJS files,
// 0.1-0.2 s of a backtest's start-up); the same file, so the same class, as 'rxjs' exports.
import { Observable } from 'rxjs/internal/Observable';
import type { MarketEvent } from '../domain/events.ts';

/**
 * Merges time-ordered sources into time-ordered runs of events (a k-way merge on `at`): each value
 * is a batch that continues where the previous one stopped. Use it to drive an engine batch by
 * batch (backtests); `mergeSources` gives the same events one at a time as an Observable.
 *
 * Each source yields batches in non-decreasing `at` order. Ties go to the source listed first, so
 * callers list ticks before fine candles before coarse candles: at an instant where an M1 and an H1
 * candle both close, the M1 candle is seen first. A run is the stretch of the leading source's
 * batch up to the head of the next source, so with one source (the common case) every batch is
 * passed on as it is, uncopied.
 *
 * A source that goes back in time fails the merge with an error naming it. Returning early (a
 * `break` in `for await`) closes every source iterator.
 */
export async function* mergeBatches(
  sources: readonly AsyncIterable<readonly MarketEvent[]>[],
): AsyncGenerator<readonly MarketEvent[]> {
  const iterators = sources.map((s) => s[Symbol.asyncIterator]());
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
  let finished = false;
  try {
    for (let i = 0; i < iterators.length; i++) if (await refill(i)) live.push(i);
    let last = -Infinity;
    while (live.length > 0) {
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
      const start = pos[lead]!;
      const p = runEnd(events, start, limit, lead < limitIndex, last, lead);
      const n = events.length;
      if (p > start) last = events[p - 1]!.at;
      pos[lead] = p;
      yield start === 0 && p === n ? events : events.slice(start, p);
      if (p >= n && !(await refill(lead))) live.splice(live.indexOf(lead), 1);
    }
    finished = true;
  } finally {
    // Early exit (break, error): close the sources so files and sockets are released.
    if (!finished) for (const it of iterators) void it.return?.();
  }
}

/**
 * Where the run of `events` that starts at `start` ends: before the first event past `limit` (or at
 * it, when the other source wins ties). Checks the order on the way. A plain function, not part of
 * the generator: a generator's locals live on the heap, and a number stored there per event is a
 * heap allocation per event.
 */
function runEnd(
  events: readonly MarketEvent[],
  start: number,
  limit: number,
  leadWinsTies: boolean,
  last: number,
  lead: number,
): number {
  let p = start;
  let prev = last;
  const n = events.length;
  while (p < n) {
    const at = events[p]!.at;
    if (at > limit || (at === limit && !leadWinsTies)) break;
    if (at < prev) {
      throw new Error(
        `source ${lead} went back in time: ${new Date(at).toISOString()} after ${new Date(prev).toISOString()}`,
      );
    }
    prev = at;
    p++;
  }
  return p;
}

/**
 * The merged stream of `mergeBatches` as an Observable of single events, for consumers that
 * compose operators (the paper/live runner, tests). Only batch boundaries are asynchronous; inside
 * a batch events are emitted synchronously. Unsubscribing stops at the next event and closes every
 * source iterator.
 */
export function mergeSources(
  sources: readonly AsyncIterable<readonly MarketEvent[]>[],
): Observable<MarketEvent> {
  return new Observable<MarketEvent>((subscriber) => {
    const runs = mergeBatches(sources);
    const pump = async (): Promise<void> => {
      for await (const run of runs) {
        for (let i = 0; i < run.length; i++) {
          if (subscriber.closed) return;
          subscriber.next(run[i]!);
        }
        if (subscriber.closed) return;
      }
      subscriber.complete();
    };
    pump().catch((e: unknown) => subscriber.error(e));
    return () => {
      void runs.return(undefined);
    };
  });
}

/** Wraps a synchronous iterable of batches (a generator, an array) as an async source. */
export async function* fromBatches<T>(batches: Iterable<readonly T[]>): AsyncIterable<readonly T[]> {
  for (const b of batches) yield b;
}
