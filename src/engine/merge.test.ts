import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { MarketEvent, TimerEvent } from '../domain/events.ts';
import { fromBatches, mergeSources } from './merge.ts';

const ev = (at: number, name: string): TimerEvent => ({ kind: 'timer', at, name });

function batchesOf<T>(xs: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

describe('mergeSources', () => {
  it('merges sorted sources into one sorted stream; ties go to the source listed first', async () => {
    const a = [ev(1, 'a1'), ev(3, 'a3'), ev(3, 'a3b'), ev(7, 'a7')];
    const b = [ev(0, 'b0'), ev(3, 'b3'), ev(8, 'b8')];
    const out = await lastValueFrom(
      mergeSources([fromBatches([a.slice(0, 2), a.slice(2)]), fromBatches([b])]).pipe(toArray()),
    );
    expect(out.map((e) => (e as TimerEvent).name)).toEqual(['b0', 'a1', 'a3', 'a3b', 'b3', 'a7', 'b8']);
  });

  it('equals a stable sort by (at, source) for any sources and batch sizes (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 40 }),
            fc.integer({ min: 1, max: 7 }),
          ),
          { minLength: 1, maxLength: 5 },
        ),
        async (specs) => {
          const sources = specs.map(([times, size], s) => {
            const evs = [...times].sort((x, y) => x - y).map((t, i) => ev(t, `${s}:${i}`));
            return { evs, size };
          });
          const expected = sources
            .flatMap(({ evs }, s) => evs.map((e, i) => ({ e, s, i })))
            .sort((x, y) => x.e.at - y.e.at || x.s - y.s || x.i - y.i)
            .map((x) => x.e.name);
          const out = await lastValueFrom(
            mergeSources(sources.map(({ evs, size }) => fromBatches(batchesOf(evs, size)))).pipe(toArray()),
            { defaultValue: [] as MarketEvent[] },
          );
          expect(out.map((e) => (e as TimerEvent).name)).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('fails the stream when a source goes back in time', async () => {
    const bad = fromBatches([[ev(5, 'x')], [ev(4, 'y')]]);
    await expect(lastValueFrom(mergeSources([bad]).pipe(toArray()))).rejects.toThrow(/went back in time/);
  });

  it('stops pulling and closes the sources when unsubscribed', async () => {
    let pulled = 0;
    let closed = false;
    async function* endless(): AsyncGenerator<readonly MarketEvent[]> {
      try {
        for (let i = 0; ; i++) {
          pulled++;
          yield [ev(i, String(i))];
        }
      } finally {
        closed = true;
      }
    }
    const seen: number[] = [];
    await new Promise<void>((resolve) => {
      const sub = mergeSources([endless()]).subscribe((e) => {
        seen.push(e.at);
        if (seen.length === 3) {
          sub.unsubscribe();
          setTimeout(resolve, 20);
        }
      });
    });
    expect(seen).toEqual([0, 1, 2]);
    expect(pulled).toBeLessThan(6);
    expect(closed).toBe(true);
  });
});
