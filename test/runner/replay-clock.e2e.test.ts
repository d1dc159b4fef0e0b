// Issue 34 item 7: a replay that knows its clock. The time tolerance is wall time: a fill the runner
// received within it after its decision is on time however far the account's clock ran meanwhile (a
// sandbox at --speed 60 turns a 25 ms round trip into 1.5 s of market time). Real `fxflow run` and
// `fxflow replay` processes against a sandbox on its manual clock, which the test moves 1.5 s on
// while each order is on its way (the sandbox's latency fault holds the order until then).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Reconciliation } from '../../src/app/replay.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { pricePath, rig, startFxflowRun, until, type FxflowRun, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const STRATEGY = 'test/runner/replay-strategy.ts';
let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await r?.close();
  r = undefined;
});

function replay(
  folder: string,
  ...args: string[]
): { status: number | null; stdout: string; rec: Reconciliation } {
  const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-clock-out-')), 'rec');
  const p = spawnSync(process.execPath, ['bin/fxflow.js', 'replay', folder, '--out', out, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return {
    status: p.status,
    stdout: p.stdout,
    rec: JSON.parse(readFileSync(join(out, 'reconciliation.json'), 'utf8')) as Reconciliation,
  };
}

describe('fxflow replay: the time tolerance is wall time', () => {
  it("fills 1.5 s later on the account's clock but within ms of wall time replay with 0 differences; a tolerance below the wall delay names latency with both times", async () => {
    r = await rig({ heartbeatMs: 200, fill: { latency: 'fixed:1500' } });
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-clock-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(r.sandbox, STRATEGY, [
      '--journal',
      journal,
      '--out',
      out,
      '--log-file',
      join(journal, 'run.log'),
    ]);
    // Prices 3 s apart, each at a second that is 2 mod 3: the strategy orders on every one.
    const path = pricePath(10, Date.UTC(2024, 0, 2, 10, 0, 2)).map((p, i) => ({
      ...p,
      time: Date.UTC(2024, 0, 2, 10, 0, 2) + i * 3000,
    }));
    let orders = r.sandbox.stats().requests;
    let fills = 0;
    for (const p of path) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      orders++;
      await until(() => r!.sandbox.stats().requests >= orders, `order ${orders} at the sandbox`);
      // The account's clock runs on 1.5 s while the order is on its way; the price stays.
      r.sandbox.setTime(p.time + 1500);
      fills++;
      await until(
        () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === fills,
        `fill ${fills}`,
      );
    }
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    run = undefined;

    const clean = replay(out);
    console.log(`[replay clock] ${clean.stdout.trim()}`);
    expect(clean.status).toBe(0);
    expect(clean.rec.decisions).toMatchObject({ live: 10, replay: 10, differ: 0 });
    expect(clean.rec.fills.compared).toBe(10);
    expect(clean.rec.fills.differ).toBe(0);
    expect(clean.rec.differences).toBe(0);

    // A tolerance of 0 ms of wall time: every fill is late (1500 ms of market time, a few ms of wall time), named with both.
    const strict = replay(out, '--time-tolerance', '0');
    expect(strict.rec.fills.differ).toBe(10);
    expect(strict.rec.fills.byCause).toEqual({ latency: 10 });
    for (const d of strict.rec.fills.diffs) {
      expect(d.timeDiffMs).toBe(1500);
      expect(d.explanation, d.explanation).toMatch(
        /latency 0\.0 pips \(the market moved from \S+ at the decision to \S+, .*, answered \d+ ms after the decision on the runner's clock, 1500 ms later\); the order path: answered \d+ ms after the send$/,
      );
    }
  }, 120_000);
});
