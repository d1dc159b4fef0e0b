import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/runner/order-path/journal.ts';
import {
  accountTransactions,
  duplicateOrders,
  pricePath,
  rig,
  startFxflowRun,
  type FxflowRun,
  type Rig,
} from './harness.ts';

let r: Rig | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  await r?.close();
  r = undefined;
});

/** Starts `fxflow run` (ping-pong) on the sandbox; resolves once it is running with both streams connected. */
const startRunner = (sandbox: Rig['sandbox'], journal: string, log: string): Promise<FxflowRun> =>
  startFxflowRun(sandbox, 'test/runner/ping-pong-strategy.ts', [
    '--journal',
    journal,
    '--log-file',
    log,
    '--max-intent-age',
    '600',
    '--request-window',
    '1',
    '--in-doubt-margin',
    '1',
  ]); // resubmission after a kill is the point here, however slow the restart; on loopback a killed runner's request reaches the sandbox at once, so a 2 s window proves it absent

describe('kill -9 and restart', () => {
  it('10 SIGKILLs at random points, restarts: 0 duplicate orders, 0 missed transactions, strategy state restored', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const log = join(r.journalDir, 'run.log');
    let run = await startRunner(r.sandbox, r.journalDir, log);
    child = run.proc;
    // 5xx answers to a share of requests: an order POST that gets one stays unconfirmed while the
    // client looks it up (about half a second), so kills also land between submission and outcome.
    r.sandbox.setFaults({ errorRate: 0.25, seed: 5 });
    const path = pricePath(400);
    let kills = 0;
    let i = 0;
    let seed = 12345;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    while (kills < 10 && i < path.length) {
      const p = path[i++]!;
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      const killNow = i % 3 === 0 && rand() < 0.45;
      // Every 3rd price makes an order: a kill a few ms later lands between the journal write, the
      // submission, the fill and its journaling.
      await new Promise((res) => setTimeout(res, Math.floor(rand() * (killNow ? 12 : 40))));
      if (killNow) {
        // Every 3rd price makes an order: a kill here lands between submission, fill and journal writes.
        run.proc.kill('SIGKILL');
        await run.exited;
        kills++;
        run = await startRunner(r.sandbox, r.journalDir, log);
        child = run.proc;
      }
    }
    r.sandbox.setFaults({});
    // Let the last run catch up, then stop it gracefully; then a graceful restart, whose pricing
    // stream starts with the last price again (the stop's snapshot has seen it), and 2 more prices.
    await new Promise((res) => setTimeout(res, 3000));
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const atStop = Journal.read(r.journalDir).state?.state as { ticks: number };
    run = await startRunner(r.sandbox, r.journalDir, log);
    child = run.proc;
    for (let k = 0; k < 2; k++) {
      const p = path[i++]!;
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await new Promise((res) => setTimeout(res, 100));
    }
    await new Promise((res) => setTimeout(res, 1000));
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const txs = await accountTransactions(r, start);
    const j = Journal.read(r.journalDir);
    const missed = txs.filter((t) => !j.transactions.some((x) => x.id === t.id)).length;
    const dup = duplicateOrders(txs);
    const orders = new Set(
      txs
        .filter((t) => t.type === 'MARKET_ORDER')
        .map((t) => (t as { clientExtensions?: { id?: string } }).clientExtensions?.id),
    ).size;
    const fills = txs.filter((t) => t.type === 'ORDER_FILL').length;
    const state = j.state?.state as {
      orders: number;
      fills: number;
      ticks: number;
      last: number;
      again: number;
    };
    const { readFileSync } = await import('node:fs');
    const logText = readFileSync(log, 'utf8');
    const found = logText.split('journaled intent had reached the broker').length - 1;
    const resubmitted = logText.split('journaled intent never reached the broker').length - 1;
    const summaryLine =
      run
        .out()
        .split('\n')
        .find((l) => l.startsWith('intents')) ?? '';
    console.log(
      `[restart] ${kills} SIGKILLs and a graceful restart over ${i} prices (+1: the sandbox's opening price); the strategy saw ${state.ticks} ticks, ${state.again} of them a second time; ${txs.length} transactions, ${orders} orders, ${fills} fills; missed ${missed}, duplicate orders ${dup}; restored state ${JSON.stringify(state)}; unconfirmed intents after kills: ${found} found at the broker by @clientID, ${resubmitted} resubmitted; last run: ${summaryLine}`,
    );
    expect(kills).toBe(10);
    expect(orders).toBeGreaterThan(10);
    expect(missed).toBe(0);
    expect(dup).toBe(0);
    expect(j.intents).toEqual([]);
    expect(state.orders).toBe(orders);
    expect(state.fills).toBe(fills);
    // No price reached the strategy twice: not the latest price that each restart's pricing stream
    // starts with (after the graceful restart the strategy saw exactly the 2 new prices), nor any
    // other. (A SIGKILL can lose the ticks the strategy handled after its last snapshot, which is
    // journaled with each intent: the count is at most the prices pushed, plus the opening price.)
    expect(state.again).toBe(0);
    expect(state.ticks).toBe(atStop.ticks + 2);
    expect(state.last).toBe(path[i - 1]!.time);
    expect(state.ticks).toBeLessThanOrEqual(i + 1);
  }, 240_000);
});
