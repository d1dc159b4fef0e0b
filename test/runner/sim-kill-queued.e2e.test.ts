import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import reversing from './reversing-strategy.ts';
import { pricePath, rig, startFxflowRun, until, waitTicks, type FxflowRun, type Rig } from './harness.ts';

// The kill switch with --broker sim, engaged while an order of the strategy waits in the simulator
// for its next price (a market order fills at the first price after it was sent). The rule of
// issue 24: none of the strategy's orders fills after the switch engaged; the queued one is dropped
// (a RISK_KILL_SWITCH_ENGAGED reject, settled in the journal) and only the switch's closes fill.

let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await r?.close();
  r = undefined;
});

const path = pricePath(12);
const opts = {
  broker: 'sim' as const,
  strategy: reversing as never,
  name: 'reversing',
  params: { every: 1, units: 1000 },
};
const x = (t: Transaction, k: string): unknown => (t as unknown as Record<string, unknown>)[k];
const clientID = (t: Transaction): string | undefined =>
  (x(t, 'clientExtensions') as { id?: string } | undefined)?.id;

async function push(rg: Rig, runner: Runner, i: number): Promise<void> {
  rg.sandbox.setTime(path[i]!.time);
  rg.sandbox.pushPrice(path[i]!);
  await waitTicks(runner, runner.ticks + 1);
}

describe('--broker sim kill switch with an order of the strategy queued in the simulator', () => {
  // Named 'kill' or 'exit', the strategy's client IDs (`kill-<run>-<n>`) once passed for the kill
  // switch's own: its queued order was kept and filled. The runner's IDs are in a reserved namespace now.
  it.each(['reversing', 'kill', 'exit'])(
    "drops the queued order of a strategy named '%s' (RISK_KILL_SWITCH_ENGAGED, settled) and fills only its own closes",
    async (name) => {
      r = await rig();
      const runner = r.runner({ ...opts, name });
      await runner.start();
      const seen: Transaction[] = [];
      runner.risk!.transactions$.subscribe((t) => seen.push(t));
      for (let i = 0; i < 4; i++) await push(r, runner, i);
      const sim = runner.sim!;
      // The reversing strategy answered the last price with an order that waits for the next one.
      const queued = sim.queuedMarket('EUR_USD').map((q) => q.clientID);
      const position = sim.ledger.position('EUR_USD');
      expect(queued).toHaveLength(1);
      expect(position.long + position.short).not.toBe(0);
      const lastBefore = Number(sim.ledger.lastTransactionID);

      const stopped = runner.kill('test');
      // The switch's close waits for the next price: it comes after the switch engaged.
      r.sandbox.setTime(path[4]!.time);
      r.sandbox.pushPrice(path[4]!);
      const res = await stopped;

      const after = Journal.read(r.journalDir).transactions.filter((t) => Number(t.id) > lastBefore);
      const fills = after.filter((t) => t.type === 'ORDER_FILL');
      const created = after.filter((t) => t.type === 'MARKET_ORDER');
      const rejects = seen.filter((t) => x(t, 'rejectReason') === 'RISK_KILL_SWITCH_ENGAGED');
      console.log(
        `[sim kill, queued order, strategy ${name}] queued at the kill: ${queued.join(', ')}; after it: ${after.map((t) => `${t.id} ${t.type} ${String(x(t, 'reason'))} ${clientID(t) ?? ''}`).join(', ')}; kill-switch rejects: ${rejects.map(clientID).join(', ')}`,
      );
      expect(res.reason).toMatch(/kill switch/);
      // No order of the strategy reached the simulated account after the switch engaged...
      expect(created.filter((t) => clientID(t) === queued[0])).toEqual([]);
      expect(created.every((t) => x(t, 'reason') === 'POSITION_CLOSEOUT')).toBe(true);
      expect(fills.length).toBeGreaterThan(0);
      expect(fills.every((t) => x(t, 'reason') === 'MARKET_ORDER_POSITION_CLOSEOUT')).toBe(true);
      // ...the dropped one was answered as refused, and settled: nothing is sent again at a restart.
      expect(rejects.map(clientID)).toEqual(queued);
      expect(Journal.read(r.journalDir).intents).toEqual([]);
      expect(sim.queuedMarketOrders()).toBe(0);
      expect(sim.ledger.trades.size).toBe(0);
    },
    30_000,
  );
});

describe('fxflow run --broker sim: kill -USR2 with an order of the strategy queued in the simulator', () => {
  it("the process drops it and ends flat with exit 0: only the kill switch's close fills after the signal", async () => {
    r = await rig();
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-sim-kill-queued-'));
    run = await startFxflowRun(
      r.sandbox,
      'test/runner/reversing-strategy.ts',
      ['--broker', 'sim', '--journal', journal, '--log-file', join(journal, 'run.log')],
      1,
    );
    for (let i = 0; i < 4; i++) {
      r.sandbox.setTime(path[i]!.time);
      r.sandbox.pushPrice(path[i]!);
    }
    // Each price fills the order the previous one made and makes the next: the fill at the 4th price, 1 order waiting (unconfirmed).
    // The waiting one has no transaction yet: between the 4th fill's record and its intent's confirmation
    // (a few writes apart in the running process) the journal holds the filled intent unconfirmed.
    await until(() => {
      const j = Journal.read(journal);
      const waiting = j.intents[0]?.intent.id;
      return (
        j.transactions.some((t) => t.type === 'ORDER_FILL' && Date.parse(t.time) === path[3]!.time) &&
        j.intents.length === 1 &&
        !j.transactions.some((t) => clientID(t) === waiting)
      );
    }, 'the fill at the 4th price and an order waiting for the next one').catch((e: unknown) => {
      const j = Journal.read(journal);
      throw new Error(
        `${(e as Error).message}: ${j.transactions.map((t) => t.type).join(',')} intents ${j.intents.length}; ${run!.err()}`,
      );
    });
    const before = Journal.read(journal);
    const queued = before.intents[0]!.intent.id;
    const lastBefore = Number(before.lastTransactionID);
    run.proc.kill('SIGUSR2');
    await until(() => run!.err().includes('KILL SWITCH ENGAGED'), 'the kill switch engaged');
    r.sandbox.setTime(path[4]!.time);
    r.sandbox.pushPrice(path[4]!);
    const code = await run.exited;
    const err = run.err();
    run = undefined;
    const after = Journal.read(journal);
    const added = after.transactions.filter((t) => Number(t.id) > lastBefore);
    console.log(
      `[fxflow run --broker sim, kill -USR2] queued ${queued}; exit ${code}; after the signal: ${added.map((t) => `${t.id} ${t.type} ${String(x(t, 'reason'))} ${clientID(t) ?? ''}`).join(', ')}; ${/KILL SWITCH ENGAGED[^\n]*/.exec(err)?.[0] ?? ''}`,
    );
    expect(code).toBe(0);
    expect(err).toMatch(
      /KILL SWITCH ENGAGED \(SIGUSR2\).*1 intent\(s\) of it waiting to be sent are dropped/,
    );
    expect(added.filter((t) => clientID(t) === queued)).toEqual([]);
    expect(added.filter((t) => t.type === 'MARKET_ORDER').map((t) => x(t, 'reason'))).toEqual([
      'POSITION_CLOSEOUT',
    ]);
    expect(added.filter((t) => t.type === 'ORDER_FILL').map((t) => x(t, 'reason'))).toEqual([
      'MARKET_ORDER_POSITION_CLOSEOUT',
    ]);
    expect(after.intents).toEqual([]);
  }, 60_000);
});
