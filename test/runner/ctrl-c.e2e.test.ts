// Issue 24, item 4: Ctrl-C as operators expect. A real `fxflow run --flatten-on-exit` process gets
// real SIGINTs while its close is held by the fault proxy (the stop cannot finish): the first starts
// the graceful stop and says what it waits for; the second warns "Ctrl-C again within 3 s exits
// WITHOUT flattening: positions stay open"; only a third within that window exits, code 130, saying
// NOT FLAT with what is open. The window comes from FXFLOW_CTRL_C_WINDOW_MS here, so nothing depends
// on how fast the test sends its signals: 60 s (the third is inside), or 0 (never inside).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from '../fault-proxy.ts';
import { type FxflowRun, rig, type Rig, startFxflowRun, until, endTest } from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  await endTest(run, proxy, r);
  [run, proxy, r] = [undefined, undefined, undefined];
});

const WARNING = 'exits WITHOUT flattening: positions stay open';
const count = (text: string, s: string): number => text.split(s).length - 1;
const gone = (run: FxflowRun): boolean => run.proc.exitCode !== null || run.proc.signalCode !== null;

/** A run with a position open at the account and its close held by the proxy once the first Ctrl-C starts the flatten. */
async function runWithHeldClose(windowMs: number): Promise<FxflowRun> {
  r = await rig();
  proxy = await startFaultProxy(r.sandbox.url);
  const env = { ...process.env, FXFLOW_CTRL_C_WINDOW_MS: String(windowMs) };
  // The position is opened from outside the run (an unknown fill): kept, so the stop is the Ctrl-C's, not the unknown-fill halt's (exit 3).
  const started = await startFxflowRun(
    r.sandbox,
    'test/runner/ping-pong-strategy.ts',
    [
      '--journal',
      r.journalDir,
      '--flatten-on-exit',
      '--on-unknown-fill',
      'keep',
      '--log-file',
      join(r.journalDir, 'run.log'),
    ],
    2,
    { url: proxy.url, env },
  );
  run = started;
  await r.rest.createOrder(r.accountID, { type: 'MARKET', instrument: 'EUR_USD', units: '1000' } as never);
  proxy.rule((q) => q.path.includes('/close'), { kind: 'hold', ms: 600_000 });
  started.proc.kill('SIGINT');
  await proxy.reached('held', (q) => q.path.includes('/close'), 30_000);
  return started;
}

describe('Ctrl-C during --flatten-on-exit', () => {
  it('the second Ctrl-C warns; a third within the window exits 130 saying NOT FLAT and what is open; the position stays open', async () => {
    const run = await runWithHeldClose(60_000);
    run.proc.kill('SIGINT');
    await until(() => run.err().includes(WARNING) || gone(run), 'the warning of the second Ctrl-C');
    if (!gone(run)) run.proc.kill('SIGINT');
    const code = await run.exited;
    const open = (await r!.rest.openTrades(r!.accountID)).length;
    const err = run.err();
    const lines = err.split('\n').filter((l) => /Ctrl-C|NOT FLAT/.test(l));
    console.log(
      `[ctrl-c] exit ${code ?? run.proc.signalCode}; open trades after: ${open}; the terminal said:\n  ${lines.join('\n  ')}`,
    );
    expect(err).toMatch(/Ctrl-C: stopping and closing every position \(--flatten-on-exit\); waiting for .+/);
    expect(err).toContain(`Ctrl-C again within 60 s ${WARNING}`);
    expect(code).toBe(130);
    expect(err).toMatch(/NOT FLAT: still open as last seen: EUR_USD long 1000/);
    expect(open).toBe(1);
  }, 90_000);

  it('a Ctrl-C outside the window of the previous one warns again instead of exiting; the flatten then finishes: flat, exit 0', async () => {
    const run = await runWithHeldClose(0);
    run.proc.kill('SIGINT');
    await until(() => count(run.err(), WARNING) === 1 || gone(run), 'the warning of the second Ctrl-C');
    expect(
      gone(run),
      `the second Ctrl-C ended the run: exit ${run.proc.exitCode ?? run.proc.signalCode}`,
    ).toBe(false);
    run.proc.kill('SIGINT');
    await until(
      () => count(run.err(), WARNING) === 2 || gone(run),
      'the third Ctrl-C (outside a 0 ms window) to warn again',
    );
    expect(
      gone(run),
      `the third Ctrl-C ended the run: exit ${run.proc.exitCode ?? run.proc.signalCode}`,
    ).toBe(false);
    proxy!.release();
    proxy!.clearRules();
    const code = await run.exited;
    const open = (await r!.rest.openTrades(r!.accountID)).length;
    console.log(
      `[ctrl-c] window 0: ${count(run.err(), WARNING)} warnings, exit ${code}, open trades after: ${open}`,
    );
    expect(code).toBe(0);
    expect(open).toBe(0);
    expect(run.out()).toMatch(/0 positions, 0 pending entry orders/);
  }, 90_000);
});
