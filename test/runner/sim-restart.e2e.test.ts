import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimAccountState } from '../../src/adapters/sim/seed.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import bracket from './bracket-strategy.ts';
import { duplicateOrders, pricePath, pushPrices, rig, waitTicks, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const path = pricePath(12);

/** Pushes `path[from..to)` and waits until the runner has handled each. */
const prices = (rg: Rig, runner: Runner, from: number, to: number, seen: number): Promise<number> =>
  pushPrices(rg, runner, path, from, to, seen);

/** The account part of a simulator's state (its clock and latest prices left out). */
function accountOf(s: SimAccountState): Omit<SimAccountState, 'time' | 'quotes'> {
  const { time: _t, quotes: _q, ...rest } = s;
  return rest;
}

describe('--broker sim across a stop and a restart', () => {
  it('the simulated position, its TP/SL, the pending limit, the balance and the transaction ID sequence survive; an order queued at the stop is sent once after it', async () => {
    r = await rig();
    const accountBefore = (await r.rest.summary(r.accountID)).lastTransactionID;
    const opts = {
      broker: 'sim' as const,
      strategy: bracket as never,
      name: 'bracket',
      params: bracket.params,
    };

    // First run: a trade with a TP and an SL, a pending limit; stopped right after the 4th price,
    // whose market order waits in the simulator for the next price.
    const first = r.runner(opts);
    await first.start();
    await prices(r, first, 0, 4, 0);
    const before = first.sim!.snapshot();
    const queued = first.sim!.queuedMarketOrders();
    await first.stop('first');
    const j1 = Journal.read(r.journalDir);
    const lastBefore = j1.lastTransactionID;
    expect(before.trades).toHaveLength(1);
    expect(before.orders!.map((o) => o.type).sort()).toEqual(['LIMIT', 'STOP_LOSS', 'TAKE_PROFIT']);
    expect(queued).toBe(1);
    expect(j1.intents.map((i) => i.intent.kind)).toEqual(['order']);

    // Restart: the simulator is back as it was, the strategy state too.
    const second = r.runner(opts);
    await second.start();
    const restored = second.sim!.snapshot();
    const l = second.portfolio.ledger;
    console.log(
      `[sim restart] before the stop: trade ${before.trades![0]!.id} ${before.trades![0]!.currentUnits} @ ${before.trades![0]!.price}, orders ${before.orders!.map((o) => `${o.id} ${o.type}`).join(', ')}, balance ${before.balance}, last transaction ${before.lastTransactionID}; ` +
        `after the restart: ${restored.trades!.length} trade, ${restored.orders!.length} orders, balance ${restored.balance}, last ${restored.lastTransactionID}; strategy ${JSON.stringify(second.state)}`,
    );
    expect(accountOf(restored)).toEqual(accountOf(before));
    expect(restored.lastTransactionID).toBe(lastBefore);
    expect([...l.trades.keys()]).toEqual(before.trades!.map((t) => t.id));
    expect([...l.pendingOrders.keys()].sort()).toEqual(before.orders!.map((o) => o.id).sort());
    expect(second.state).toEqual({ ticks: 4, orders: 3, fills: 1 });

    // The next price fills the order that waited at the stop (sent again: it never reached the
    // simulator), with the next transaction IDs; a price through the TP closes the restored trade.
    let seen = await prices(r, second, 4, 5, 0);
    const trade = before.trades![0]!;
    const tp = before.orders!.find((o) => o.type === 'TAKE_PROFIT')! as { id: string; price?: string };
    const sl = before.orders!.find((o) => o.type === 'STOP_LOSS')!;
    r.sandbox.setTime(path[5]!.time);
    r.sandbox.pushPrice({
      instrument: 'EUR_USD',
      bid: Number(tp.price) + 0.0001,
      ask: Number(tp.price) + 0.00025,
    });
    await waitTicks(second, ++seen);
    const res = await second.stop('second');
    const after = Journal.read(r.journalDir).transactions;
    const added = after.filter((t) => Number(t.id) > Number(lastBefore));
    const x = (t: Transaction | undefined, k: string): unknown =>
      (t as unknown as Record<string, unknown> | undefined)?.[k];
    console.log(
      `[sim restart] after the restart: ${added.map((t) => `${t.id} ${t.type}${x(t, 'reason') ? ` ${String(x(t, 'reason'))}` : ''}`).join(', ')}; recovered ${JSON.stringify(res.recovered)}`,
    );
    expect(res.recovered.resubmitted).toBe(1);
    expect(res.recovered.restoredState).toBe(true);
    expect(added.map((t) => [t.id, t.type, x(t, 'reason')])).toEqual([
      [String(Number(lastBefore) + 1), 'MARKET_ORDER', 'CLIENT_ORDER'],
      [String(Number(lastBefore) + 2), 'ORDER_FILL', 'MARKET_ORDER'],
      [String(Number(lastBefore) + 3), 'ORDER_FILL', 'TAKE_PROFIT_ORDER'],
      [String(Number(lastBefore) + 4), 'ORDER_CANCEL', 'LINKED_TRADE_CLOSED'],
    ]);
    expect(x(added[2], 'orderID')).toBe(tp.id);
    expect(x(added[2], 'tradesClosed')).toMatchObject([{ tradeID: trade.id, units: '-1000' }]);
    expect(x(added[3], 'orderID')).toBe(sl.id);
    // One journal, one sequence: IDs 1..N without a gap or a repeat; each client order once.
    expect(after.map((t) => t.id)).toEqual(after.map((_, i) => String(i + 1)));
    expect(duplicateOrders(after)).toBe(0);
    // The balance is the deposit plus the TP's realized P/L, in the simulator and the strategy's view.
    const deposit = (await r.rest.summary(r.accountID)).account.balance;
    const pl = Number(x(added[2], 'pl'));
    expect(pl).toBeGreaterThan(0);
    expect(Number(second.sim!.snapshot().balance)).toBeCloseTo(Number(deposit) + pl, 4);
    expect(second.portfolio.ledger.balance).toBe(second.sim!.ledger.balance);
    expect(second.state).toEqual({ ticks: 6, orders: 3, fills: 3 });
    // The limit still rests; nothing ever reached the account.
    expect([...second.sim!.ledger.pendingOrders.values()].map((o) => o.type)).toEqual(['LIMIT']);
    expect((await r.rest.summary(r.accountID)).lastTransactionID).toBe(accountBefore);
  });

  it("a trailing stop's ratchet survives a stop and a restart (journaled with the strategy snapshot) and triggers at its level", async () => {
    r = await rig();
    const trailer = defineStrategy({
      params: {},
      subscribe: { ticks: ['EUR_USD'] },
      init: () => ({ ticks: 0 }),
      onTick(ctx, s) {
        const ticks = s.ticks + 1;
        return ticks === 1
          ? { state: { ticks }, intents: [ctx.market('EUR_USD', '1000', { trailing: 0.002 })] }
          : { state: { ticks } };
      },
    });
    const opts = { broker: 'sim' as const, strategy: trailer as never, name: 'trailer', params: {} };
    const t0 = Date.UTC(2024, 0, 2, 10, 0);
    const push = async (runner: Runner, k: number, bid: number, seen: number): Promise<number> => {
      r!.sandbox.setTime(t0 + k * 1000);
      r!.sandbox.pushPrice({ instrument: 'EUR_USD', bid, ask: Math.round((bid + 0.00015) * 1e5) / 1e5 });
      await waitTicks(runner, seen + 1);
      return seen + 1;
    };
    const first = r.runner(opts);
    await first.start();
    let seen = 0;
    seen = await push(first, 1, 1.1, seen); // the order
    seen = await push(first, 2, 1.1, seen); // its fill: the stop at 1.10000 - 0.00200
    seen = await push(first, 3, 1.105, seen); // the stop ratchets to 1.10300
    const tsl = [...first.sim!.ledger.pendingOrders.values()].find((o) => o.type === 'TRAILING_STOP_LOSS')!;
    expect(first.sim!.triggerLevel(tsl.id)).toBe(1.103);
    await first.stop('first');

    const second = r.runner(opts);
    await second.start();
    const level = second.sim!.triggerLevel(tsl.id);
    // 1.10200 is below the ratcheted stop (1.10300), above where it started (1.09800).
    seen = await push(second, 4, 1.102, 0);
    const res = await second.stop('second');
    const fill = Journal.read(r.journalDir).transactions.find(
      (t) => t.type === 'ORDER_FILL' && (t as { orderID?: string }).orderID === tsl.id,
    ) as (Transaction & { price: string; reason: string }) | undefined;
    console.log(
      `[sim restart, trailing] stop ${tsl.id} at 1.10300 before the stop, ${level} after the restart; a bid of 1.10200 ${fill ? `filled it (${fill.reason} @ ${fill.price})` : 'did not trigger it'}; ${res.transactions} transactions after the restart`,
    );
    expect(level).toBe(1.103);
    expect(fill?.reason).toBe('TRAILING_STOP_LOSS_ORDER');
    expect(fill?.price).toBe('1.10200');
  });

  it('a --broker sim journal that does not fold (a fill of a trade it never opened) is refused, naming the journal and what to do', async () => {
    r = await rig();
    const j = Journal.open(r.journalDir);
    j.baseline({
      broker: 'sim',
      deposit: '100000',
      lastTransactionID: '0',
      balance: '0',
      pl: '0',
      financing: '0',
      currency: 'USD',
      marginRate: '0.02',
      hedging: false,
      trades: [],
      orders: [],
    });
    j.transaction({
      id: '1',
      type: 'ORDER_FILL',
      time: '2024-01-02T10:00:00.000000000Z',
      orderID: '1',
      instrument: 'EUR_USD',
      units: '-100',
      price: '1.10000',
      tradesClosed: [{ tradeID: '99', units: '-100', realizedPL: '0.0000' }],
      pl: '0.0000',
      accountBalance: '0.0000',
    } as never);
    j.close();
    await expect(r.runner({ broker: 'sim' }).start()).rejects.toThrow(
      `journal ${r.journalDir}: the simulated account cannot be restored from it (transaction 1: reduces unknown trade 99); move the directory away to start the simulated account afresh`,
    );
  });

  it('a --broker sim journal is refused by a --broker v20 run (and the other way round), with the directory named', async () => {
    r = await rig();
    const sim = r.runner({ broker: 'sim' });
    await sim.start();
    await sim.stop('sim');
    await expect(r.runner().start()).rejects.toThrow(
      `journal ${r.journalDir} was written by a --broker sim run and cannot be used with --broker v20; give --journal another directory`,
    );
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-run-'));
    const v20 = r.runner({ journalDir: dir });
    await v20.start();
    await v20.stop('v20');
    await expect(r.runner({ broker: 'sim', journalDir: dir }).start()).rejects.toThrow(
      `journal ${dir} was written by a --broker v20 run and cannot be used with --broker sim; give --journal another directory`,
    );
  });
});
