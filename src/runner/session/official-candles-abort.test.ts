import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V20Error } from '../../adapters/v20/errors.ts';
import type { Candle } from '../../domain/candle.ts';
import { type CandleFetchOptions, LiveCandleFeed } from './official-candles.ts';
import { built, silent, wire } from './official-candles.testkit.ts';

// The feed's per-attempt options against fetches that honour them (as V20Rest.candles does): a
// fetch ends when its answer comes or when its signal aborts, whichever is first. The HTTP side of
// the same is tested against the sandbox in test/runner/official-candles-cancel.e2e.test.ts.

type Outcome = 'ok' | 'incomplete' | 503 | 400;

/** One call of the fetch, as the test saw it. */
interface Call {
  readonly key: string;
  readonly o: CandleFetchOptions;
  /** Ended by its own answer (before any abort). */
  answered: boolean;
  /** Ended by its signal. */
  aborted: boolean;
  /** Its answer was a complete candle (the feed may deliver it). */
  official: boolean;
}

describe('LiveCandleFeed fetch options', () => {
  it('every attempt gets retry: false and a signal; once the feed gives up (wait passed) or closes, no fetch is left running; a signal never aborts an attempt whose answer came (fast-check)', async () => {
    const plan = fc.record({
      outcomes: fc.array(fc.constantFrom<Outcome>('ok', 'incomplete', 503, 400), {
        minLength: 1,
        maxLength: 4,
      }),
      // Some latencies exceed the 40 ms wait: those attempts must be aborted, not left to run.
      latencies: fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 4, maxLength: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('EUR_USD', 'USD_JPY'), plan), { minLength: 1, maxLength: 6 }),
        fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
        async (adds, closeAfter) => {
          const plans = new Map<string, (typeof adds)[number][1]>();
          const calls: Call[] = [];
          const delivered: Candle[] = [];
          const feed = new LiveCandleFeed({
            source: 'endpoint',
            log: silent,
            waitMs: 40,
            retryMs: 2,
            deliver: (c) => delivered.push(c),
            fetch: (instrument, _g, from, o) => {
              const key = `${instrument}@${from}`;
              const p = plans.get(key)!;
              const k = calls.filter((c) => c.key === key).length;
              const call: Call = { key, o, answered: false, aborted: false, official: false };
              calls.push(call);
              const outcome = p.outcomes[Math.min(k, p.outcomes.length - 1)]!;
              return new Promise((resolve, reject) => {
                const onAbort = (): void => {
                  clearTimeout(timer);
                  call.aborted = true;
                  reject(new V20Error({ code: 'V20_NETWORK', method: 'GET', path: key, message: 'aborted' }));
                };
                const timer = setTimeout(() => {
                  o.signal.removeEventListener('abort', onAbort);
                  call.answered = true;
                  if (outcome === 503 || outcome === 400) {
                    reject(
                      new V20Error({
                        code: 'V20_HTTP',
                        method: 'GET',
                        path: key,
                        message: `HTTP ${outcome}`,
                        status: outcome,
                        retryable: outcome === 503,
                      }),
                    );
                    return;
                  }
                  call.official = outcome === 'ok';
                  resolve({ candles: [wire(from, outcome === 'ok')] });
                }, p.latencies[k] ?? 0);
                o.signal.addEventListener('abort', onAbort, { once: true });
              });
            },
          });
          const next = new Map<string, number>();
          for (const [instrument, p] of adds) {
            const i = next.get(instrument) ?? 0;
            next.set(instrument, i + 1);
            const c = built(instrument, i);
            plans.set(`${instrument}@${c.time}`, p);
            feed.add(c);
          }
          if (closeAfter !== undefined) {
            await new Promise((res) => setTimeout(res, closeAfter));
            feed.close();
          }
          await feed.drain();

          expect(calls.length).toBeGreaterThan(0);
          for (const c of calls) {
            expect(c.o.retry).toBe(false);
            // Ended one way or the other by the time drain resolved: nothing runs in the background.
            expect(c.answered || c.aborted).toBe(true);
            expect(c.answered && c.aborted).toBe(false);
            expect(c.o.signal.aborted).toBe(c.aborted);
          }
          // Every official candle came from an attempt that was answered, never aborted.
          const officialKeys = new Set(calls.filter((c) => c.official).map((c) => c.key));
          for (const d of delivered)
            if (d.bo === 1.2) expect(officialKeys.has(`${d.instrument}@${d.time}`)).toBe(true);
          expect(feed.counts.official + feed.counts.fromTicks + feed.counts.dropped).toBe(adds.length);
          expect(feed.counts.pending).toBe(0);
          if (closeAfter === undefined) expect(feed.counts.dropped).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});
