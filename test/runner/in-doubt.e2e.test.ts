// Issue 24, item 3: no blind resend. An order request held in transit past the client's 30 s timeout
// must not be sent a second time: OANDA does not refuse a second market order with a used client ID,
// and a lookup by client ID finding nothing proves nothing while the first may still arrive. A real
// `fxflow run` process (the defaults: 30 s client timeout, 60 s request window, 10 s margin) against
// the sandbox through the fault proxy, which holds the first order request until the test has seen
// the runner hold it in doubt (past the 30 s timeout), read the status page and seen the next entry
// decided and kept back; only then does it let the request through (about 36 s on a quiet machine).
// No step depends on how long another takes: each waits on an event.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { type FaultProxy, startFaultProxy, v20 } from '../fault-proxy.ts';
import {
  accountTransactions,
  duplicateOrders,
  type FxflowRun,
  pricePath,
  rig,
  type Rig,
  startFxflowRun,
  until,
  endTest,
} from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  await endTest(run, proxy, r);
  [run, proxy, r] = [undefined, undefined, undefined];
});

const cid = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;

describe('no blind resend', () => {
  it('an order request held past the 30 s client timeout creates exactly one order; while it is in doubt nothing else is sent and the status page says so', async () => {
    r = await rig();
    proxy = await startFaultProxy(r.sandbox.url);
    const log = join(r.journalDir, 'run.log');
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    run = await startFxflowRun(
      r.sandbox,
      'test/runner/ping-pong-strategy.ts',
      ['--journal', r.journalDir, '--log-file', log, '--status-port', '0'],
      2,
      { url: proxy.url },
    );
    const statusUrl = /Live status: (\S+)/.exec(run.out())![1]!;
    const TIMEOUT = 30_000; // the client's
    proxy.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
    const path = pricePath(6);
    const push = (k: number): void => {
      r!.sandbox.setTime(path[k]!.time);
      r!.sandbox.pushPrice(path[k]!);
    };
    for (let k = 0; k < 3; k++) push(k);
    const held = await proxy.reached('held', v20.orderPost);
    const first = (JSON.parse(held.body) as { order: { clientExtensions: { id: string } } }).order
      .clientExtensions.id;
    // The client gives up at 30 s; the runner must now wait for a sign of the order, not resend it.
    await until(
      () => readFileSync(log, 'utf8').includes('the request may still be in transit: in doubt'),
      'the runner to hold the order in doubt',
      45_000,
    );
    const status = (await (await fetch(`${statusUrl}status.json`)).json()) as {
      inDoubt?: { intentId: string; instrument: string | null; until: string }[];
    };
    expect(status.inDoubt).toEqual([expect.objectContaining({ intentId: first, instrument: 'EUR_USD' })]);
    // Another entry decided while the first is in doubt waits: it is not sent before the first is settled.
    for (let k = 3; k < 6; k++) push(k);
    await until(
      () => Journal.read(r!.journalDir).intents.length === 2,
      'the second entry to be decided (journaled)',
      45_000,
    );
    const postsWhileInDoubt = proxy.requests.filter(v20.orderPost).length;
    // Now the held request goes on (within its window: the runner is still waiting for a sign of it).
    proxy.release();
    const firstSettled = await proxy.reached('replied', (x) => x.n === held.n);
    const second = await proxy.reached('received', (x) => v20.orderPost(x) && x.n > held.n, 60_000);
    await until(
      async () => (await accountTransactions(r!, start)).filter((t) => t.type === 'ORDER_FILL').length === 2,
      'both fills',
    );
    const txs = await accountTransactions(r, start);
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER');
    const posts = proxy.requests.filter(v20.orderPost);
    console.log(
      `[in doubt] order ${first} held ${((firstSettled.at.forwarded! - held.at.received!) / 1000).toFixed(1)} s: ${posts.length} order requests sent (${posts.map((p) => `#${p.n} at ${((p.at.received! - held.at.received!) / 1000).toFixed(1)} s`).join(', ')}); the account has ${orders.length} orders (${orders.map(cid).join(', ')}), duplicates ${duplicateOrders(txs)}; status page during the doubt: ${JSON.stringify(status.inDoubt)}`,
    );
    expect(orders.filter((t) => cid(t) === first)).toHaveLength(1);
    expect(duplicateOrders(txs)).toBe(0);
    expect(orders).toHaveLength(2);
    expect(posts).toHaveLength(2);
    expect(postsWhileInDoubt).toBe(1);
    // The second entry went out only once the first had reached the broker, after the client's timeout.
    expect(second.at.received!).toBeGreaterThanOrEqual(firstSettled.at.forwarded!);
    expect(second.at.received! - held.at.received!).toBeGreaterThanOrEqual(TIMEOUT);
    // Said once its sign on the transaction stream was seen; the log file is written a moment after
    // the fills reach the account, so it is waited for, not read at once.
    await until(
      () => readFileSync(log, 'utf8').includes('the request had been applied; not resubmitting'),
      'the runner to say the held request had been applied and is not resubmitted',
      30_000,
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 120_000);
});
