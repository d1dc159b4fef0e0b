import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalendarItem } from '../src/adapters/catalog/labs-items.ts';
import { catalogLabs, readLabsItems } from '../src/adapters/catalog/labs-store.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import type { Candle } from '../src/domain/candle.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { defineStrategy } from '../src/strategy/api.ts';
import { startSandbox, type Sandbox } from '../src/sandbox/server.ts';

/**
 * Labs on the server's clock: `fxflow record` against a sandbox replaying at speed 600 (ten
 * sandbox minutes a wall second) stamps each item with the sandbox's time, not the wall clock's,
 * and asks windows measured on the sandbox's clock, so no release falls between two polls.
 */
const ROOT = resolve(import.meta.dirname, '..');
const START = Date.UTC(2024, 0, 2, 0);
const SPAN = 3 * 3_600_000; // three sandbox hours: 18 s of wall time at speed 600
const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'AUD', 'CAD', 'CHF', 'NZD'];
let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ clock: 'replay', speed: 600, start: START });
}, 60_000);
afterAll(async () => {
  await sb?.close();
});

/** Resolves once the sandbox's clock has passed `t` (the test waits on the sandbox clock, as the sandbox runs it). */
function sandboxReaches(t: number): Promise<void> {
  return new Promise((res) => {
    const check = (): void => {
      if (sb.time() >= t) res();
      else setTimeout(check, 50);
    };
    check();
  });
}

