// Issue 18 item 4: a run against a sandbox whose fills slip, or arrive late, replayed: the
// differences are found and attributed (slippage; latency, a late fill). Real `fxflow run` and
// `fxflow replay` processes against a real sandbox over HTTP on its manual clock.
// The sandbox's fill faults: `startSandbox({ fill: { slippage, latency } })` (docs/sandbox.md).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Reconciliation } from '../../src/app/replay.ts';
import { Journal } from '../../src/runner/journal.ts';
import type { SandboxOptions } from '../../src/sandbox/server.ts';
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

const withFill = (fill: { slippage?: string; latency?: string }): SandboxOptions => ({ heartbeatMs: 200, fill });

const decides = (t: number): boolean => Math.floor(t / 1000) % 3 === 2;

function replay(folder: string): { status: number | null; stdout: string; rec: Reconciliation } {
  const out = spawnSync(process.execPath, ['bin/fxflow.js', 'replay', folder], { cwd: ROOT, encoding: 'utf8' });
  return { status: out.status, stdout: out.stdout, rec: JSON.parse(readFileSync(join(folder, 'reconciliation.json'), 'utf8')) as Reconciliation };
}

describe('fxflow replay against a sandbox with fill faults', () => {
  it('slippage (fill.slippage fixed:1): every fill 1 pip worse than the quote, each attributed to slippage', async () => {
    r = await rig(withFill({ slippage: 'fixed:1' }));
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-slip-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(r.sandbox, STRATEGY, ['--journal', journal, '--out', out, '--log-file', join(journal, 'run.log')]);
    let fills = 0;
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      if (!decides(p.time)) continue;
      fills++;
      await until(() => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === fills, `fill ${fills}`);
    }
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    run = undefined;
    const a = replay(out);
    console.log(`[replay slippage] ${a.stdout.trim()}\n${a.rec.fills.diffs[0]?.explanation}`);
    expect(a.status).toBe(0);
    expect(a.rec.decisions.differ).toBe(0);
    expect(a.rec.fills.differ).toBe(10);
    expect(a.rec.fills.byCause).toEqual({ slippage: 10 });
    for (const d of a.rec.fills.diffs) {
      expect(Math.abs(d.priceDiff!)).toBeCloseTo(0.0001, 9);
      expect(d.explanation).toMatch(/filled it 1\.0 pips worse than the quote when it arrived/);
    }
    // 10 fills each 1 pip (0.10 USD on 1000 units) worse: the realized P/L of the 5 round trips differs by 1.00.
    expect(Number(a.rec.money.realizedPLDiff)).toBeCloseTo(-1, 4);
  }, 120_000);

  it('latency (fill.latency fixed:2000): every fill 2 s after its decision, at a later price, attributed to latency', async () => {
    r = await rig(withFill({ latency: 'fixed:2000' }));
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-late-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(r.sandbox, STRATEGY, ['--journal', journal, '--out', out, '--log-file', join(journal, 'run.log')]);
    // The test makes no REST request of its own while the run trades: every request the sandbox
    // counts is the runner's order. After a price the strategy decides on, the next price waits
    // until that order has reached the sandbox (it then waits there for the clock to pass +2 s);
    // after the price that fills it, the next waits until the runner has the fill (so the strategy
    // knows its position at its next decision, 1 s later). 32 prices: the last decision, on the
    // 30th, fills on the 32nd.
    let orders = r.sandbox.stats().requests;
    let fills = 0;
    const due: number[] = [];
    const path = pricePath(32);
    for (const p of path) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      if (due.length > 0 && p.time >= due[0]!) {
        due.shift();
        fills++;
        await until(() => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === fills, `late fill ${fills}`);
      }
      if (!decides(p.time)) continue;
      orders++;
      due.push(p.time + 2000);
      await until(() => r!.sandbox.stats().requests >= orders, `order ${orders} at the sandbox`);
    }
    expect(fills).toBe(10);
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    run = undefined;
    const a = replay(out);
    console.log(`[replay latency] ${a.stdout.trim()}\n${a.rec.fills.diffs[0]?.explanation}`);
    expect(a.status).toBe(0);
    expect(a.rec.decisions.differ).toBe(0);
    expect(a.rec.fills.differ).toBe(10);
    expect(a.rec.fills.byCause).toEqual({ latency: 10 });
    for (const d of a.rec.fills.diffs) {
      expect(d.timeDiffMs).toBeGreaterThanOrEqual(2000);
      expect(d.explanation).toMatch(/the account filled it \d+ ms after the decision \(a late fill\)/);
    }
    // The first decision is on the 3rd price (10:00:02, a buy): it arrives at 10:00:04 and fills at
    // the quote in force then, the 4th price's ask (the test moves the sandbox's clock to 10:00:04
    // before that second's price: docs/sandbox.md, "The clock and the answer"); the replay at the 3rd's.
    expect(a.rec.fills.diffs[0]!.live.time).toBe('2024-01-02T10:00:04.000000000Z');
    expect(a.rec.fills.diffs[0]!.live.price).toBe(path[3]!.ask.toFixed(5));
    expect(a.rec.fills.diffs[0]!.replay.price).toBe(path[2]!.ask.toFixed(5));
  }, 120_000);
});
