import { describe, expect, it } from 'vitest';
import { startSandbox } from './server.ts';
import { call, jsonLines, readLines } from './testkit.ts';

describe('sandbox: replay clock', () => {
  it('replays the catalog M1 candles as ticks inside each candle, in time order, moving the clock', async () => {
    const start = Date.parse('2024-03-05T10:00:00Z');
    // One simulated minute per real millisecond.
    const sb = await startSandbox({
      clock: 'replay',
      speed: 60_000,
      start: '2024-03-05T10:00:00Z',
      heartbeatMs: 1000,
    });
    try {
      const A = `${sb.url}/v3/accounts/${sb.accountIDs[0]}`;
      const s = await readLines(`${A}/pricing/stream?instruments=EUR_USD`);
      await s.until(
        () => jsonLines(s.lines).filter((l) => l.type === 'PRICE').length >= 40,
        10_000,
        '40 prices',
      );
      s.close();
      const prices = jsonLines(s.lines).filter((l) => l.type === 'PRICE');
      const times = prices.map((p) => Date.parse(p.time as string));
      for (let i = 1; i < times.length; i++) expect(times[i]!).toBeGreaterThanOrEqual(times[i - 1]!);
      expect(times[0]!).toBeGreaterThanOrEqual(start);
      // Every tick lies inside the bid range of the M1 candle of its minute.
      const from = Math.floor(times[0]! / 60_000) * 60_000;
      const to = Math.floor(times[times.length - 1]! / 60_000) * 60_000 + 60_000;
      const c = await call(
        'GET',
        `${sb.url}/v3/instruments/EUR_USD/candles?granularity=M1&price=B&from=${from / 1000}&to=${to / 1000}`,
      );
      const byMinute = new Map<number, { l: number; h: number }>();
      for (const k of c.body.candles as { time: string; bid: { l: string; h: string } }[])
        byMinute.set(Date.parse(k.time), { l: Number(k.bid.l), h: Number(k.bid.h) });
      let checked = 0;
      for (const p of prices) {
        const m = byMinute.get(Math.floor(Date.parse(p.time as string) / 60_000) * 60_000);
        if (!m) continue; // the candle of the current minute is not served until it closes
        const bid = Number(p.bids[0].price);
        expect(bid).toBeGreaterThanOrEqual(m.l - 1e-9);
        expect(bid).toBeLessThanOrEqual(m.h + 1e-9);
        checked++;
      }
      expect(checked).toBeGreaterThan(20);
      const stats = await call('GET', `${sb.url}/sandbox/stats`);
      expect(Date.parse(stats.body.time)).toBeGreaterThan(start + 10 * 60_000);
      // A market order fills at the replayed price.
      const o = await call('POST', `${A}/orders`, {
        order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
      });
      expect(o.status).toBe(201);
      expect(o.body.orderFillTransaction.type).toBe('ORDER_FILL');
    } finally {
      await sb.close();
    }
  }, 20_000);
});