describe('labs on the server clock', () => {
  it('fxflow record against a sandbox at speed 600: every calendar release recorded once, known at its sandbox time (not the wall clock), none lost between polls; the recording replays in a backtest with every item', async () => {
    const catalog = mkdtempSync(join(tmpdir(), 'fxflow-labs-clock-'));
    const child = spawn(
      process.execPath,
      [
        'bin/fxflow.js',
        'record',
        '--env',
        'sandbox',
        '--url',
        sb.url,
        '--catalog',
        catalog,
        '--labs',
        'calendar',
        '--currencies',
        CURRENCIES.join(','),
        '--every-ms',
        '60000',
        '--requests-per-minute',
        '1200',
      ],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const from = sb.time();
    await sandboxReaches(from + SPAN + 10 * 60_000);
    child.kill('SIGTERM');
    expect(await exited, err).toBe(0);
    const stoppedAt = sb.time();
    // What the sandbox released over the span, asked of it directly at the end.
    const truth = (await (await fetch(`${sb.url}/labs/v1/calendar?period=86400`)).json()) as {
      timestamp: number;
      currency: string;
      title: string;
    }[];
    const released = truth.filter(
      (e) =>
        e.timestamp * 1000 > from && e.timestamp * 1000 <= from + SPAN && CURRENCIES.includes(e.currency),
    );
    expect(released.length).toBeGreaterThan(3);
    const items: CalendarItem[] = [];
    for await (const b of readLabsItems(catalog, 'calendar', { from: -Infinity, to: Infinity }))
      for (const i of b) items.push(i as CalendarItem);
    for (const e of released) {
      const got = items.filter(
        (i) =>
          i.entry.timestamp === e.timestamp && i.entry.currency === e.currency && i.entry.title === e.title,
      );
      expect(got, `${e.currency} ${e.title} at ${new Date(e.timestamp * 1000).toISOString()}`).toHaveLength(
        1,
      );
      // Known on the sandbox's clock: not before its release, not after the recorder stopped.
      expect(got[0]!.knownAt).toBeGreaterThanOrEqual(e.timestamp * 1000);
      expect(got[0]!.knownAt).toBeLessThanOrEqual(stoppedAt);
    }
    // The recording replays in a backtest over the span: every release reaches a strategy once, never before it was known.
    const heard: { key: string; now: number }[] = [];
    const watcher = defineStrategy({
      name: 'calendar-watcher',
      params: {},
      subscribe: () => ({ candles: ['EUR_USD:H1'], calendar: CURRENCIES }),
      init: () => ({}),
      onCalendar(ctx, st) {
        const c = ctx.calendar!;
        heard.push({ key: `${c.currency}|${c.releaseAt! / 1000}|${c.title}`, now: ctx.now });
        return { state: st };
      },
    });
    const HOUR = 3_600_000;
    const to = Math.ceil(stoppedAt / HOUR) * HOUR + HOUR;
    async function* candles(q: { from: number; to: number }): AsyncIterable<readonly Candle[]> {
      const out: Candle[] = [];
      for (let t = q.from; t < q.to; t += HOUR)
        out.push({
          kind: 'candle',
          instrument: 'EUR_USD',
          granularity: 'H1',
          time: t,
          at: t + HOUR,
          bo: 1.1,
          bh: 1.1005,
          bl: 1.0995,
          bc: 1.1,
          ao: 1.1002,
          ah: 1.1007,
          al: 1.0997,
          ac: 1.1002,
          volume: 10,
          complete: true,
        });
      yield out;
    }
    const config = loadConfig(undefined, {
      run: { from: new Date(START).toISOString(), to: new Date(to).toISOString() },
    } as never);
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    await runBacktest({
      loaded: { file: 'inline', name: 'calendar-watcher', strategy: watcher as never, params: {} },
      config,
      instruments: loadInstruments(),
      candles,
      available: () => true,
      log: silent,
      labs: catalogLabs(catalog),
    });
    for (const e of released) {
      const key = `${e.currency}|${e.timestamp}|${e.title}`;
      const h = heard.filter((x) => x.key === key);
      expect(h, key).toHaveLength(1);
      expect(h[0]!.now).toBeGreaterThanOrEqual(
        items.find((i) => `${i.entry.currency}|${i.entry.timestamp}|${i.entry.title}` === key)!.knownAt,
      );
    }
  }, 90_000);

  it('a sandbox serving a recording (--labs <catalog>) serves its spreads and COT reports as recorded, each once known, nothing generated between them', async () => {
    const gen = await startSandbox({ clock: 'manual', start: START, feed: false });
    const catalog = mkdtempSync(join(tmpdir(), 'fxflow-labs-served-'));
    try {
      const rec = spawn(
        process.execPath,
        [
          'bin/fxflow.js',
          'record',
          '--env',
          'sandbox',
          '--url',
          gen.url,
          '--catalog',
          catalog,
          '--labs',
          'spreads,cot',
          '--instruments',
          'EUR_USD',
          '--once',
        ],
        { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let err = '';
      rec.stderr.on('data', (d: Buffer) => (err += d.toString()));
      expect(await new Promise<number | null>((res) => rec.on('exit', res)), err).toBe(0);
    } finally {
      await gen.close();
    }
    const items: {
      kind: string;
      t?: number;
      avg?: number;
      min?: number;
      max?: number;
      report?: { date: number };
      knownAt: number;
    }[] = [];
    for (const kind of ['spreads', 'cot'] as const)
      for await (const b of readLabsItems(catalog, kind, { from: -Infinity, to: Infinity }))
        for (const i of b) items.push(i as never);
    const spreads = items.filter((i) => i.kind === 'spreads').sort((a, b) => a.t! - b.t!);
    const reports = items.filter((i) => i.kind === 'cot');
    expect(spreads.length).toBeGreaterThan(0);
    expect(reports.length).toBeGreaterThan(0);
    const known = Math.max(...items.map((i) => i.knownAt));
    const served = await startSandbox({ clock: 'manual', start: known - 60_000, feed: false, labs: catalog });
    try {
      // Before the recording knew them, nothing.
      expect(
        (
          (await (
            await fetch(`${served.url}/labs/v1/spreads?instrument=EUR_USD&period=31536000`)
          ).json()) as { avg: unknown[] }
        ).avg,
      ).toEqual([]);
      expect(
        await (await fetch(`${served.url}/labs/v1/commitments_of_traders?instrument=EUR_USD`)).json(),
      ).toEqual({});
      // A month later, asked for a year: exactly what was recorded (a generated history would fill the year).
      served.setTime(START + 30 * 86_400_000);
      const sp = (await (
        await fetch(`${served.url}/labs/v1/spreads?instrument=EUR_USD&period=31536000`)
      ).json()) as { avg: [number, number][]; min: [number, number][]; max: [number, number][] };
      expect(sp.avg).toEqual(spreads.map((i) => [i.t, i.avg]));
      expect(sp.min).toEqual(spreads.map((i) => [i.t, i.min]));
      expect(sp.max).toEqual(spreads.map((i) => [i.t, i.max]));
      const cot = (await (
        await fetch(`${served.url}/labs/v1/commitments_of_traders?instrument=EUR_USD`)
      ).json()) as Record<string, { date: number }[]>;
      expect(cot.EUR_USD).toEqual(reports.map((i) => i.report).sort((a, b) => a!.date - b!.date));
    } finally {
      await served.close();
    }
  }, 60_000);
});
