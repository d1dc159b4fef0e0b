import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABS_KINDS } from '../src/adapters/catalog/labs-items.ts';
import { labsFiles, readLabsItems } from '../src/adapters/catalog/labs-store.ts';
import { V20Http } from '../src/adapters/v20/http.ts';
import { V20Labs } from '../src/adapters/v20/labs.ts';
import { LabsPoller } from '../src/runner/session/labs-poller.ts';
import { startSandbox, type Sandbox } from '../src/sandbox/server.ts';

/**
 * `fxflow record` as a real process against the sandbox: it records labs items, survives a
 * kill -9 and a line cut short, and a restart records nothing twice and loses nothing.
 */

const ROOT = resolve(import.meta.dirname, '..');
const START = Date.UTC(2024, 0, 2, 12);
let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ clock: 'manual', start: START, feed: false });
});
afterAll(async () => {
  await sb.close();
});

const ARGS = [
  '--currencies',
  'USD,EUR',
  '--instruments',
  'EUR_USD,GBP_USD',
  '--labs',
  'calendar,signals,spreads,cot',
];

function record(
  catalog: string,
  extra: string[],
): { child: ChildProcess; lines: AsyncIterator<string>; stderr: () => string } {
  const child = spawn(
    process.execPath,
    ['bin/fxflow.js', 'record', '--env', 'sandbox', '--url', sb.url, '--catalog', catalog, ...ARGS, ...extra],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return {
    child,
    lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator](),
    stderr: () => err,
  };
}

const exited = (c: ChildProcess): Promise<number | null> =>
  new Promise((ok) =>
    c.exitCode !== null || c.signalCode !== null ? ok(c.exitCode) : c.once('exit', (code) => ok(code)),
  );

async function recorded(catalog: string): Promise<string[]> {
  const out: string[] = [];
  for (const kind of LABS_KINDS)
    for await (const b of readLabsItems(catalog, kind, { from: -Infinity, to: Infinity }))
      for (const i of b) out.push(`${i.kind}|${i.key}|${i.kind === 'calendar' ? i.version : 1}`);
  return out;
}

