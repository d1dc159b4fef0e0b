// Issue 33, items 3 and 8: the kill switch's halt is the journal's, it acts from the process's first
// moment, and a refused start writes nothing. Real `fxflow run` processes against the sandbox over
// HTTP (through the fault proxy where a reply must fail or wait), real journal files, real signals.
//
// 1. SIGUSR2, then `kill -9` while the flatten's close keeps failing (503): a plain restart on that
//    journal sends no order of the strategy (it used to resume trading: 38 orders in 10 s), closes
//    what is open, says it is halted, why, since when and how to clear it, and exits 0 flat;
//    `fxflow journal clear-halt` clears it and the next run trades.
// 2. SIGUSR2 while the start waits for its first replies: the process handles it (it used to end with
//    Node's default action, exit 140, nothing flattened), flattens and exits 0; a restart trades nothing.
// 3. `--status-port` already in use: exit 1 naming the port, and no journal folder left behind (it
//    used to leave a journal.lock naming a dead pid and an empty journal.log).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { type FaultProxy, startFaultProxy } from '../fault-proxy.ts';
import {
  endTest,
  type FxflowRun,
  pricePath,
  rig,
  type Rig,
  spawnFxflowRun,
  startFxflowRun,
  until,
  watch,
} from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
let runs: FxflowRun[] = [];
let busy: Server | undefined;
afterEach(async () => {
  for (const run of runs.slice(1)) run.proc.kill('SIGKILL');
  await endTest(runs[0], proxy, r);
  busy?.close();
  [proxy, r, busy] = [undefined, undefined, undefined];
  runs = [];
});

type Tx = { id: string; type: string; reason?: string; clientExtensions?: { id?: string } };
const isStream = (path: string): boolean => path.includes('/stream');
const STACK = /\n\s+at .+:\d+:\d+/;

/** The strategy's market orders at the account after transaction `after`. */
async function strategyOrders(rg: Rig, after = '0'): Promise<Tx[]> {
  const txs = (await rg.rest.transactionsSinceId(rg.accountID, after)).transactions as unknown as Tx[];
  return txs.filter(
    (t) => t.type === 'MARKET_ORDER' && (t.clientExtensions?.id ?? '').startsWith('ping-pong-'),
  );
}

