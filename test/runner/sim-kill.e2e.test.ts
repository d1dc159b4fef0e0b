import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import bracket from './bracket-strategy.ts';
import { pricePath, rig, waitTicks, type Rig } from './harness.ts';

// The kill switch with --broker sim: its position closes wait in the simulator for the next price.
// The run waits for them (at most 5 s, as --flatten-on-exit does) before it stops, so the account is
// flat at the stop and nothing is sent again at the next start.

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const path = pricePath(20);
const opts = { broker: 'sim' as const, strategy: bracket as never, name: 'bracket', params: bracket.params };
const x = (t: Transaction, k: string): unknown => (t as unknown as Record<string, unknown>)[k];

/** Pushes path[from..to) and waits until the runner has handled each. */
async function push(rg: Rig, runner: Runner, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    rg.sandbox.setTime(path[i]!.time);
    rg.sandbox.pushPrice(path[i]!);
    await waitTicks(runner, runner.ticks + 1);
  }
}

/** A run of the bracket strategy with an open trade (TP, SL) and a pending limit, and a kill file. */
async function opened(rg: Rig): Promise<{ runner: Runner; kill: string }> {
  const kill = join(rg.journalDir, 'KILL');
  const runner = rg.runner({ ...opts, killFile: kill });
  await runner.start();
  await push(rg, runner, 0, 5);
  return { runner, kill };
}

describe('--broker sim kill switch', () => {
  it('waits for its closes to fill at the next price: flat at the stop, nothing resubmitted at the next start', async () => {
    r = await rig();
    const { runner, kill } = await opened(r);
    const before = {
      trades: runner.sim!.ledger.trades.size,
      pending: [...runner.sim!.ledger.pendingOrders.values()].map((o) => o.type).sort(),
    };
    const lastBefore = Number(runner.sim!.ledger.lastTransactionID);
    writeFileSync(kill, '');
    expect(existsSync(kill)).toBe(true);
    // The kill file is polled once a second; the next price comes a little after the switch engaged.
    const t0 = Date.now();
    while (!runner.risk!.halted) {
      if (Date.now() - t0 > 5000) throw new Error('the kill switch did not engage');
      await new Promise((res) => setTimeout(res, 10));
    }
    await new Promise((res) => setTimeout(res, 150));
    r.sandbox.setTime(path[5]!.time);
    r.sandbox.pushPrice(path[5]!);
    await runner.done;
    const res = await runner.stop();
    const j = Journal.read(r.journalDir);
    const added = j.transactions.filter((t) => Number(t.id) > lastBefore);
    const after = {
      trades: runner.sim!.ledger.trades.size,
      pending: runner.sim!.ledger.pendingOrders.size,
      portfolioTrades: runner.portfolio.ledger.trades.size,
    };

    // The kill switch halted the journal: the operator clears the halt (fxflow journal clear-halt) to trade again.
    expect(j.halt?.why).toMatch(/^file .*KILL$/);
    const clearing = Journal.open(r.journalDir);
    clearing.clearHalt();
    clearing.close();
    const second = r.runner(opts);
    await second.start();
    const recovered = {
      trades: second.sim!.ledger.trades.size,
      pending: second.sim!.ledger.pendingOrders.size,
    };
    await push(r, second, 6, 8);
    const res2 = await second.stop('after');
    const later = Journal.read(r.journalDir).transactions.filter(
      (t) => Number(t.id) > Number(added.at(-1)?.id ?? lastBefore),
    );
    console.log(
      `[sim kill switch] before: ${before.trades} trade(s), pending ${before.pending.join(', ')}; the switch's transactions: ${added.map((t) => `${t.id} ${t.type} ${String(x(t, 'reason'))}`).join(', ')}; ` +
        `at the stop ${after.trades} trades, ${after.pending} pending orders, ${j.intents.length} unconfirmed intents; next start: recovered ${JSON.stringify(res2.recovered)}, ${later.length} new transactions`,
    );
    expect(before.trades).toBeGreaterThan(0);
    expect(before.pending).toContain('LIMIT');
    expect(res.reason).toMatch(/kill switch/);
    expect(after).toEqual({ trades: 0, pending: 0, portfolioTrades: 0 });
    expect(
      added.some((t) => t.type === 'ORDER_FILL' && x(t, 'reason') === 'MARKET_ORDER_POSITION_CLOSEOUT'),
    ).toBe(true);
    expect(j.intents).toEqual([]);
    expect(recovered).toEqual({ trades: 0, pending: 0 });
    expect(res2.recovered.resubmitted).toBe(0);
    expect(res2.recovered.lookedUp).toBe(0);
    expect(later).toEqual([]);
  }, 30_000);

  it('waits at most 5 s: with no price its closes stay unconfirmed and are sent at the next start', async () => {
    r = await rig();
    const { runner } = await opened(r);
    const t0 = Date.now();
    const res = await runner.kill('test');
    const waited = Date.now() - t0;
    const j = Journal.read(r.journalDir);
    console.log(
      `[sim kill switch, no price] stopped after ${waited} ms with ${runner.sim!.ledger.trades.size} trade(s) open and ${j.intents.length} unconfirmed intent(s): ${j.intents.map((i) => i.intent.kind).join(', ')}`,
    );
    expect(res.reason).toMatch(/kill switch/);
    expect(waited).toBeGreaterThanOrEqual(4900);
    expect(waited).toBeLessThan(8000);
    expect(j.intents.map((i) => i.intent.kind)).toEqual(['closePosition']);

    const second = r.runner(opts);
    await second.start();
    await push(r, second, 5, 6);
    const res2 = await second.stop('after');
    expect(res2.recovered.resubmitted).toBe(1);
    expect(second.sim!.ledger.trades.size).toBe(0);
  }, 30_000);
});
