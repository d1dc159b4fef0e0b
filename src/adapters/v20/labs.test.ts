import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labsRoute } from '../../sandbox/labs.ts';
import type { SandboxRoute } from '../../sandbox/route.ts';
import { HAS_SHARED, OANDA, warnIfNoShared } from '../../../test/shared.ts';
import { V20Error } from './errors.ts';
import { V20Http } from './http.ts';
import {
  AUTOCHARTIST_PERIODS,
  LABS_PERIODS,
  V20Labs,
  adjustPeriod,
  coveringPeriod,
  parseAutochartist,
  parseCalendar,
  parseCot,
  parseSpreads,
  toCalendarEvent,
  toSignalEvent,
} from './labs.ts';

/** A real HTTP server on 127.0.0.1 mounting one sandbox route as the sandbox does (JSON replies, v20 headers). */
async function serve(
  route: SandboxRoute,
): Promise<{ url: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    void (async () => {
      const reply = await route({
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', 'http://127.0.0.1'),
        headers: {},
        body: undefined,
      });
      const r = reply ?? { status: 404, body: { errorMessage: 'not found' } };
      res.writeHead(r.status, {
        'Content-Type': 'application/json',
        RequestID: String(hits.length),
        ...r.headers,
      });
      res.end(JSON.stringify(r.body ?? {}));
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

const NOW = Date.UTC(2024, 2, 6, 13, 30); // sandbox time
let sandbox: Awaited<ReturnType<typeof serve>>;
let http: V20Http;
let labs: V20Labs;
beforeAll(async () => {
  sandbox = await serve(labsRoute({ now: () => NOW }));
  http = new V20Http({ baseUrl: sandbox.url, retries: 0 });
  labs = new V20Labs(http, () => NOW);
});
afterAll(async () => {
  await http.close();
  await sandbox.close();
});

async function rejection(p: Promise<unknown>): Promise<V20Error> {
  try {
    await p;
  } catch (e) {
    return e as V20Error;
  }
  throw new Error('expected a rejection');
}

describe('the labs period rule', () => {
  it('adjusts to the nearest allowed period; halfway goes to the larger; out of range clamps', () => {
    expect(LABS_PERIODS).toEqual([3600, 43200, 86400, 604800, 2592000, 7776000, 15552000, 31536000]);
    for (const p of LABS_PERIODS) expect(adjustPeriod(p)).toBe(p);
    expect(adjustPeriod(57600)).toBe(43200); // the recorded spreads request: 16 h → 12 h
    expect(adjustPeriod(64800)).toBe(86400); // exactly between 12 h and 1 d
    expect(adjustPeriod(64799)).toBe(43200);
    expect(adjustPeriod(1)).toBe(3600);
    expect(adjustPeriod(10 * 31536000)).toBe(31536000);
    expect(adjustPeriod(20000, AUTOCHARTIST_PERIODS)).toBe(14400);
    expect(adjustPeriod(21600, AUTOCHARTIST_PERIODS)).toBe(28800);
    expect(() => adjustPeriod(0)).toThrow(/positive number of seconds/);
    expect(() => adjustPeriod(Number.NaN)).toThrow(/positive/);
    // A covering period reaches at least as far back as asked (when it can).
    expect(coveringPeriod(90000)).toBe(604800);
    expect(coveringPeriod(86400)).toBe(86400);
    expect(coveringPeriod(1e9)).toBe(31536000);
  });
});

describe.skipIf(!HAS_SHARED)('recorded labs responses', () => {
  warnIfNoShared('recorded labs responses');
  const rec = (): Record<string, { response: unknown }> =>
    JSON.parse(readFileSync(join(OANDA, 'fixtures/oandapyV20/forexlabs.json'), 'utf8')) as Record<
      string,
      { response: unknown }
    >;

  it('parse with the typed parsers and convert to engine events', () => {
    const r = rec();
    const cal = parseCalendar(r._v3_forexlabs_calendar!.response);
    expect(toCalendarEvent(cal[0]!)).toEqual({
      kind: 'calendar',
      at: 1519916400000,
      currency: 'USD',
      title: 'ISM Manufacturing',
      impact: 3,
      actual: '60.8',
      forecast: '59.5',
      previous: '59.1',
    });
    expect(parseSpreads(r._v3_forexlabs_spreads!.response).avg[0]).toEqual([1520028000, 3.01822]);
    expect(parseCot(r._v3_forexlabs_commoftrad!.response).EUR_USD).toHaveLength(5);
    const ac = parseAutochartist(r._v3_forexlabs_autochartist!.response);
    const ev = toSignalEvent(ac.signals[0]!);
    expect(ev).toMatchObject({
      kind: 'signal',
      at: 1520589600000,
      instrument: 'NZD_USD',
      source: 'autochartist',
      direction: 'up',
      horizonMs: (1520773200 - 1520589600) * 1000,
      strength: 0.7236,
    });
    expect(ev.data).toMatchObject({ pattern: 'Channel Down', type: 'chartpattern', interval: 60 });
  });

  it('the sandbox serves the recorded shapes: same keys, same types', async () => {
    const r = rec();
    const keysOf = (o: unknown): string[] => Object.keys(o as object).sort();
    const cal = (await (
      await fetch(`${sandbox.url}/labs/v1/calendar?instrument=EUR_USD&period=604800`)
    ).json()) as unknown[];
    expect(cal.length).toBeGreaterThan(0);
    expect(keysOf(cal[0])).toEqual(keysOf((r._v3_forexlabs_calendar!.response as unknown[])[0]));
    const cot = (await (
      await fetch(`${sandbox.url}/labs/v1/commitments_of_traders?instrument=EUR_USD`)
    ).json()) as Record<string, unknown[]>;
    expect(keysOf(cot.EUR_USD![0])).toEqual(
      keysOf((r._v3_forexlabs_commoftrad!.response as Record<string, unknown[]>).EUR_USD![0]),
    );
    const ac = (await (
      await fetch(`${sandbox.url}/labs/v1/signal/autochartist?instrument=EUR_USD&type=chartpattern`)
    ).json()) as { signals: { meta: unknown; data: unknown }[] };
    const recSig = (r._v3_forexlabs_autochartist!.response as { signals: { meta: unknown; data: unknown }[] })
      .signals[0]!;
    expect(keysOf(ac.signals[0])).toEqual(keysOf(recSig));
    expect(keysOf(ac.signals[0]!.meta)).toEqual(keysOf(recSig.meta));
    expect(keysOf(ac.signals[0]!.data)).toEqual(keysOf(recSig.data));
  });
});

describe('the labs client against the sandbox', () => {
  it('fetches the four endpoints, with the adjusted period sent', async () => {
    const before = sandbox.hits.length;
    const spreads = await labs.spreads('EUR_USD', 57600);
    expect(sandbox.hits[before]).toContain('period=43200');
    expect(spreads.avg.length).toBe(48); // 12 h in 15-minute buckets
    for (let i = 0; i < spreads.avg.length; i++) {
      expect(spreads.min[i]![1]).toBeLessThanOrEqual(spreads.avg[i]![1]);
      expect(spreads.avg[i]![1]).toBeLessThanOrEqual(spreads.max[i]![1]);
      expect(spreads.avg[i]![0] * 1000).toBeGreaterThanOrEqual(NOW - 43200_000);
    }
    const cal = await labs.calendarEntries('EUR_USD', 86400);
    expect(cal.length).toBeGreaterThan(0);
    expect(new Set(cal.map((e) => e.currency))).toEqual(new Set(['EUR', 'USD']));
    const cot = await labs.commitmentsOfTraders('EUR_USD');
    expect(cot.map((c) => new Date(c.date * 1000).getUTCDay())).toEqual([2, 2, 2, 2, 2]);
    expect(cot[4]!.date * 1000).toBeLessThanOrEqual(NOW);
    const ac = await labs.autochartist({ instrument: 'USD_JPY', period: 600000, type: 'keylevel' });
    expect(sandbox.hits[sandbox.hits.length - 1]).toContain('period=604800');
    expect(
      ac.signals.every(
        (s) => s.type === 'keylevel' && s.instrument === 'USD_JPY' && s.data.price !== undefined,
      ),
    ).toBe(true);
  });

  it('is deterministic around the sandbox time', async () => {
    const a = await labs.calendarEntries('GBP_USD', 604800);
    const b = await labs.calendarEntries('GBP_USD', 604800);
    expect(b).toEqual(a);
    const other = new V20Labs(http, () => NOW);
    const shifted = await serve(labsRoute({ now: () => NOW + 3600_000 }));
    const h2 = new V20Http({ baseUrl: shifted.url, retries: 0 });
    const c = await new V20Labs(h2, () => NOW + 3600_000).calendarEntries('GBP_USD', 604800);
    // Sliding the clock by an hour keeps the overlapping entries identical.
    const overlap = (e: { timestamp: number }) =>
      e.timestamp * 1000 >= NOW + 3600_000 - 604800_000 && e.timestamp * 1000 <= NOW;
    expect(c.filter(overlap)).toEqual(a.filter(overlap));
    expect(await other.calendarEntries('GBP_USD', 604800)).toEqual(a);
    await h2.close();
    await shifted.close();
  });

  it('unknown instruments: 400 for a malformed name, 404 for an unknown one', async () => {
    const bad = await rejection(labs.spreads('eurusd', 3600));
    expect(bad).toBeInstanceOf(V20Error);
    expect(bad.status).toBe(400);
    expect(bad.message).toMatch(/Invalid value specified for 'instrument'/);
    const unknown = await rejection(labs.commitmentsOfTraders('ABC_XYZ'));
    expect(unknown.status).toBe(404);
    expect(unknown.message).toMatch(/ABC_XYZ not found/);
    expect(await labs.commitmentsOfTraders('EUR_GBP')).toEqual([]);
  });

  it('removed endpoints fail with V20_UNSUPPORTED and send no request', async () => {
    const before = sandbox.hits.length;
    const requests = http.stats.requests;
    for (const p of [labs.historicalPositionRatios('EUR_USD', 86400), labs.orderbook('EUR_USD', 3600)]) {
      const e = await rejection(p);
      expect(e.code).toBe('V20_UNSUPPORTED');
      expect(e.message).toMatch(/removed by OANDA.*no request was sent/);
    }
    expect(sandbox.hits.length).toBe(before);
    expect(http.stats.requests).toBe(requests);
  });

  it('implements the Labs port: calendar and signal events in [from, to), in time order', async () => {
    const from = NOW - 3 * 86400_000;
    const to = NOW - 86400_000;
    const batches: { at: number; kind: string; currency: string }[][] = [];
    for await (const b of labs.calendar({ instrument: 'EUR_USD', from, to })) batches.push(b as never);
    const events = batches.flat();
    expect(events.length).toBeGreaterThan(0);
    expect(
      events.every(
        (e) =>
          e.kind === 'calendar' &&
          e.at >= from &&
          e.at < to &&
          (e.currency === 'EUR' || e.currency === 'USD'),
      ),
    ).toBe(true);
    expect(events.map((e) => e.at)).toEqual([...events.map((e) => e.at)].sort((a, b) => a - b));
    // The same window straight from the wire, filtered by hand.
    const wire = (await labs.calendarEntries('EUR_USD', 604800)).filter(
      (e) => e.timestamp * 1000 >= from && e.timestamp * 1000 < to,
    );
    expect(events).toHaveLength(wire.length);

    const sigs = [];
    for await (const b of labs.signals({ instrument: 'EUR_USD', from: NOW - 2 * 86400_000, to: NOW }))
      sigs.push(...b);
    expect(sigs.length).toBeGreaterThan(0);
    for (const s of sigs) {
      expect(s.instrument).toBe('EUR_USD');
      expect(['up', 'down']).toContain(s.direction);
      expect(s.horizonMs).toBeGreaterThan(0);
      expect(s.strength).toBeGreaterThan(0.5);
      expect(s.at).toBeLessThan(NOW);
    }
  });
});

describe('the labs client through the real sandbox server (startSandbox)', () => {
  it('serves /labs/v1 at the sandbox time, with v20 errors for unknown instruments', async () => {
    const { startSandbox } = await import('../../sandbox/server.ts');
    const start = Date.UTC(2024, 0, 10, 12);
    const sb = await startSandbox({ start });
    const h = new V20Http({ baseUrl: sb.url, retries: 0 });
    try {
      const l = new V20Labs(h, () => start);
      const spreads = await l.spreads('EUR_USD', 86400);
      expect(spreads.avg.length).toBe(96);
      expect(spreads.avg.every(([t]) => t * 1000 >= start - 86400_000 && t * 1000 < start)).toBe(true);
      const events = [];
      for await (const b of l.calendar({ instrument: 'EUR_USD', from: start - 7 * 86400_000, to: start }))
        events.push(...b);
      expect(events.length).toBeGreaterThan(0);
      // The same generated entries as the route alone gives at that time.
      const alone = await serve(labsRoute({ now: () => start }));
      const h2 = new V20Http({ baseUrl: alone.url, retries: 0 });
      expect(await new V20Labs(h2, () => start).calendarEntries('EUR_USD', 604800)).toEqual(
        await l.calendarEntries('EUR_USD', 604800),
      );
      await h2.close();
      await alone.close();
      sb.advance(3600_000);
      const later = await l.spreads('EUR_USD', 86400);
      expect(later.avg[later.avg.length - 1]![0]).toBe(spreads.avg[spreads.avg.length - 1]![0] + 3600);
      expect((await rejection(l.spreads('XXX_YYY', 3600))).status).toBe(404);
    } finally {
      await h.close();
      await sb.close();
    }
  });
});
