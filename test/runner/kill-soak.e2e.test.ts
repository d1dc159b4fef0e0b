// Issue 24, the kill -9 soak: 40 cycles of `fxflow run` killed while an order is in flight. The fault
// proxy holds each cycle's order request, so the test knows the order is in flight when it kills;
// the request then reaches the sandbox after the kill, either before the restart (odd cycles) or
// while the restarted runner is looking for it (even cycles: it is in doubt there, within its
// request window, and must be found, not resent). Real processes, the sandbox over HTTP, real files.
// Every wait is on an event (the proxy's stages, the process's output, the account's state).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { inputFiles, readInputs, readRunMeta } from '../../src/runner/recording.ts';
import { type FaultProxy, startFaultProxy, v20 } from '../fault-proxy.ts';
import { accountTransactions, duplicateOrders, type FxflowRun, pricePath, rig, type Rig, spawnFxflowRun, until, watch } from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await proxy?.close();
  proxy = undefined;
  await r?.close();
  r = undefined;
});

const CYCLES = Number(process.env.FXFLOW_SOAK_CYCLES ?? 40);
const cid = (t: Transaction): string | undefined => (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;

describe('kill -9 soak', () => {
  it(`${CYCLES} kills while an order is in flight: 0 duplicated, 0 lost; the run folder replays to each cut`, async () => {
    r = await rig();
    proxy = await startFaultProxy(r.sandbox.url);
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-soak-')), 'run');
    const log = join(r.journalDir, 'run.log');
    const args = ['--journal', r.journalDir, '--out', out, '--log-file', log];
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const path = pricePath(3 * CYCLES + 3);
    let i = 0;
    const push = (): void => {
      const p = path[i++]!;
      r!.sandbox.setTime(p.time);
      r!.sandbox.pushPrice(p);
    };
    /** Starts a runner; with `held`, releases that order once the restarted runner has looked for it and found nothing. */
    const begin = async (held?: string): Promise<FxflowRun> => {
      const streams = r!.sandbox.stats().streamConnections;
      const since = proxy!.requests.length;
      const p = watch(spawnFxflowRun(proxy!.url, 'test/runner/ping-pong-strategy.ts', args));
      if (held !== undefined) {
        // The restarted runner finds the journaled order nowhere yet (it is still held): it must wait.
        await proxy!.reached('received', (x) => x.n > since && x.path.endsWith(`/orders/@${held}`), 60_000);
        proxy!.release();
      }
      await until(() => p.out().includes('Ctrl-C stops') && r!.sandbox.stats().streamConnections >= streams + 2, 'the runner to start', 60_000);
      return p;
    };
    const heldIDs: string[] = [];
    const t0 = performance.now();
    run = await begin();
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      proxy.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
      const seen = proxy.requests.length;
      for (let k = 0; k < 3; k++) push(); // ping-pong decides on every 3rd price
      const held = await proxy.reached('held', (x) => x.n > seen && v20.orderPost(x));
      const id = (JSON.parse(held.body) as { order: { clientExtensions: { id: string } } }).order.clientExtensions.id;
      heldIDs.push(id);
      run.proc.kill('SIGKILL');
      await run.exited;
      if (cycle % 2 === 1) {
        // The order reaches the account while no runner runs.
        proxy.release();
        await proxy.reached('replied', (x) => x.n === held.n);
        run = await begin();
      } else {
        run = await begin(id);
      }
    }
    // The last runner trades one more order without faults, then stops.
    for (let k = 0; k < 3; k++) push();
    await until(async () => (await accountTransactions(r!, start)).filter((t) => t.type === 'ORDER_FILL').length === CYCLES + 1, 'the last fill', 60_000);
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const seconds = (performance.now() - t0) / 1000;

    const txs = await accountTransactions(r, start);
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER');
    const orderIDs = orders.map(cid);
    const intents: string[] = [];
    const meta = readRunMeta(out);
    await readInputs(out, inputFiles(out, meta).files, (x) => {
      if (x.k === 'intent') intents.push(x.intent.id);
    });
    const lost = intents.filter((x) => !orderIDs.includes(x));
    const unrecorded = orderIDs.filter((x) => x === undefined || !intents.includes(x));
    const written = readFileSync(join(out, 'transactions.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as Transaction).id);
    const text = readFileSync(log, 'utf8');
    const waited = text.split('sent within its request window: in doubt').length - 1;
    const resent = text.split('journaled intent never reached the broker; submitting it now').length - 1;
    // The folder replays to each cut.
    const replayOut = mkdtempSync(join(tmpdir(), 'fxflow-soak-replay-'));
    const rp = watch(spawn(process.execPath, [join('bin', 'fxflow.js'), 'replay', out, '--out', replayOut], { cwd: resolve(import.meta.dirname, '../..'), stdio: ['ignore', 'pipe', 'pipe'] }));
    const replayCode = await rp.exited;
    const cuts = rp.out().split('\n').filter((l) => / was cut off /.test(l));
    console.log(`[kill soak] ${CYCLES} kill -9 with an order in flight in ${seconds.toFixed(0)} s; ${meta.sessions.length} sessions; the account: ${orders.length} orders, ${duplicateOrders(txs)} duplicated; intents recorded ${intents.length}, lost ${lost.length}, orders not recorded ${unrecorded.length}; restarts that waited for an order in doubt ${waited}, resent ${resent}; transactions.jsonl ${written.length} of ${txs.length}; replay exit ${replayCode}, ${cuts.length} cut-off sessions named (${cuts[0]})`);
    expect(heldIDs).toHaveLength(CYCLES);
    expect(duplicateOrders(txs)).toBe(0);
    expect(orders).toHaveLength(CYCLES + 1);
    for (const id of heldIDs) expect(orderIDs.filter((x) => x === id)).toHaveLength(1);
    expect(lost).toEqual([]);
    expect(unrecorded).toEqual([]);
    expect(resent).toBe(0);
    expect(waited).toBe(CYCLES / 2);
    expect(written).toEqual(txs.map((t) => t.id));
    expect(meta.sessions).toHaveLength(CYCLES + 1);
    expect(replayCode).toBe(0);
    expect(cuts).toHaveLength(CYCLES);
  }, 600_000);
});
