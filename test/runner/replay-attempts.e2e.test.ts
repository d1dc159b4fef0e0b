// Issue 34 item 7: a fill delayed by the order path is named. Real `fxflow run` and `fxflow replay`
// processes against a real sandbox over HTTP, through the fault proxy: the first order request is
// answered 503 (never forwarded), the runner looks it up (not found) and resends it; the resend is
// held at the proxy while the market moves on one price, then let through. The run folder records
// each send, its outcome and the look-up; the reconciliation names them for that fill.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Reconciliation } from '../../src/app/replay.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { type FaultProxy, startFaultProxy, v20 } from '../fault-proxy.ts';
import { endTest, pricePath, rig, startFxflowRun, until, type FxflowRun, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const STRATEGY = 'test/runner/replay-strategy.ts';
let r: Rig | undefined;
let run: FxflowRun | undefined;
let proxy: FaultProxy | undefined;
afterEach(async () => {
  await endTest(run, proxy, r);
  [r, run, proxy] = [undefined, undefined, undefined];
});

const decides = (t: number): boolean => Math.floor(t / 1000) % 3 === 2;

describe('fxflow replay names the order path behind a late fill', () => {
  it('a 503 on the first send, a look-up (not found) and a resend held while the market moved: the fill that differs says so', async () => {
    r = await rig({ heartbeatMs: 200 });
    proxy = await startFaultProxy(r.sandbox.url);
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-attempts-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(
      r.sandbox,
      STRATEGY,
      ['--journal', journal, '--out', out, '--log-file', join(journal, 'run.log')],
      2,
      { url: proxy.url },
    );
    // The first order request: 503 from "v20"; the second (the resend): held until released.
    proxy.rule(
      v20.orderPost,
      {
        kind: 'answer',
        status: 503,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ errorMessage: 'Service unavailable (test)' }),
      },
      1,
    );
    proxy.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
    const path = pricePath(12);
    let fills = 0;
    let faulted = false;
    for (let i = 0; i < path.length; i++) {
      const p = path[i]!;
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      if (!decides(p.time)) continue;
      fills++;
      if (!faulted) {
        faulted = true;
        await proxy.reached('answered', v20.orderPost, 30_000);
        await proxy.reached('held', v20.orderPost, 30_000);
        // The market moves on while the resend is held: the fill comes at the next price, 1 s later.
        const next = path[++i]!;
        r.sandbox.setTime(next.time);
        r.sandbox.pushPrice(next);
        proxy.release();
      }
      await until(
        () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === fills,
        `fill ${fills}`,
        30_000,
      );
    }
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    run = undefined;
    const a = spawnSync(process.execPath, ['bin/fxflow.js', 'replay', out], { cwd: ROOT, encoding: 'utf8' });
    const rec = JSON.parse(readFileSync(join(out, 'reconciliation.json'), 'utf8')) as Reconciliation;
    console.log(
      `[replay attempts] ${a.stdout.trim()}\n${rec.fills.diffs.map((d) => d.explanation).join('\n')}`,
    );
    expect(a.status).toBe(0);
    expect(rec.decisions.differ).toBe(0);
    expect(rec.fills.differ).toBe(1);
    const d = rec.fills.diffs[0]!;
    // The fill came at the price pushed while the resend was held, 1 s after the decision.
    expect(d.live.time).toBe(new Date(path[3]!.time).toISOString().replace('Z', '000000Z'));
    expect(d.explanation).toMatch(
      /; the order path: 503 on the first send, looked up \(not found\), resent after \d+\.\d s, answered on the second send$/,
    );
  }, 120_000);
});