describe('fxflow record', () => {
  it(
    'records unattended; after kill -9 and a cut line, a restart loses nothing and duplicates nothing',
    { timeout: 120_000 },
    async () => {
      const catalog = mkdtempSync(join(tmpdir(), 'fxflow-record-'));
      const r = record(catalog, ['--every-ms', '20']);
      // Wait for a first recorded round, move the sandbox a day on, wait for the next, then kill -9.
      for (;;) {
        const l = await r.lines.next();
        expect(l.done, r.stderr()).toBeFalsy();
        if (/recorded \d+ items?/.test(l.value as string)) break;
      }
      sb.advance(86_400_000);
      for (;;) {
        const l = await r.lines.next();
        expect(l.done, r.stderr()).toBeFalsy();
        if (/recorded \d+ items?/.test(l.value as string)) break;
      }
      r.child.kill('SIGKILL');
      await exited(r.child);
      const before = await recorded(catalog);
      expect(before.length).toBeGreaterThan(0);
      // A write cut short by the kill.
      const [f] = labsFiles(catalog, 'signals');
      appendFileSync(f!.file, '{"kind":"signals","knownAt":');
      sb.advance(86_400_000);
      const again = record(catalog, ['--once']);
      expect(await exited(again.child), again.stderr()).toBe(0);
      expect(again.stderr()).toMatch(/repaired .*signals.*dropped 28 bytes/);
      expect(again.stderr()).toMatch(/record: \d+ polls, \d+ items, 0 failures/);
      const after = await recorded(catalog);
      // Nothing duplicated, nothing lost.
      expect(after.filter((k, i) => after.indexOf(k) !== i)).toEqual([]);
      for (const k of before) expect(after).toContain(k);
      // Everything the labs serve now is recorded: a fresh poller finds nothing the catalog lacks.
      const http = new V20Http({ baseUrl: sb.url, retries: 0 });
      try {
        const fresh = new LabsPoller({
          labs: new V20Labs(http),
          calendar: ['USD', 'EUR'],
          signals: ['EUR_USD', 'GBP_USD'],
          spreads: ['EUR_USD', 'GBP_USD'],
          cot: ['EUR_USD', 'GBP_USD'],
        });
        const now = await fresh.poll();
        const keys = new Set(after.map((k) => k.split('|').slice(0, -1).join('|')));
        for (const i of now) expect(keys.has(`${i.kind}|${i.key}`)).toBe(true);
      } finally {
        await http.close();
      }
      // And a second --once records nothing.
      const third = record(catalog, ['--once']);
      expect(await exited(third.child)).toBe(0);
      expect(third.stderr()).toMatch(/record: \d+ polls, 0 items, 0 failures/);
      expect((await recorded(catalog)).length).toBe(after.length);
      expect(readFileSync(f!.file, 'utf8').endsWith('\n')).toBe(true);
      // fxflow data list shows what the catalog holds of each kind.
      const ls = spawn(process.execPath, ['bin/fxflow.js', 'data', 'list', '--catalog', catalog], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      ls.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      expect(await exited(ls)).toBe(0);
      const count = (kind: string): number => after.filter((k) => k.startsWith(`${kind}|`)).length;
      expect(out).toMatch(
        new RegExp(`labs calendar .* ${count('calendar')} items in \\d+ month files?  EUR USD`),
      );
      expect(out).toMatch(
        new RegExp(`labs signals .* ${count('signals')} items in \\d+ month files?  EUR_USD GBP_USD`),
      );
      expect(out).toMatch(/labs spreads /);
      expect(out).toMatch(/labs cot /);
    },
  );

  it(
    'data list and data check read labs files as they read ticks: a torn tail named with its repair, a damaged line with its file and line',
    { timeout: 60_000 },
    async () => {
      const catalog = mkdtempSync(join(tmpdir(), 'fxflow-record-check-'));
      const r = record(catalog, ['--once']);
      expect(await exited(r.child), r.stderr()).toBe(0);
      const files = {
        signals: labsFiles(catalog, 'signals')[0]!.file,
        calendar: labsFiles(catalog, 'calendar')[0]!.file,
      };
      const signalLines = readFileSync(files.signals, 'utf8').split('\n').length - 1;
      appendFileSync(files.signals, '{"kind":"signals","knownAt":');
      const calendarLines = readFileSync(files.calendar, 'utf8').split('\n').length - 1;
      appendFileSync(files.calendar, 'not a labs item\n');
      const run = async (cmd: string): Promise<{ code: number | null; out: string }> => {
        const c = spawn(process.execPath, ['bin/fxflow.js', 'data', cmd, '--catalog', catalog], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
        return { code: await exited(c), out };
      };
      const ls = await run('list');
      expect(ls.code).toBe(0);
      expect(ls.out).toMatch(
        new RegExp(
          `labs signals .* ${signalLines} items in 1 month file .*\\(torn tail in ${files.signals.replace(/[.]/g, '\\.')}: fxflow record cuts it on resume\\)`,
        ),
      );
      const check = await run('check');
      expect(check.code).toBe(1);
      expect(check.out).toContain(
        `${files.signals}:${signalLines + 1}: torn last line (28 bytes without a newline, a write cut short): fxflow record cuts it when it starts again (or truncate -s `,
      );
      expect(check.out).toContain(`${files.calendar}:${calendarLines + 1}`);
      expect(check.out).toMatch(
        /labs spreads: \d+ items in 1 month file, known .*\n  every line an item, in knownAt order, in its month's file/,
      );
    },
  );

  it('bad arguments are one clear message', async () => {
    const r = spawn(
      process.execPath,
      ['bin/fxflow.js', 'record', '--labs', 'calendar,orderbook', '--currencies', 'USD'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    r.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    expect(await exited(r)).not.toBe(0);
    expect(err).toMatch(/--labs 'orderbook' is not a labs kind/);
  });
});
