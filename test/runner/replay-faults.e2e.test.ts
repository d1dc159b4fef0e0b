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
import { Journal } from '../../src/runner/order-path/journal.ts';
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

const withFill = (fill: { slippage?: string; latency?: string }): SandboxOptions => ({
  heartbeatMs: 200,
  fill,
});

const decides = (t: number): boolean => Math.floor(t / 1000) % 3 === 2;

function replay(folder: string): { status: number | null; stdout: string; rec: Reconciliation } {
  const out = spawnSync(process.execPath, ['bin/fxflow.js', 'replay', folder], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return {
    status: out.status,
    stdout: out.stdout,
    rec: JSON.parse(readFileSync(join(folder, 'reconciliation.json'), 'utf8')) as Reconciliation,
  };
}

describe('fxflow replay against a sandbox with fill faults', () => {
  it('slippage (fill.slippage fixed:1): every fill 1 pip worse than the quote, each attributed to slippage', async () => {
    r = await rig(withFill({ slippage: 'fixed:1' }));
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-slip-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(r.sandbox, STRATEGY, [
      '--journal',
      journal,
      '--out',
      out,
      '--log-file',
      join(journal, 'run.log'),
    ]);
    let fills = 0;
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      if (!decides(p.time)) continue;
      fills++;
      await until(
        () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === fills,
        `fill ${fills}`,
      );
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
      expect(d.causes).toEqual(['slippage']);
      expect(d.parts).toEqual({ latency: 0, spread: 0, slippage: 0.0001, nextPrice: 0 });
      expect(d.explanation).toMatch(
        /: slippage \+1\.0 pips \(filled at \d\.\d+ against the (ask|bid) \d\.\d+, /,
      );
    }
    // 10 fills each 1 pip (0.10 USD on 1000 units) worse: the realized P/L of the 5 round trips differs by 1.00.
    expect(Number(a.rec.money.realizedPLDiff)).toBeCloseTo(-1, 4);
  }, 120_000);

  it('latency (fill.latency fixed:2000): every fill 2 s after its decision, at a later price, attributed to latency', async () => {
    r = await rig(withFill({ latency: 'fixed:2000' }));
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-late-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(r.sandbox, STRATEGY, [
      '--journal',
      journal,
      '--out',
      out,
      '--log-file',
      join(journal, 'run.log'),
    ]);
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
        await until(
          () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === fills,
          `late fill ${fills}`,
        );
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
      expect(d.causes).toEqual(['latency']);
      expect(d.parts!.slippage).toBe(0);
      expect(d.explanation).toMatch(
        /: latency [+-]\d+\.\d pips \(the market moved from \S+ at the decision to \S+, .*, \d+ ms later\); the order path: answered \d+ ms after the send$/,
      );
    }
    // The first decision is on the 3rd price (10:00:02, a buy): it arrives at 10:00:04 and fills at
    // the quote in force then, the 4th price's ask (the test moves the sandbox's clock to 10:00:04
    // before that second's price: docs/sandbox.md, "The clock and the answer"); the replay at the 3rd's.
    expect(a.rec.fills.diffs[0]!.live.time).toBe('2024-01-02T10:00:04.000000000Z');
    expect(a.rec.fills.diffs[0]!.live.price).toBe(path[3]!.ask.toFixed(5));
    expect(a.rec.fills.diffs[0]!.replay.price).toBe(path[2]!.ask.toFixed(5));
  }, 120_000);

  it('slippage and latency together (fixed:1, fixed:2000): each fill paired with its own decision, its difference taken apart into latency and slippage with their amounts', async () => {
    r = await rig(withFill({ slippage: 'fixed:1', latency: 'fixed:2000' }));
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-both-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(r.sandbox, STRATEGY, [
      '--journal',
      journal,
      '--out',
      out,
      '--log-file',
      join(journal, 'run.log'),
    ]);
    // As the latency test: each order reaches the sandbox before the next price, each late fill reaches the runner before the next.
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
        await until(
          () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === fills,
          `late fill ${fills}`,
        );
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
    console.log(`[replay slippage+latency] ${a.stdout.trim()}\n${a.rec.fills.diffs[0]?.explanation}`);
    expect(a.status).toBe(0);
    expect(a.rec.decisions.differ).toBe(0);
    expect(a.rec.fills.differ).toBe(10);
    expect(a.rec.fills.byCause).toEqual({ latency: 10, slippage: 10 });
    for (const d of a.rec.fills.diffs) {
      // Its own decision's fills, never another's.
      expect(d.replayID).toBe(d.liveID);
      expect([...d.causes].sort()).toEqual(['latency', 'slippage']);
      expect(d.parts!.slippage).toBeCloseTo(0.0001, 9);
      expect(d.parts!.nextPrice).toBe(0);
      // The parts add up to the whole difference (signed: worse for the account is positive).
      expect(Math.abs(Number(d.live.price) - Number(d.replay.price))).toBeCloseTo(
        Math.abs(d.parts!.latency + d.parts!.spread + d.parts!.slippage - d.parts!.nextPrice),
        9,
      );
      expect(d.explanation).toMatch(
        /latency [+-]\d+\.\d pips \(the market moved from .* at the decision to .*, \d+ ms later\); slippage \+1\.0 pips/,
      );
    }
    // The first decision (10:00:02, a buy) arrives at 10:00:04: the market then is the 4th price, 1 pip added.
    const first = a.rec.fills.diffs[0]!;
    expect(first.live.price).toBe((path[3]!.ask + 0.0001).toFixed(5));
    expect(first.replay.price).toBe(path[2]!.ask.toFixed(5));
    expect(first.parts!.latency).toBeCloseTo(
      (path[3]!.ask + path[3]!.bid - path[2]!.ask - path[2]!.bid) / 2,
      9,
    );
  }, 120_000);
});