/** `fxflow journal clear-halt <dir>` as a process: its exit code and output. */
async function clearHalt(dir: string): Promise<{ code: number | null; out: string; err: string }> {
  const proc = spawn(process.execPath, [join('bin', 'fxflow.js'), 'journal', 'clear-halt', dir], {
    cwd: resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const w = watch(proc);
  const code = await w.exited;
  return { code, out: w.out(), err: w.err() };
}

/**
 * A plain restart on a halted journal, prices pushed every 100 ms while it lives (a run that traded
 * would order on them): at most `n` prices. Returns the run and whether it ended by itself.
 */
async function haltedRestart(
  rg: Rig,
  push: () => void,
  args: readonly string[],
  n = 80,
): Promise<{ run: FxflowRun; ended: boolean }> {
  const run = watch(spawnFxflowRun(rg.sandbox.url, 'test/runner/ping-pong-strategy.ts', args));
  runs.push(run);
  for (let k = 0; k < n && run.proc.exitCode === null && run.proc.signalCode === null; k++) {
    push();
    await new Promise((res) => setTimeout(res, 100));
  }
  const ended = await until(
    () => run.proc.exitCode !== null || run.proc.signalCode !== null,
    'the halted restart to end',
    30_000,
  ).then(
    () => true,
    () => false,
  );
  return { run, ended };
}

describe("the halt is the journal's", () => {
  it('SIGUSR2, then kill -9 while the close keeps failing: a restart sends 0 orders of the strategy, flattens, says it is halted and how to clear it; after clear-halt it trades', async () => {
    r = await rig();
    const rg = r;
    proxy = await startFaultProxy(rg.sandbox.url);
    const path = pricePath(400);
    let i = 0;
    const push = (): void => {
      const p = path[i++ % path.length]!;
      rg.sandbox.setTime(path[0]!.time + i * 1000);
      rg.sandbox.pushPrice({ ...p, time: path[0]!.time + i * 1000 });
    };
    push();
    // A short request window: a close cut off by the kill -9 is in doubt for 3 s at the restart, not 70.
    const args = ['--journal', rg.journalDir, '--request-window', '2', '--in-doubt-margin', '1'];
    const first = await startFxflowRun(
      rg.sandbox,
      'test/runner/ping-pong-strategy.ts',
      [...args, '--flatten-timeout', '120'],
      2,
      { url: proxy.url },
    );
    runs.push(first);
    // Until the strategy holds a position.
    await until(
      async () => {
        push();
        return (await rg.rest.openTrades(rg.accountID)).length > 0;
      },
      'the strategy to open a trade',
      30_000,
    );
    // The flatten's closes fail from now on: the kill switch keeps trying.
    const closes = proxy.rule((q) => q.path.includes('/close'), {
      kind: 'answer',
      status: 503,
      body: '{"errorMessage":"Service Unavailable (fault proxy)"}',
    });
    first.proc.kill('SIGUSR2');
    await until(
      () => closes.hits >= 1 && /KILL SWITCH ENGAGED/.test(first.err()),
      'the kill switch to try its first close',
      30_000,
    );
    first.proc.kill('SIGKILL');
    await first.exited;
    const journaled = Journal.read(rg.journalDir).halt;
    const openBefore = (await rg.rest.openTrades(rg.accountID)).length;
    const lastBefore = (await rg.rest.summary(rg.accountID)).lastTransactionID;

    // A plain restart on the same journal (straight to the sandbox: nothing fails any more).
    const { run: again, ended } = await haltedRestart(rg, push, args);
    const code = again.proc.exitCode;
    const after = await strategyOrders(rg, lastBefore);
    const openAfter = (await rg.rest.openTrades(rg.accountID)).length;
    const said = `${again.err()}\n${again.out()}`;
    console.log(
      `[halt journaled] halt in the journal after kill -9: ${JSON.stringify(journaled)}; open trades then ${openBefore}; the restart: ended ${ended} (exit ${code}), ${after.length} strategy orders, open trades after ${openAfter}; said: ${said
        .split('\n')
        .find((l) => l.includes('HALTED'))
        ?.slice(0, 300)}`,
    );
    if (!ended) console.log(again.err().split('\n').slice(-8).join('\n'));
    expect(journaled?.why).toBe('SIGUSR2');
    expect(openBefore).toBeGreaterThan(0);
    expect(after).toEqual([]);
    expect(ended).toBe(true);
    expect(code).toBe(0);
    expect(openAfter).toBe(0);
    expect(said).toMatch(/HALTED since \d{4}-\d\d-\d\dT[\d:.]+Z \(SIGUSR2\)/);
    expect(said).toContain(`fxflow journal clear-halt ${rg.journalDir}`);
    expect(again.out()).toMatch(/0 positions, 0 pending entry orders/);
    expect(said).not.toMatch(STACK);
    // Still halted: a restart does not clear it by itself.
    expect(Journal.read(rg.journalDir).halt?.why).toBe('SIGUSR2');

    // Cleared, it trades again.
    const cleared = await clearHalt(rg.journalDir);
    expect(cleared.code).toBe(0);
    expect(cleared.out).toMatch(/the halt since .* \(SIGUSR2\) is cleared/);
    expect(Journal.read(rg.journalDir).halt).toBeUndefined();
    expect((await clearHalt(rg.journalDir)).out).toMatch(/is not halted: nothing to clear/);
    const lastCleared = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    const third = await startFxflowRun(rg.sandbox, 'test/runner/ping-pong-strategy.ts', args);
    runs.push(third);
    await until(
      async () => {
        push();
        return (await strategyOrders(rg, lastCleared)).length > 0;
      },
      'the cleared run to trade',
      30_000,
    );
    third.proc.kill('SIGINT');
    expect(await third.exited).toBe(0);
  }, 180_000);

  it('clear-halt on a folder that holds no journal says so and exits 1', async () => {
    r = await rig();
    const empty = join(r.journalDir, 'nothing-here');
    const res = await clearHalt(empty);
    expect(res.code).toBe(1);
    expect(res.err).toMatch(/holds no journal \(no journal.log or snapshot.json\)/);
    expect(existsSync(empty)).toBe(false);
  }, 30_000);

  it('SIGUSR2 while the start waits for its replies: handled (not exit 140), the account flattened, exit 0; a restart trades nothing', async () => {
    r = await rig();
    const rg = r;
    const path = pricePath(200);
    let i = 0;
    const push = (): void => {
      const p = path[i++ % path.length]!;
      rg.sandbox.setTime(path[0]!.time + i * 1000);
      rg.sandbox.pushPrice({ ...p, time: path[0]!.time + i * 1000 });
    };
    push();
    // A position the kill switch has to close, opened before the run.
    await rg.rest.createOrder(rg.accountID, {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '1000',
    } as never);
    expect((await rg.rest.openTrades(rg.accountID)).length).toBe(1);
    proxy = await startFaultProxy(rg.sandbox.url);
    // Every REST reply 2 s late: the start is slow.
    proxy.rule((q) => !isStream(q.path), { kind: 'delay', ms: 2000 });
    const run = watch(
      spawnFxflowRun(proxy.url, 'test/runner/ping-pong-strategy.ts', ['--journal', rg.journalDir]),
    );
    runs.push(run);
    // The process's first request has reached the proxy (its reply is on the way): the start is under way.
    await proxy.reached('received', undefined, 30_000);
    const lastBefore = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    run.proc.kill('SIGUSR2');
    // Prices keep coming while it starts and flattens.
    while (run.proc.exitCode === null && run.proc.signalCode === null && i < 150) {
      push();
      await new Promise((res) => setTimeout(res, 100));
    }
    await until(() => run.proc.exitCode !== null || run.proc.signalCode !== null, 'the run to end', 60_000);
    const orders = await strategyOrders(rg, lastBefore);
    const open = (await rg.rest.openTrades(rg.accountID)).length;
    const halt = Journal.read(rg.journalDir).halt;
    console.log(
      `[signal at start] exit ${run.proc.exitCode} signal ${run.proc.signalCode}; ${orders.length} strategy orders; open trades after ${open}; journal halt ${JSON.stringify(halt)}; said: ${run
        .err()
        .split('\n')
        .filter((l) => l.includes('KILL SWITCH'))
        .join(' | ')
        .slice(0, 400)}`,
    );
    expect(run.proc.signalCode).toBeNull();
    expect(run.proc.exitCode).toBe(0);
    expect(run.err()).toMatch(/KILL SWITCH ENGAGED \(SIGUSR2\)/);
    expect(run.out()).toMatch(/0 positions, 0 pending entry orders/);
    expect(orders).toEqual([]);
    expect(open).toBe(0);
    expect(halt?.why).toBe('SIGUSR2');
    expect(run.err()).not.toMatch(STACK);

    // A restart on that journal trades nothing.
    const lastAfter = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    const { run: again, ended } = await haltedRestart(rg, push, ['--journal', rg.journalDir]);
    expect(ended).toBe(true);
    expect(again.proc.exitCode).toBe(0);
    expect(await strategyOrders(rg, lastAfter)).toEqual([]);
    expect(again.err()).toMatch(/HALTED since .* \(SIGUSR2\)/);
  }, 180_000);
});

describe('a stop asked for during the start', () => {
  it('SIGTERM while the start waits for its replies: handled (not the default action), the run stops once started, exit 0, the journal not halted', async () => {
    r = await rig();
    const rg = r;
    const p = pricePath(1)[0]!;
    rg.sandbox.setTime(p.time);
    rg.sandbox.pushPrice(p);
    proxy = await startFaultProxy(rg.sandbox.url);
    proxy.rule((q) => !isStream(q.path), { kind: 'delay', ms: 2000 });
    const run = watch(
      spawnFxflowRun(proxy.url, 'test/runner/ping-pong-strategy.ts', ['--journal', rg.journalDir]),
    );
    runs.push(run);
    await proxy.reached('received', undefined, 30_000);
    run.proc.kill('SIGTERM');
    await until(() => run.proc.exitCode !== null || run.proc.signalCode !== null, 'the run to end', 60_000);
    console.log(
      `[SIGTERM at start] exit ${run.proc.exitCode} signal ${run.proc.signalCode}; said: ${run
        .err()
        .split('\n')
        .find((l) => l.includes('SIGTERM'))
        ?.slice(0, 200)}`,
    );
    expect(run.proc.signalCode).toBeNull();
    expect(run.proc.exitCode).toBe(0);
    expect(run.err()).toMatch(/SIGTERM while starting: the run stops as soon as its start is done/);
    expect(run.out()).toMatch(/\(run: SIGTERM\)/);
    expect(Journal.read(rg.journalDir).halt).toBeUndefined();
  }, 90_000);
});

describe('a refused start writes nothing', () => {
  it('--status-port already in use: exit 1 naming the port, no journal folder, no lock', async () => {
    r = await rig();
    busy = createServer();
    await new Promise<void>((res) => busy!.listen(0, '127.0.0.1', () => res()));
    const port = (busy.address() as AddressInfo).port;
    const journalDir = join(r.journalDir, 'fresh');
    const run = watch(
      spawnFxflowRun(r.sandbox.url, 'test/runner/ping-pong-strategy.ts', [
        '--journal',
        journalDir,
        '--status-port',
        String(port),
      ]),
    );
    runs.push(run);
    const code = await run.exited;
    console.log(
      `[status port in use] exit ${code}; ${run.err().trim().slice(0, 300)}; journal folder left: ${existsSync(journalDir)}`,
    );
    expect(code).toBe(1);
    expect(run.err()).toContain(String(port));
    expect(run.err()).not.toMatch(STACK);
    expect(existsSync(journalDir)).toBe(false);
    expect(existsSync(join(journalDir, 'journal.lock'))).toBe(false);
  }, 60_000);

  it('a journal in use, with --status-port: exit 1 naming the holder, and the status page closed with it (the process ends)', async () => {
    r = await rig();
    const p = pricePath(1)[0]!;
    r.sandbox.setTime(p.time);
    r.sandbox.pushPrice(p);
    const first = await startFxflowRun(r.sandbox, 'test/runner/ping-pong-strategy.ts', [
      '--journal',
      r.journalDir,
    ]);
    runs.push(first);
    const second = watch(
      spawnFxflowRun(r.sandbox.url, 'test/runner/ping-pong-strategy.ts', [
        '--journal',
        r.journalDir,
        '--status-port',
        '0',
      ]),
    );
    runs.push(second);
    const code = await second.exited;
    expect(code).toBe(1);
    expect(second.err()).toMatch(new RegExp(`is in use by pid ${first.proc.pid}`));
    first.proc.kill('SIGINT');
    expect(await first.exited).toBe(0);
  }, 60_000);
});
