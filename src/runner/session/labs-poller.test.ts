import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LabsIdentity } from '../../adapters/catalog/labs-items.ts';
import { LabsWriter } from '../../adapters/catalog/labs-store.ts';
import { V20Http } from '../../adapters/v20/http.ts';
import { V20Labs } from '../../adapters/v20/labs.ts';
import { startSandbox, type Sandbox } from '../../sandbox/server.ts';
import { LabsPoller, labsEvents } from './labs-poller.ts';

/** The labs poller against the real sandbox over HTTP (generated and recorded labs data). */

const START = Date.UTC(2024, 0, 2, 12);
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

async function sandbox(
  o: { labs?: string } = {},
): Promise<{ sb: Sandbox; labs: V20Labs; clock: { t: number } }> {
  const sb = await startSandbox({ clock: 'manual', start: START, feed: false, ...o });
  const http = new V20Http({ baseUrl: sb.url, retries: 0 });
  cleanup.push(async () => {
    await http.close();
    await sb.close();
  });
  const clock = { t: START };
  return { sb, labs: new V20Labs(http, () => clock.t), clock };
}

describe('LabsPoller', () => {
  it('delivers each calendar entry and signal once, only for the subscribed currencies and instruments, in time order', async () => {
    const { sb, labs, clock } = await sandbox();
    const p = new LabsPoller({
      labs,
      calendar: ['USD', 'EUR'],
      signals: ['EUR_USD'],
      now: () => clock.t,
      every: { calendar: 60_000, signals: 60_000 },
    });
    const first = await p.poll();
    expect(p.stats).toMatchObject({ polls: 2, failures: 0 });
    expect(first.length).toBeGreaterThan(0);
    const events = labsEvents(first);
    for (const e of events) {
      if (e.kind === 'calendar') expect(['USD', 'EUR']).toContain(e.currency);
      else expect(e.instrument).toBe('EUR_USD');
      expect(e.at).toBeGreaterThanOrEqual(START);
    }
    // Nothing is due again at the same time; after a minute the same window gives nothing new.
    expect(await p.poll()).toEqual([]);
    expect(p.stats.polls).toBe(2);
    clock.t += 60_000;
    sb.setTime(clock.t);
    expect(await p.poll()).toEqual([]);
    expect(p.stats.polls).toBe(4);
    // A day later: only entries and signals not seen before.
    const keys = new Set(first.map((i) => `${i.kind}|${i.key}`));
    clock.t += 86_400_000;
    sb.setTime(clock.t);
    const later = await p.poll();
    expect(later.length).toBeGreaterThan(0);
    for (const i of later) expect(keys.has(`${i.kind}|${i.key}`)).toBe(false);
    expect(p.stats.items).toBe(first.length + later.length);
  });

  it('a restart with the delivered identities delivers nothing again', async () => {
    const { labs, clock } = await sandbox();
    const a = new LabsPoller({ labs, calendar: ['USD'], signals: ['EUR_USD'], now: () => clock.t });
    const delivered = await a.poll();
    const identity = new LabsIdentity();
    for (const i of delivered) identity.remember(i);
    const b = new LabsPoller({ labs, calendar: ['USD'], signals: ['EUR_USD'], now: () => clock.t, identity });
    expect(await b.poll()).toEqual([]);
    expect(b.stats.polls).toBe(2);
  });

  it('a calendar entry whose actual arrives later is delivered again as an update (recorded labs served by the sandbox)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-poller-'));
    const w = await LabsWriter.open(root, { now: 0 });
    const release = START / 1000 + 1800;
    const entry = {
      title: 'Non-Farm Payrolls',
      timestamp: release,
      currency: 'USD',
      impact: 3,
      forecast: '180K',
      previous: '150K',
    };
    w.append([w.identity.calendar(entry, START - 3_600_000)!]);
    w.append([w.identity.calendar({ ...entry, actual: '210K' }, release * 1000 + 5_000)!]);
    const { sb, labs, clock } = await sandbox({ labs: root });
    const p = new LabsPoller({ labs, calendar: ['USD'], now: () => clock.t, every: { calendar: 60_000 } });
    const before = labsEvents(await p.poll());
    expect(before).toEqual([
      {
        kind: 'calendar',
        at: START,
        releaseAt: release * 1000,
        currency: 'USD',
        title: 'Non-Farm Payrolls',
        impact: 3,
        forecast: '180K',
        previous: '150K',
      },
    ]);
    clock.t = release * 1000 + 60_000;
    sb.setTime(clock.t);
    const after = labsEvents(await p.poll());
    expect(after).toEqual([{ ...before[0], at: clock.t, actual: '210K', update: true }]);
    clock.t += 60_000;
    sb.setTime(clock.t);
    expect(await p.poll()).toEqual([]);
  });

  it('the rate budget puts off what is due beyond it', async () => {
    const { labs, clock } = await sandbox();
    const p = new LabsPoller({
      labs,
      signals: ['EUR_USD', 'GBP_USD', 'USD_JPY'],
      now: () => clock.t,
      requestsPerMinute: 2,
    });
    await p.poll();
    expect(p.stats).toMatchObject({ polls: 2, deferred: 1 });
    clock.t += 60_000;
    await p.poll();
    expect(p.stats).toMatchObject({ polls: 3, deferred: 1 });
  });

  it('labs failing or not answering is counted and never throws; the next round tries again', async () => {
    // A server that accepts and never answers.
    const hung: Server = createServer(() => {});
    await new Promise<void>((ok) => hung.listen(0, '127.0.0.1', ok));
    const http = new V20Http({
      baseUrl: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`,
      retries: 0,
      timeoutMs: 300,
    });
    cleanup.push(async () => {
      await http.close().catch(() => {});
      hung.closeAllConnections();
      await new Promise<void>((ok) => hung.close(() => ok()));
    });
    let t = START;
    const p = new LabsPoller({
      labs: new V20Labs(http, () => t),
      calendar: ['USD'],
      now: () => t,
      timeoutMs: 50,
    });
    expect(await p.poll()).toEqual([]);
    expect(p.stats).toMatchObject({ polls: 1, failures: 1, items: 0 });
    expect(p.stats.lastError).toMatch(/calendar: no answer in 50 ms/);
    t += 60_000;
    await p.poll();
    expect(p.stats).toMatchObject({ polls: 2, failures: 2 });
    // A server that answers with a calendar of the wrong shape: a parse failure, counted.
    const bad: Server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('[{"title": 5, "timestamp": 1, "currency": "USD", "impact": 3}]');
    });
    await new Promise<void>((ok) => bad.listen(0, '127.0.0.1', ok));
    const http2 = new V20Http({
      baseUrl: `http://127.0.0.1:${(bad.address() as AddressInfo).port}`,
      retries: 0,
    });
    cleanup.push(async () => {
      await http2.close();
      await new Promise<void>((ok) => bad.close(() => ok()));
    });
    const q = new LabsPoller({ labs: new V20Labs(http2, () => t), calendar: ['USD'], now: () => t });
    expect(await q.poll()).toEqual([]);
    expect(q.stats).toMatchObject({ polls: 1, failures: 1 });
    expect(q.stats.lastError).toMatch(/\[0\]\.title must be a string/);
  });
});
