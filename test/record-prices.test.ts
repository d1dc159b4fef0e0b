import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readFinancing } from '../src/adapters/catalog/financing-store.ts';
import { openTicks } from '../src/adapters/catalog/formats.ts';
import { tickDayFiles } from '../src/adapters/catalog/tick-store.ts';
import { formatTime } from '../src/domain/time.ts';
import { startSandbox, type Sandbox } from '../src/sandbox/server.ts';

/**
 * `fxflow record --prices --financing` as real processes against the sandbox, whose clock the
 * test steps (no wall-clock waits: every wait is for a line the recorder prints): ticks and daily
 * financing rates recorded, a kill -9 and a block and a line cut short, a resume that loses and
 * duplicates nothing, `fxflow data list`, a manifest that refuses another instrument set or
 * account, and a tick backtest on the recording whose financing follows the recorded rates.
 */

const ROOT = resolve(import.meta.dirname, '..');
const START = Date.UTC(2024, 0, 2, 12); // Tuesday 2024-01-02 12:00 UTC
let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ clock: 'manual', start: START, feed: false, heartbeatMs: 20 });
});
afterAll(async () => {
  await sb.close();
});

const exited = (c: ChildProcess): Promise<number | null> =>
  new Promise((ok) =>
    c.exitCode !== null || c.signalCode !== null ? ok(c.exitCode) : c.once('exit', (code) => ok(code)),
  );

interface Recorder {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves with the first stdout line (seen or to come) that matches. */
  line(re: RegExp): Promise<string>;
}

