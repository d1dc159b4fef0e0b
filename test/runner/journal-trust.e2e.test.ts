// Issue 15, items 3 to 6: client IDs that never repeat, a journal that says when it is damaged, a
// journal that must belong to its account, and orders whose outcome is unknown. Real sandboxes over
// HTTP, real journal files.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadInstruments } from '../../src/domain/instrument.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { RunnerError } from '../../src/runner/session/runner.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { accountTransactions, pricePath, quiet, rig, type Rig, settle, until, waitTicks } from './harness.ts';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { Runner } from '../../src/runner/session/runner.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

let r: Rig | undefined;
const extra: Sandbox[] = [];
afterEach(async () => {
  await r?.close();
  r = undefined;
  for (const s of extra.splice(0)) await s.close();
});

const cidOf = (t: unknown): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;
const market = (id: string): OrderIntent => ({
  kind: 'order',
  id,
  request: { type: 'MARKET', instrument: 'EUR_USD', units: '1000' } as never,
});

/** Pushes prices 1..n of the path through the sandbox and waits for the runner to handle each and settle. */
async function trade(rr: Rig, runner: Runner, from: number, n: number): Promise<void> {
  const path = pricePath(from + n);
  for (let i = from; i < from + n; i++) {
    rr.sandbox.setTime(path[i]!.time);
    rr.sandbox.pushPrice(path[i]!);
    await waitTicks(runner, i - from + 1);
    await settle(rr, runner);
  }
}

/** Waits for the outcome of its own order (by client ID) before the next one: the README's pattern. */
const waiter = defineStrategy({
  params: {},
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ pending: '', orders: 0, filled: 0, rejected: [] as string[] }),
  onTick(ctx, s) {
    // Only the test's own prices (from 10:00; the sandbox's opening price at midnight may reach the
    // strategy before or after the test turns the faults on), one order at a time, and none after
    // the first fill: how many ticks arrive after that fill depends on the machine, not the runner.
    if ((ctx.tick?.at ?? 0) < Date.UTC(2024, 0, 2, 10, 0) || s.pending !== '' || s.filled > 0) return;
    const o = ctx.market('EUR_USD', 1000);
    return { state: { ...s, pending: o.id, orders: s.orders + 1 }, intents: [o] };
  },
  onTransaction(ctx, s) {
    const t = ctx.transaction as unknown as {
      type: string;
      clientOrderID?: string;
      clientExtensions?: { id?: string };
      rejectReason?: string;
    };
    if (s.pending === '') return;
    if (t.type === 'ORDER_FILL' && t.clientOrderID === s.pending)
      return { state: { ...s, pending: '', filled: s.filled + 1 } };
    if (t.type.endsWith('_REJECT') && t.clientExtensions?.id === s.pending)
      return { state: { ...s, pending: '', rejected: [...s.rejected, t.rejectReason ?? '?'] } };
  },
});

describe('client IDs never repeat (item 3)', () => {
  it('three runs on one account (a journal, a lost journal, a journal cut back to its baseline): every intent gets its own client ID and its own order', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const dirs = [r.journalDir, mkdtempSync(join(tmpdir(), 'fxflow-lost-')), ''];
    let intents = 0;
    let from = 0;
    const runIds: string[] = [];
    for (let k = 0; k < 3; k++) {
      if (k === 2) {
        // The second journal, cut back to what it held before its run traded: its strategy snapshot and client-ID sequence lost.
        dirs[2] = dirs[1]!;
        writeFileSync(join(dirs[2], 'journal.log'), '');
        writeFileSync(join(dirs[2], 'snapshot.json.keep'), readFileSync(join(dirs[2], 'snapshot.json')));
        const { rmSync } = await import('node:fs');
        rmSync(join(dirs[2], 'snapshot.json'));
      }
      const runner = r.runner({ journalDir: dirs[k]! });
      runIds.push(runner.runId);
      await runner.start();
      await trade(r, runner, from, 9);
      from += 9;
      const res = await runner.stop('end');
      intents += res.intents;
    }
    const txs = await accountTransactions(r, start);
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER').map(cidOf);
    const rejects = txs.filter((t) => t.type.endsWith('_REJECT')).length;
    console.log(
      `[client IDs] 3 runs (run IDs ${runIds.join(', ')}): ${intents} intents, ${orders.length} orders, ${new Set(orders).size} distinct client IDs, ${rejects} rejects; e.g. ${orders.slice(0, 2).join(', ')}`,
    );
    expect(intents).toBe(9);
    expect(orders.length).toBe(intents);
    expect(new Set(orders).size).toBe(orders.length);
    expect(rejects).toBe(0);
    for (let k = 0; k < 3; k++)
      expect(orders.slice(3 * k, 3 * k + 3).every((id) => id!.includes(runIds[k]!))).toBe(true);
    expect(orders.every((id) => id!.length <= 128)).toBe(true);
  }, 60_000);
});

