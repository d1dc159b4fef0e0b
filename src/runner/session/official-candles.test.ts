import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V20Error } from '../../adapters/v20/errors.ts';
import type { Candle } from '../../domain/candle.ts';
import type { Candlestick } from '../../domain/v20/index.ts';
import { LiveCandleFeed, liveCandleSourceOf } from './official-candles.ts';
import { built, silent, wire } from './official-candles.testkit.ts';

/** What one attempt of a fetch answers: transient ones are retried, the last one decides. */
type Transient = 'incomplete' | 'missing' | 503;
type Last = 'ok' | 'later' | 400;

const answer = (o: Transient | Last, from: number): { candles: Candlestick[] } => {
  switch (o) {
    case 'ok':
      return { candles: [wire(from, true)] };
    case 'incomplete':
      return { candles: [wire(from, false)] };
    case 'missing':
      return { candles: [] };
    case 'later':
      return { candles: [wire(from + 60_000, true)] };
    case 503:
    case 400:
      throw new V20Error({
        code: 'V20_HTTP',
        method: 'GET',
        path: '/v3/instruments/X/candles',
        message: `HTTP ${o}`,
        status: o,
        retryable: o === 503,
      });
  }
};

describe('LiveCandleFeed', () => {
  it('delivers every candle once, in completion order per instrument, official exactly when the endpoint ends with a complete candle for its period (fast-check)', async () => {
    const plan = fc.record({
      transient: fc.array(fc.constantFrom<Transient>('incomplete', 'missing', 503), { maxLength: 3 }),
      last: fc.constantFrom<Last>('ok', 'ok', 'later', 400),
      delays: fc.array(fc.integer({ min: 0, max: 15 }), { minLength: 4, maxLength: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('EUR_USD', 'USD_JPY'), plan), { minLength: 1, maxLength: 12 }),
        async (adds) => {
          const plans = new Map<string, (typeof adds)[number][1]>();
          const attempts = new Map<string, number>();
          const next = new Map<string, number>();
          const delivered: Candle[] = [];
          const feed = new LiveCandleFeed({
            source: 'endpoint',
            log: silent,
            waitMs: 5000,
            retryMs: 2,
            deliver: (c) => delivered.push(c),
            fetch: async (instrument, _g, from) => {
              const key = `${instrument}@${from}`;
              const p = plans.get(key)!;
              const k = attempts.get(key) ?? 0;
              attempts.set(key, k + 1);
              await new Promise((res) => setTimeout(res, p.delays[k] ?? 0));
              return answer(k < p.transient.length ? p.transient[k]! : p.last, from);
            },
          });
          const order: Candle[] = [];
          for (const [instrument, p] of adds) {
            const i = next.get(instrument) ?? 0;
            next.set(instrument, i + 1);
            const c = built(instrument, i);
            plans.set(`${instrument}@${c.time}`, p);
            order.push(c);
            feed.add(c);
          }
          await feed.drain();
          expect(feed.counts.pending).toBe(0);
          expect(delivered.length).toBe(adds.length);
          for (const inst of ['EUR_USD', 'USD_JPY']) {
            expect(delivered.filter((c) => c.instrument === inst).map((c) => c.time)).toEqual(
              order.filter((c) => c.instrument === inst).map((c) => c.time),
            );
          }
          let official = 0;
          for (const c of delivered) {
            const p = plans.get(`${c.instrument}@${c.time}`)!;
            if (p.last === 'ok') {
              official++;
              expect(c).toMatchObject({
                bo: 1.2,
                bh: 1.21,
                al: 1.1901,
                volume: 40,
                at: c.time + 60_000,
                complete: true,
              });
              expect(attempts.get(`${c.instrument}@${c.time}`)).toBe(p.transient.length + 1);
            } else expect(order).toContain(c); // the tick-built object itself
          }
          expect(feed.counts).toMatchObject({ official, fromTicks: adds.length - official, dropped: 0 });
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);

  it("the 'ticks' source delivers at once; a closed feed drops what waits and what comes", async () => {
    const out: Candle[] = [];
    const ticks = new LiveCandleFeed({ source: 'ticks', log: silent, deliver: (c) => out.push(c) });
    ticks.add(built('EUR_USD', 0));
    expect(out.length).toBe(1);
    expect(ticks.counts).toMatchObject({ fromTicks: 1, official: 0 });

    const never = new LiveCandleFeed({
      source: 'endpoint',
      log: silent,
      deliver: (c) => out.push(c),
      fetch: () => new Promise(() => {}),
    });
    never.add(built('EUR_USD', 0));
    never.add(built('EUR_USD', 1));
    never.close();
    never.add(built('EUR_USD', 2));
    await never.drain();
    expect(out.length).toBe(1);
    expect(never.counts).toMatchObject({ pending: 0, dropped: 3, official: 0, fromTicks: 0 });
  });

  it('a source other than endpoint or ticks is refused with what to give', () => {
    expect(liveCandleSourceOf('ticks')).toBe('ticks');
    expect(() => liveCandleSourceOf('official', '--candles')).toThrow(
      /--candles must be 'endpoint' .* or 'ticks' .*got "official"/,
    );
    expect(() => new LiveCandleFeed({ source: 'endpoint', log: silent, deliver: () => {} })).toThrow(
      /needs a fetch/,
    );
    expect(() => new LiveCandleFeed({ source: 'ticks', log: silent, deliver: () => {}, waitMs: -1 })).toThrow(
      />= 0/,
    );
  });
});