function fxflow(args: string[]): Recorder {
  const child = spawn(process.execPath, ['bin/fxflow.js', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const seen: string[] = [];
  const waiting: { re: RegExp; ok: (l: string) => void; fail: (e: Error) => void }[] = [];
  const rl = createInterface({ input: child.stdout! });
  rl.on('line', (l) => {
    seen.push(l);
    for (const w of [...waiting])
      if (w.re.test(l)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.ok(l);
      }
  });
  rl.on('close', () => {
    for (const w of waiting.splice(0))
      w.fail(
        new Error(
          `the process ended before a line matching ${w.re}; stdout: ${seen.join(' | ')}; stderr: ${err}`,
        ),
      );
  });
  return {
    child,
    stderr: () => err,
    line: (re) => {
      const got = seen.find((l) => re.test(l));
      if (got !== undefined) return Promise.resolve(got);
      return new Promise((ok, fail) => waiting.push({ re, ok, fail }));
    },
  };
}

const recordArgs = (catalog: string, extra: string[] = []): string[] => [
  'record',
  '--env',
  'sandbox',
  '--url',
  sb.url,
  '--catalog',
  catalog,
  '--instruments',
  'EUR_USD',
  '--prices',
  '--financing',
  '--every-ms',
  '20',
  '--flush-ms',
  '20',
  ...extra,
];

/** Every tick the test pushes: bid 1.10000, ask 1.10020 (mid 1.10010), at these times. */
const pushed: number[] = [];
function push(iso: string): void {
  const at = Date.parse(iso);
  sb.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020', time: at });
  pushed.push(at);
}
const allTicks = (n: number): RegExp => new RegExp(`flushed \\d+ ticks? \\(${n} in all\\)`);

describe('fxflow record --prices --financing', () => {
  it(
    'records ticks and daily rates; after kill -9 and a cut block and line, a resume loses nothing and duplicates nothing; a backtest charges the recorded rates',
    { timeout: 180_000 },
    async () => {
      const catalog = mkdtempSync(join(tmpdir(), 'fxflow-record-prices-'));
      sb.setFinancing('EUR_USD', { longRate: '-0.0500', shortRate: '0.0100' });
      push('2024-01-02T12:00:00Z'); // the stream's snapshot when the recorder connects
      const r1 = fxflow(recordArgs(catalog));
      await r1.line(/financing 2024-01-02: recorded 1 instrument \(EUR_USD long -0\.0500 short 0\.0100\)/);
      await r1.line(allTicks(1));
      for (const s of ['01', '02', '03', '04']) push(`2024-01-02T12:00:${s}Z`);
      await r1.line(allTicks(5));
      // The next trading day, at new rates.
      sb.setFinancing('EUR_USD', { longRate: '-0.0300', shortRate: '0.0100' });
      sb.setTime('2024-01-03T12:00:00Z');
      push('2024-01-03T12:00:01Z');
      await r1.line(/financing 2024-01-03: recorded 1 instrument \(EUR_USD long -0\.0300/);
      await r1.line(allTicks(6));
      push('2024-01-03T12:00:02Z');
      push('2024-01-03T12:00:03Z');
      await r1.line(allTicks(8));
      r1.child.kill('SIGKILL');
      await exited(r1.child);

      // The kill cut a block and a line short.
      const day3 = tickDayFiles(catalog, 'EUR_USD').find((f) => f.day === '2024-01-03')!.file;
      const torn = gzipSync(`${formatTime(Date.parse('2024-01-03T12:00:04Z'))},1.10000,1.10020,1\n`).subarray(
        0,
        21,
      );
      appendFileSync(day3, torn);
      const cutLine = '{"day":"2024-01-04","instrument":"EUR';
      appendFileSync(join(catalog, 'financing', '2024.jsonl'), cutLine);

      const streams = sb.stats().streamConnections;
      const r2 = fxflow(recordArgs(catalog));
      // Once its stream is open, the snapshot repeats the last tick recorded (12:00:03): not recorded again.
      await vi.waitFor(() => expect(sb.stats().streamConnections).toBeGreaterThan(streams), {
        timeout: 60_000,
        interval: 10,
      });
      push('2024-01-03T12:00:05Z');
      await r2.line(allTicks(1));
      expect(r2.stderr()).toMatch(
        new RegExp(`repaired .*2024-01-03\\.csv\\.gz: cut ${torn.length} bytes of a block cut short`),
      );
      expect(r2.stderr()).toMatch(
        new RegExp(`repaired .*2024\\.jsonl: dropped ${cutLine.length} bytes of a line cut short`),
      );
      sb.setFinancing('EUR_USD', { longRate: '-0.0200', shortRate: '0.0100' });
      sb.setTime('2024-01-04T12:00:00Z');
      push('2024-01-04T12:00:01Z');
      await r2.line(/financing 2024-01-04: recorded 1 instrument \(EUR_USD long -0\.0200/);
      await r2.line(allTicks(2));
      sb.setTime('2024-01-05T12:00:00Z');
      push('2024-01-05T12:00:01Z');
      await r2.line(/financing 2024-01-05: recorded 1 instrument/);
      await r2.line(allTicks(3));
      r2.child.kill('SIGTERM');
      expect(await exited(r2.child), r2.stderr()).toBe(0);
      // Heartbeats (every 20 ms) came and none was taken for a tick.
      expect(r2.stderr()).toMatch(
        /record: 3 ticks written in \d+ flushes, 1 repeated or older ticks not recorded, [1-9]\d* heartbeats/,
      );
      expect(r2.stderr()).toMatch(/record: financing 2 days recorded \(2 records\)/);

      // Every tick pushed while a recorder ran, once, in order, with its prices.
      const got: { at: number; bid: number; ask: number }[] = [];
      for await (const b of openTicks(catalog, { instrument: 'EUR_USD' }))
        for (const t of b) got.push({ at: t.at, bid: t.bid, ask: t.ask });
      expect(got.map((t) => t.at)).toEqual(pushed);
      expect(new Set(got.map((t) => `${t.bid}/${t.ask}`))).toEqual(new Set(['1.1/1.1002']));
      // Every trading day once, with the rates of that day.
      expect(
        readFinancing(catalog).map((r) => [r.day, r.instrument, r.longRate, r.shortRate, r.marginRate]),
      ).toEqual([
        ['2024-01-02', 'EUR_USD', '-0.0500', '0.0100', '0.05'],
        ['2024-01-03', 'EUR_USD', '-0.0300', '0.0100', '0.05'],
        ['2024-01-04', 'EUR_USD', '-0.0200', '0.0100', '0.05'],
        ['2024-01-05', 'EUR_USD', '-0.0200', '0.0100', '0.05'],
      ]);
      expect(readFinancing(catalog)[0]!.financingDaysOfWeek).toContainEqual({
        dayOfWeek: 'WEDNESDAY',
        daysCharged: 3,
      });

      // fxflow data list shows what the recording holds.
      const ls = fxflow(['data', 'list', '--catalog', catalog]);
      const listing: string[] = [];
      ls.child.stdout!.on('data', (d: Buffer) => listing.push(d.toString()));
      expect(await exited(ls.child)).toBe(0);
      const out = listing.join('');
      expect(out).toMatch(
        /ticks EUR_USD\s+2024-01-02T12:00:00\.000000000Z → 2024-01-05T12:00:01\.000000000Z  11 ticks in 4 days\n/,
      );
      expect(out).toMatch(/financing 2024-01-02 → 2024-01-05  4 trading days, 4 records  EUR_USD\n/);
      expect(out).toMatch(/recorded from account 101-001-0000001-001 \(sandbox\): financing, prices\n/);

      // A recording belongs to one account and instrument set.
      const other = fxflow([
        'record',
        '--env',
        'sandbox',
        '--url',
        sb.url,
        '--catalog',
        catalog,
        '--instruments',
        'GBP_USD',
        '--prices',
      ]);
      expect(await exited(other.child)).toBe(1);
      expect(other.stderr()).toMatch(
        /recording\.json \(instruments\): this catalog holds a recording of account 101-001-0000001-001 \(sandbox\), instruments EUR_USD, currencies \(none\); this recorder is for account 101-001-0000001-001 \(sandbox\), instruments GBP_USD, currencies \(none\)\. A recording belongs to one account and instrument set: record into another --catalog, or pass --allow-mismatch/,
      );
      const account = fxflow([...recordArgs(catalog), '--account', '101-001-0000001-002']);
      expect(await exited(account.child)).toBe(1);
      expect(account.stderr()).toMatch(
        /recording\.json \(account\): this catalog holds a recording of account 101-001-0000001-001 .*this recorder is for account 101-001-0000001-002/,
      );
      expect(account.stderr()).not.toMatch(/\n\s+at /); // one message, no stack

      // A tick backtest on the recording, financing from the recorded rates. Bought 10,000 at the
      // second tick and held; every tick has mid 1.10010; the rollovers after Tuesday's, Wednesday's
      // (three days) and Thursday's trading days are charged (the last tick is before Friday's):
      //   Tue: 10,000 × 1.1001 × -0.05 × 1 / 365 = -1.50699 → -1.5070
      //   Wed: 10,000 × 1.1001 × -0.03 × 3 / 365 = -2.71257 → -2.7126
      //   Thu: 10,000 × 1.1001 × -0.02 × 1 / 365 = -0.60279 → -0.6028      total -4.8224
      // With today's rates (data/instruments.json, -0.0412): -1.2418, -3.7253, -1.2418 = -6.2089.
      const config = join(catalog, 'backtest.json');
      writeFileSync(
        config,
        JSON.stringify({ data: { catalog }, run: { from: '2024-01-02', to: '2024-01-06' } }),
      );
      const backtest = async (
        extra: string[],
      ): Promise<{
        code: number | null;
        json:
          | {
              summary: { financing: number; data: { financing: { source: string; text: string } } };
              config: { costs: Record<string, unknown> };
            }
          | undefined;
        stderr: string;
      }> => {
        const b = fxflow([
          'backtest',
          'test/record-hold-strategy.ts',
          '--config',
          config,
          '--ticks',
          catalog,
          '--no-save',
          '--json',
          '--no-typecheck',
          ...extra,
        ]);
        const chunks: string[] = [];
        b.child.stdout!.on('data', (d: Buffer) => chunks.push(d.toString()));
        const code = await exited(b.child);
        const text = chunks.join('');
        return {
          code,
          json: code === 0 ? JSON.parse(text.slice(text.indexOf('{'))) : undefined,
          stderr: b.stderr(),
        };
      };
      const recorded = await backtest(['--financing-history']);
      expect(recorded.code, recorded.stderr).toBe(0);
      expect(recorded.json!.summary.financing).toBe(-4.8224);
      expect(recorded.json!.summary.data.financing).toMatchObject({
        source: 'recorded',
        text: expect.stringMatching(/^recorded \(.*financing: EUR_USD from 2024-01-02\)$/),
      });
      expect(recorded.json!.config.costs.financingHistory).toBe(catalog);
      const today = await backtest([]);
      expect(today.json!.summary.financing).toBe(-6.2089);
      expect(today.json!.summary.data.financing).toEqual({
        source: 'static',
        text: "today's rates (data/instruments.json)",
      });
      // Before the first recorded day: refused, naming it, unless today's rates are allowed there.
      const early = await backtest(['--financing-history', catalog, '--from', '2024-01-01']);
      expect(early.code).toBe(1);
      expect(early.stderr).toMatch(
        /the first recorded financing of EUR_USD is for trading day 2024-01-02, after the run's first trading day 2024-01-01: start the run on or after 2024-01-02 \(--from\), or pass --financing-before-history static/,
      );
      const allowed = await backtest([
        '--financing-history',
        catalog,
        '--from',
        '2024-01-01',
        '--financing-before-history',
        'static',
      ]);
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(allowed.json!.summary.financing).toBe(-4.8224);
    },
  );
});
