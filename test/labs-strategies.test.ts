import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabsWriter, catalogLabs } from '../src/adapters/catalog/labs-store.ts';
import { V20Http } from '../src/adapters/v20/http.ts';
import { V20Labs } from '../src/adapters/v20/labs.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { dataCatalog } from '../src/app/sources.ts';
import { loadStrategy } from '../src/app/load-strategy.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { parseTime } from '../src/domain/time.ts';
import { LabsPoller } from '../src/runner/session/labs-poller.ts';
import { startSandbox } from '../src/sandbox/server.ts';

/**
 * The two example labs strategies, backtested on recorded labs data and the bundled sample candles:
 * one stands aside around high-impact releases, one trades Autochartist patterns.
 */

const ROOT = resolve(import.meta.dirname, '..');
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const FROM = '2024-01-08T00:00:00Z';
const TO = '2024-01-27T00:00:00Z';

async function backtest(file: string, catalog: string, params: string[]) {
  const loaded = await loadStrategy(resolve(ROOT, file), params);
  const config = loadConfig(undefined, { run: { from: FROM, to: TO } } as never);
  const src = await dataCatalog(resolve(ROOT, 'data/catalog'));
  return runBacktest({
    loaded,
    config,
    instruments: loadInstruments(),
    candles: src.candles,
    available: src.available,
    log: silent,
    keepTransactions: true,
    labs: catalogLabs(catalog),
  });
}

describe('example labs strategies on recorded data', () => {
  it(
    'calendar-stand-aside opens nothing from 30 min before a high-impact release it knows of until 30 min after',
    { timeout: 60_000 },
    async () => {
      // A recording: each weekday a USD release at 13:30 UTC, published at 00:00, its actual at 13:30:05.
      const catalog = mkdtempSync(join(tmpdir(), 'fxflow-standaside-'));
      const w = await LabsWriter.open(catalog, { now: 0 });
      const releases: number[] = [];
      for (let d = parseTime(FROM); d < parseTime(TO); d += 86_400_000) {
        const day = new Date(d).getUTCDay();
        if (day === 0 || day === 6) continue;
        const release = d + 13.5 * 3_600_000;
        releases.push(release);
        const entry = {
          title: 'Retail Sales m/m',
          timestamp: release / 1000,
          currency: 'USD',
          impact: 3,
          forecast: '0.3',
          previous: '0.1',
        };
        w.append([w.identity.calendar(entry, d)!]);
        w.append([w.identity.calendar({ ...entry, actual: '0.5' }, release + 5_000)!]);
      }
      const params = ['granularity=M15', 'fast=4', 'slow=12'];
      const aside = await backtest('strategies/calendar-stand-aside.ts', catalog, params);
      const opens = aside.transactions
        .filter((t) => t.type === 'ORDER_FILL' && (t as { tradeOpened?: unknown }).tradeOpened !== undefined)
        .map((t) => parseTime(t.time as string));
      expect(opens.length).toBeGreaterThan(10);
      for (const t of opens)
        for (const r of releases)
          expect(
            t < r - 30 * 60_000 || t > r + 30 * 60_000,
            `a trade opened at ${new Date(t).toISOString()} near the release at ${new Date(r).toISOString()}`,
          ).toBe(true);
      // Without the recording it trades through the releases: the calendar is what keeps it aside.
      const blind = await backtest(
        'strategies/calendar-stand-aside.ts',
        mkdtempSync(join(tmpdir(), 'fxflow-empty-')),
        params,
      );
      const blindOpens = blind.transactions
        .filter((t) => t.type === 'ORDER_FILL' && (t as { tradeOpened?: unknown }).tradeOpened !== undefined)
        .map((t) => parseTime(t.time as string));
      expect(blindOpens.some((t) => releases.some((r) => t >= r - 30 * 60_000 && t <= r + 30 * 60_000))).toBe(
        true,
      );
    },
  );

  it(
    'autochartist-patterns trades only patterns already published, with the prediction box as take profit',
    { timeout: 60_000 },
    async () => {
      // Recorded with the labs poller from the sandbox, every 4 hours of sandbox time.
      const sb = await startSandbox({ clock: 'manual', start: FROM, feed: false });
      const http = new V20Http({ baseUrl: sb.url, retries: 0 });
      const catalog = mkdtempSync(join(tmpdir(), 'fxflow-patterns-'));
      const w = await LabsWriter.open(catalog, { now: 0 });
      let t = parseTime(FROM);
      const poller = new LabsPoller({
        labs: new V20Labs(http),
        signals: ['EUR_USD'],
        identity: w.identity,
        now: () => t,
        every: { signals: 4 * 3_600_000 },
      });
      try {
        for (; t < parseTime(TO); t += 4 * 3_600_000) {
          sb.setTime(t);
          w.append(await poller.poll());
        }
      } finally {
        await http.close();
        await sb.close();
      }
      expect(poller.stats).toMatchObject({ failures: 0 });
      expect(poller.stats.items).toBeGreaterThan(10);
      const known: { at: number; tp: number }[] = [];
      for await (const b of catalogLabs(catalog).signals({
        instruments: ['EUR_USD'],
        from: parseTime(FROM),
        to: parseTime(TO),
      })) {
        for (const e of b) {
          const box = e.data!.prediction as { pricelow: number; pricehigh: number };
          known.push({ at: e.at, tp: e.direction === 'up' ? box.pricehigh : box.pricelow });
        }
      }
      const r = await backtest('strategies/autochartist-patterns.ts', catalog, [
        'granularity=M15',
        'minProbability=55',
      ]);
      const orders = r.transactions.filter(
        (x) =>
          x.type === 'MARKET_ORDER' && (x as { takeProfitOnFill?: unknown }).takeProfitOnFill !== undefined,
      );
      expect(orders.length).toBeGreaterThan(0);
      for (const o of orders) {
        const at = parseTime(o.time as string);
        const tp = Number((o as { takeProfitOnFill: { price: string } }).takeProfitOnFill.price);
        // Decided on a pattern published at or before the order, whose box gives the take profit.
        expect(
          known.some((k) => k.at <= at && Math.abs(k.tp - tp) < 1e-6),
          `order at ${o.time as string} tp ${tp}`,
        ).toBe(true);
      }
    },
  );
});
