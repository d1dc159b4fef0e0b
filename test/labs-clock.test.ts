import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalendarItem } from '../src/adapters/catalog/labs-items.ts';
import { readLabsItems } from '../src/adapters/catalog/labs-store.ts';
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
  it('fxflow record against a sandbox at speed 600: every calendar release recorded once, known at its sandbox time (not the wall clock), none lost between polls', async () => {
    const catalog = mkdtempSync(join(tmpdir(), 'fxflow-labs-clock-'));
    const child = spawn(process.execPath, ['bin/fxflow.js', 'record', '--env', 'sandbox', '--url', sb.url, '--catalog', catalog, '--labs', 'calendar', '--currencies', CURRENCIES.join(','), '--every-ms', '60000', '--requests-per-minute', '1200'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const from = sb.time();
    await sandboxReaches(from + SPAN + 10 * 60_000);
    child.kill('SIGTERM');
    expect(await exited, err).toBe(0);
    const stoppedAt = sb.time();
    // What the sandbox released over the span, asked of it directly at the end.
    const truth = (await (await fetch(`${sb.url}/labs/v1/calendar?period=86400`)).json()) as { timestamp: number; currency: string; title: string }[];
    const released = truth.filter((e) => e.timestamp * 1000 > from && e.timestamp * 1000 <= from + SPAN && CURRENCIES.includes(e.currency));
    expect(released.length).toBeGreaterThan(3);
    const items: CalendarItem[] = [];
    for await (const b of readLabsItems(catalog, 'calendar', { from: -Infinity, to: Infinity })) for (const i of b) items.push(i as CalendarItem);
    for (const e of released) {
      const got = items.filter((i) => i.entry.timestamp === e.timestamp && i.entry.currency === e.currency && i.entry.title === e.title);
      expect(got, `${e.currency} ${e.title} at ${new Date(e.timestamp * 1000).toISOString()}`).toHaveLength(1);
      // Known on the sandbox's clock: not before its release, not after the recorder stopped.
      expect(got[0]!.knownAt).toBeGreaterThanOrEqual(e.timestamp * 1000);
      expect(got[0]!.knownAt).toBeLessThanOrEqual(stoppedAt);
    }
  }, 90_000);
});
