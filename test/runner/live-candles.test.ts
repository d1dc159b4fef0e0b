import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aggregateBatches } from '../../src/adapters/catalog/aggregate.ts';
import { Catalog } from '../../src/adapters/catalog/catalog.ts';
import type { Candle } from '../../src/domain/candle.ts';
import type { Granularity } from '../../src/domain/granularity.ts';
import { CandleBuilder } from '../../src/runner/session/live-candles.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const prices = (c: Candle) => ({
  instrument: c.instrument,
  granularity: c.granularity,
  time: c.time,
  at: c.at,
  bo: c.bo,
  bh: c.bh,
  bl: c.bl,
  bc: c.bc,
  ao: c.ao,
  ah: c.ah,
  al: c.al,
  ac: c.ac,
  complete: c.complete,
});

describe('CandleBuilder', () => {
  it('candles built from the ticks of a period equal the catalog candles (and their v20-aligned aggregates) of that period', async () => {
    const m1: Candle[] = [];
    // A Friday into the weekend and a New York 17:00 day boundary: gaps and daily alignment.
    for await (const b of new Catalog(resolve(ROOT, 'data/catalog')).candles({
      instrument: 'EUR_USD',
      granularity: 'M1',
      from: Date.UTC(2024, 0, 4, 12),
      to: Date.UTC(2024, 0, 8, 12),
    }))
      m1.push(...b);
    expect(m1.length).toBeGreaterThan(1000);
    const out: string[] = [];
    for (const g of ['M1', 'M5', 'H1', 'D'] as Granularity[]) {
      const builder = new CandleBuilder('EUR_USD', g);
      const built: Candle[] = [];
      for (const c of m1) {
        for (const [t, b, a] of [
          [c.time, c.bo, c.ao],
          [c.time + 15_000, c.bh, c.ah],
          [c.time + 30_000, c.bl, c.al],
          [c.time + 59_000, c.bc, c.ac],
        ] as const) {
          const done = builder.tick(t, b, a);
          if (done) built.push(done);
        }
      }
      const last = builder.heartbeat(Date.UTC(2024, 0, 8, 12)); // the end of the period: a bucket still open stays open
      if (last) built.push(last);
      const expected = g === 'M1' ? m1 : [...aggregateBatches([m1], g)].flat();
      expect(built.map(prices)).toEqual(expected.map(prices));
      out.push(`${g} ${built.length}`);
    }
    console.log(`[live candles] built from ticks = catalog/aggregated: ${out.join(', ')}`);
  });
});
