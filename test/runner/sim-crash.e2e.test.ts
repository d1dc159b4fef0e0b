import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { duplicateOrders, pricePath, rig, startFxflowRun, type FxflowRun, type Rig } from './harness.ts';

let r: Rig | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  await r?.close();
  r = undefined;
});

/** Starts `fxflow run --broker sim` (ping-pong) on the sandbox; resolves once it is running with its pricing stream connected. */
const startRunner = (sandbox: Rig['sandbox'], journal: string, log: string): Promise<FxflowRun> =>
  startFxflowRun(
    sandbox,
    'test/runner/ping-pong-strategy.ts',
    ['--broker', 'sim', '--journal', journal, '--log-file', log, '--max-intent-age', '600'],
    1,
  ); // resubmission after a kill is the point here

const cid = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;

describe('--broker sim: kill -9 and restart', () => {
  it('10 SIGKILLs at random points: one transaction sequence, every intent one order, 0 duplicates, the strategy and the simulator agree', async () => {
    r = await rig();
    const accountBefore = (await r.rest.summary(r.accountID)).lastTransactionID;
    const log = join(r.journalDir, 'run.log');
    let run = await startRunner(r.sandbox, r.journalDir, log);
    child = run.proc;
    const path = pricePath(900);
    let kills = 0;
    let i = 0;
    let seed = 4242;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    while (kills < 10 && i < path.length) {
      const p = path[i++]!;
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      // Every 3rd price makes an order (filled by the simulator at the next price): a kill a few ms
      // later lands between the journal writes of the intent, its order, its fill.
      const killNow = i % 3 === 0 && rand() < 0.5;
      await new Promise((res) => setTimeout(res, Math.floor(rand() * (killNow ? 6 : 30))));
      if (killNow) {
        run.proc.kill('SIGKILL');
        await run.exited;
        kills++;
        run = await startRunner(r.sandbox, r.journalDir, log);
        child = run.proc;
      }
    }
    // A few more prices for the last run, then a graceful stop; then a graceful restart, whose
    // pricing stream starts with the last price again (the stop's snapshot has seen it), and a few
    // more prices.
    const more = async (n: number): Promise<void> => {
      for (let k = 0; k < n && i < path.length; k++) {
        const p = path[i++]!;
        r!.sandbox.setTime(p.time);
        r!.sandbox.pushPrice(p);
        await new Promise((res) => setTimeout(res, 100));
      }
    };
    // Enough trading for the checks to mean something, however slow the machine made the runner
    // between kills: prices until the journal holds more than 20 orders (the simulator's own).
    const ordersSoFar = (): number =>
      Journal.read(r!.journalDir).transactions.filter((t) => t.type === 'MARKET_ORDER').length;
    while (ordersSoFar() <= 20 && i < path.length) await more(3);
    await more(2);
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const atStop = Journal.read(r.journalDir).state?.state as { ticks: number };
    run = await startRunner(r.sandbox, r.journalDir, log);
    child = run.proc;
    await more(2);
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);

    const j = Journal.read(r.journalDir);
    const txs = j.transactions;
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER');
    const clientOrders = new Set(orders.map(cid).filter((x) => x !== undefined));
    const fills = txs.filter((t) => t.type === 'ORDER_FILL').length;
    const lost = txs.filter(
      (t) => t.type === 'ORDER_CANCEL' && (t as { reason?: string }).reason === 'INTERNAL_SERVER_ERROR',
    ).length;
    const state = j.state?.state as {
      ticks: number;
      orders: number;
      fills: number;
      last: number;
      again: number;
    };
    const logText = readFileSync(log, 'utf8');
    const resubmitted = logText.split('journaled intent never reached the broker').length - 1;
    const found = logText.split('journaled intent had reached the broker').length - 1;
    // The simulated account as a restart would restore it, against the fold the strategy's view made.
    const last = txs.at(-1)!;
    console.log(
      `[sim crash] ${kills} SIGKILLs and a graceful restart over ${i} prices (+1: the sandbox's opening price); the strategy saw ${state.ticks} ticks, ${state.again} of them a second time; ` +
        `${txs.length} simulator transactions (IDs 1..${last.id}), ${clientOrders.size} orders, ${fills} fills, ${duplicateOrders(txs)} duplicates; ` +
        `queued intents at a kill: ${resubmitted} resubmitted, ${found} found in the journal; market orders cancelled on restore (killed between order and fill): ${lost}; strategy state ${JSON.stringify(state)}`,
    );
    expect(kills).toBe(10);
    // One sequence across 11 processes: no gap, no repeat (a fresh simulator would start again at 1).
    expect(txs.map((t) => t.id)).toEqual(txs.map((_, k) => String(k + 1)));
    expect(txs.filter((t) => t.type === 'CREATE')).toHaveLength(1);
    expect(duplicateOrders(txs)).toBe(0);
    // Every intent the strategy made (journaled with its state) became exactly one order.
    expect(state.orders).toBe(clientOrders.size);
    expect(state.fills).toBe(fills);
    expect(clientOrders.size).toBeGreaterThan(20);
    expect(j.intents).toEqual([]);
    // No price reached the strategy twice: not the latest price that each restart's pricing stream
    // starts with (after the graceful restart the strategy saw exactly the 2 new prices), nor any
    // other. (A SIGKILL can lose the ticks the strategy handled after its last snapshot, which is
    // journaled with each intent: the count is at most the prices pushed, plus the opening price.)
    expect(state.again).toBe(0);
    expect(state.ticks).toBe(atStop.ticks + 2);
    expect(state.last).toBe(path[i - 1]!.time);
    expect(state.ticks).toBeLessThanOrEqual(i + 1);
    // Nothing ever reached the account.
    expect((await r.rest.summary(r.accountID)).lastTransactionID).toBe(accountBefore);
  }, 240_000);
});