describe('a damaged journal (item 4)', () => {
  it('one flipped byte in the middle: the damaged record is reported with its offset, the 103 records after it are recovered, and the runner refuses to trade on it (naming --new-journal); --new-journal starts afresh', async () => {
    r = await rig();
    const j = Journal.open(r.journalDir, { compactEvery: 1_000_000 });
    for (let i = 1; i <= 117; i++)
      j.transaction({
        id: String(i),
        type: 'DAILY_FINANCING',
        time: '2024-01-02T22:00:00.000000000Z',
        accountID: r.accountID,
        financing: '0.0100',
      } as never);
    j.close();
    const p = join(r.journalDir, 'journal.log');
    const b = readFileSync(p);
    let off = 0;
    for (let k = 0; k < 13; k++) off = b.indexOf(0x0a, off) + 1; // the start of record 14
    b[off + 40] = b[off + 40]! ^ 0x01;
    writeFileSync(p, b);
    const c = Journal.read(r.journalDir);
    console.log(
      `[journal damage] damaged ${JSON.stringify(c.damaged)}; ${c.transactions.length} of 117 records read`,
    );
    expect(c.damaged).toEqual([{ offset: off, bytes: b.indexOf(0x0a, off) + 1 - off, recoveredAfter: 103 }]);
    expect(c.transactions.length).toBe(116);
    expect(c.lastTransactionID).toBe('117');
    let refused: unknown;
    try {
      r.runner();
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(RunnerError);
    expect((refused as Error).message).toContain(`at byte ${off}`);
    expect((refused as Error).message).toContain('--new-journal');
    expect(readFileSync(p).equals(b)).toBe(true); // the damaged journal is left as it was
    const fresh = r.runner({ newJournal: true });
    await fresh.start();
    await trade(r, fresh, 0, 3);
    await fresh.stop('end');
    expect(Journal.read(r.journalDir).damaged).toEqual([]);
    expect(fresh.journal.replaced).toMatch(/replaced-/);
    expect(readFileSync(join(fresh.journal.replaced, 'journal.log')).equals(b)).toBe(true);
  }, 60_000);

  it('snapshot.json carries a checksum: an edited client-ID sequence is refused', async () => {
    r = await rig();
    const runner = r.runner();
    await runner.start();
    await trade(r, runner, 0, 6);
    await runner.stop('end');
    const p = join(r.journalDir, 'snapshot.json');
    const text = readFileSync(p, 'utf8');
    const edited = text.replace(/\\"sequence\\":(\d+)/, (_m, n: string) => `\\"sequence\\":${Number(n) - 1}`);
    expect(edited).not.toBe(text);
    writeFileSync(p, edited);
    expect(() => r!.runner()).toThrow(/snapshot\.json: damaged, its checksum does not match.*--new-journal/);
  }, 60_000);
});

describe('the journal belongs to the account (item 5)', () => {
  it("after a sandbox restart (the account reset): the journal ahead of the account is refused naming both transactions; --new-journal starts afresh, without the previous run's trades", async () => {
    r = await rig();
    const first = r.runner();
    await first.start();
    await trade(r, first, 0, 12);
    await first.stop('end');
    const journalLast = Journal.read(r.journalDir).lastTransactionID;
    // The sandbox restarts: the same account ID, transactions from 1 again.
    const again = await startSandbox({ heartbeatMs: 200 });
    extra.push(again);
    const http = new V20Http({ baseUrl: again.url, log: quiet, retryBaseMs: 20 });
    const o = {
      assemble: first.o.assemble,
      strategy: first.o.strategy,
      name: 'ping-pong',
      params: first.o.params,
      http,
      rest: new V20Rest(http),
      accountID: r.accountID,
      instruments: loadInstruments(),
      journalDir: r.journalDir,
      log: quiet,
      statusEveryMs: 0,
      warmup: 0,
    };
    const accountLast = (await o.rest.summary(r.accountID)).lastTransactionID;
    const stale = new Runner(o);
    const err = await stale.start().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    console.log(`[journal ownership] ${err?.message}`);
    expect(err).toBeInstanceOf(RunnerError);
    expect(err!.message).toContain(
      `its last transaction is ${journalLast}, the account's last is ${accountLast}`,
    );
    expect(err!.message).toContain('--new-journal');
    expect(Number(journalLast)).toBeGreaterThan(Number(accountLast));
    // The account moved past the journal's last ID with other transactions: refused by content.
    for (let i = 0; i < 8; i++)
      await o.rest.createOrder(r.accountID, {
        type: 'LIMIT',
        instrument: 'EUR_USD',
        units: '1000',
        price: '1.0',
        timeInForce: 'GTC',
      } as never);
    const err2 = await new Runner(o).start().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err2?.message).toMatch(
      new RegExp(`its transaction ${journalLast} is \\w+ at .*; the account's transaction ${journalLast} is`),
    );
    const fresh = new Runner({ ...o, newJournal: true });
    await fresh.start();
    const res = await fresh.stop('end');
    expect(res.summary.trades).toBe(0);
    expect(res.recovered.restoredState).toBe(false);
  }, 60_000);

  it('a journal written for another account is refused naming both accounts', async () => {
    r = await rig({ accounts: [{ id: '101-001-0000001-001' }, { id: '101-001-0000001-002' }] });
    const first = r.runner();
    await first.start();
    await first.stop('end');
    const other = r.runner({ accountID: '101-001-0000001-002' });
    await expect(other.start()).rejects.toThrow(
      /does not belong to account 101-001-0000001-002: it was written for account 101-001-0000001-001/,
    );
  }, 30_000);
});

