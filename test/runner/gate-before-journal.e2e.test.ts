// Issue 33, item 2: the order path is risk gate → journal → the in-doubt rule → broker. An intent the
// risk gate refuses never becomes an intent record in the journal, so a restart after `kill -9` has
// only the accepted ones to settle. A real `fxflow run` process against the sandbox over HTTP, the
// fault proxy holding the first order request so the kill comes while the accepted intents are
// journaled and not yet answered; the assertions are on the journal's own records.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { DEFAULT_RISK_LIMITS } from '../../src/engine/risk.ts';
import { Journal, parseFrames } from '../../src/runner/order-path/journal.ts';
import { type FaultProxy, startFaultProxy, v20 } from '../fault-proxy.ts';
import {
  accountTransactions,
  duplicateOrders,
  endTest,
  type FxflowRun,
  pricePath,
  rig,
  type Rig,
  startFxflowRun,
  until,
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
/** The client ID of every intent record journal.log holds (confirmed or not), in order. */
const intentRecords = (dir: string): string[] =>
  parseFrames(readFileSync(join(dir, 'journal.log'))).records.flatMap((x) =>
    x.k === 'intent' ? [x.intent.id] : [],
  );
/** The sequence number a client ID ends with (`flood-<run>-<n>`). */
const seq = (id: string): number => Number(/-(\d+)$/.exec(id)?.[1]);

describe('the risk gate before the journal', () => {
  it('10,000 intents at one tick under the default cap: only the 50 accepted are journaled, and a restart after kill -9 recovers only them', async () => {
    const cap = DEFAULT_RISK_LIMITS.maxIntentsPerEvent;
    r = await rig();
    proxy = await startFaultProxy(r.sandbox.url);
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    // The restart comes well within --max-intent-age: the accepted intents never sent are sent then.
    const args = ['--journal', r.journalDir, '--max-intent-age', '600'];
    run = await startFxflowRun(r.sandbox, 'test/runner/flood-strategy.ts', args, 2, { url: proxy.url });
    proxy.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
    const p = pricePath(1)[0]!;
    r.sandbox.setTime(p.time);
    r.sandbox.pushPrice(p);
    // The gate decides every intent of the event before the first request leaves (one at a time).
    const held = await proxy.reached('held', v20.orderPost, 120_000);
    run.proc.kill('SIGKILL');
    await run.exited;

    const journaled = intentRecords(r.journalDir);
    const pending = Journal.read(r.journalDir).intents.map((i) => i.intent.id);
    console.log(
      `[gate before journal] 10,000 intents at one tick, killed with the first order held: ${journaled.length} intent records in journal.log, ${pending.length} without an outcome`,
    );
    expect(journaled).toHaveLength(cap);
    expect(new Set(journaled).size).toBe(cap);
    expect(journaled.map(seq)).toEqual(Array.from({ length: cap }, (_, k) => k + 1));
    expect(pending).toEqual(journaled);
    const heldID = (JSON.parse(held.body) as { order: { clientExtensions: { id: string } } }).order
      .clientExtensions.id;
    expect(heldID).toBe(journaled[0]);

    // The held order reaches the account while no runner runs; the restart finds it and sends the other 49 once.
    proxy.release();
    await proxy.reached('replied', (x) => x.n === held.n);
    proxy.clearRules();
    run = await startFxflowRun(r.sandbox, 'test/runner/flood-strategy.ts', args, 2, { url: proxy.url });
    await until(
      async () => (await accountTransactions(r!, start)).filter((t) => t.type === 'ORDER_FILL').length >= cap,
      `${cap} fills`,
      120_000,
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    // The restart looked up exactly the journaled intents (the run's summary line).
    expect(run.out()).toContain(`recovered: replayed 0, looked up ${cap}, resubmitted ${cap - 1}, expired 0`);
    const txs = await accountTransactions(r, start);
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER').map(cid);
    expect(duplicateOrders(txs)).toBe(0);
    expect([...orders].sort()).toEqual([...journaled].sort());
    expect(Journal.read(r.journalDir).intents).toEqual([]);
  }, 300_000);
});