describe('orders with an unknown outcome (item 6)', () => {
  it('an order whose submission and lookups all failed is looked up again while running: found absent, the strategy gets a reject and trades again', async () => {
    r = await rig();
    const runner = r.runner({ strategy: waiter as never, name: 'waiter', params: {}, lookupBaseMs: 50 });
    await runner.start();
    await until(() => r!.sandbox.stats().streamConnections >= 2, 'both streams connected'); // before every request fails
    r.sandbox.setFaults({ errorRate: 1, seed: 3 });
    const path = pricePath(3);
    r.sandbox.setTime(path[0]!.time);
    r.sandbox.pushPrice(path[0]!);
    await until(() => runner.unknownCount === 1, 'the submission to end with an unknown outcome', 30_000);
    r.sandbox.setFaults({});
    await until(
      () => (runner.state as { rejected: string[] }).rejected.length === 1,
      'the strategy to learn the outcome',
      30_000,
    );
    for (const p of path.slice(1)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
    }
    await until(() => (runner.state as { filled: number }).filled === 1, 'the next order to fill', 30_000);
    await settle(r, runner);
    const res = await runner.stop('end');
    const orders = (await accountTransactions(r)).filter((t) => t.type === 'MARKET_ORDER');
    const state = runner.state as { orders: number; filled: number; rejected: string[] };
    console.log(
      `[unknown outcome] strategy ${JSON.stringify(state)}; account orders ${orders.length}; unconfirmed at stop ${Journal.read(r.journalDir).intents.length}`,
    );
    expect(state.rejected).toEqual(['FXFLOW_NOT_PLACED']);
    expect(state.orders).toBe(2);
    expect(orders.length).toBe(1);
    expect(res.intents).toBe(2);
    expect(Journal.read(r.journalDir).intents).toEqual([]);
  }, 90_000);

  it('at a restart, a market order that never reached the broker and is older than --max-intent-age is reported, not sent; a recent one is sent', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const j = Journal.open(r.journalDir);
    j.append([
      { k: 'intent', intent: market('decided-75s-ago'), at: 0, wall: Date.now() - 75_000 },
      { k: 'intent', intent: market('decided-just-now'), at: 0, wall: Date.now() },
    ]);
    j.close();
    const runner = r.runner({ maxIntentAgeMs: 30_000 });
    await runner.start();
    await settle(r, runner);
    const res = await runner.stop('end');
    const sent = (await accountTransactions(r, start)).filter((t) => t.type === 'MARKET_ORDER').map(cidOf);
    console.log(`[max intent age] sent ${JSON.stringify(sent)}; recovered ${JSON.stringify(res.recovered)}`);
    expect(sent).toEqual(['decided-just-now']);
    expect(res.recovered).toMatchObject({ lookedUp: 2, resubmitted: 1, expired: 1 });
    expect(Journal.read(r.journalDir).intents).toEqual([]);
  }, 30_000);
});
