import { afterEach, describe, expect, it } from 'vitest';
import { loadInstruments } from '../../src/domain/instrument.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { ShadowBook } from '../../src/runner/recording/shadow.ts';
import { accountTransactions, pricePath, rig, settle, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

type Fill = Transaction & {
  orderID: string;
  units: string;
  clientOrderID?: string;
  tradeOpened?: { tradeID: string; units: string };
  tradeReduced?: { tradeID: string; units: string };
  tradesClosed?: { tradeID: string; units: string }[];
};

/** Each client order's fill, as what it did to the trades: `reduce 4 -1000`, `close 4 -500, open -500`. */
function effects(txs: readonly Transaction[]): Map<string, string> {
  const byOrder = new Map<string, string>();
  const out = new Map<string, string>();
  for (const t of txs) {
    const cid = (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;
    if (t.type === 'MARKET_ORDER' && cid !== undefined) byOrder.set(t.id, cid);
    if (t.type !== 'ORDER_FILL') continue;
    const f = t as Fill;
    const owner = byOrder.get(f.orderID);
    if (owner === undefined) continue;
    const parts = [
      ...(f.tradesClosed ?? []).map((c) => `close ${c.tradeID} ${c.units}`),
      ...(f.tradeReduced ? [`reduce ${f.tradeReduced.tradeID} ${f.tradeReduced.units}`] : []),
      ...(f.tradeOpened ? [`open ${f.tradeOpened.units}`] : []),
    ];
    out.set(owner, parts.join(', '));
  }
  return out;
}

describe('--shadow with positions that exist before the run', () => {
  it("the shadow simulator starts from the account's open trade and pending orders: reducing and closing intents do to it what they do at the account", async () => {
    r = await rig();
    r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015 });
    // Before the runner starts: a long of 2500 with a TP and an SL far away, and a pending limit.
    const opened = await r.rest.createOrder(r.accountID, {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '2500',
      takeProfitOnFill: { price: '1.15000' },
      stopLossOnFill: { price: '1.05000' },
      tradeClientExtensions: { id: 'before-run' },
    } as never);
    const tradeID = (opened as { orderFillTransaction: { tradeOpened: { tradeID: string } } })
      .orderFillTransaction.tradeOpened.tradeID;
    await r.rest.createOrder(r.accountID, {
      type: 'LIMIT',
      instrument: 'EUR_USD',
      units: '700',
      price: '1.05000',
      timeInForce: 'GTC',
    } as never);
    const { account } = await r.rest.account(r.accountID);
    const runner = r.runner({ shadow: true });
    await runner.start();

    // The shadow simulator holds the account as it was: the trade (ID, units, price), its TP and SL, the limit.
    const sim = runner.shadowBook!.sim;
    const trade = sim.ledger.trades.get(tradeID)!;
    expect([trade.unitsNum, trade.price, trade.clientExtensions?.id]).toEqual([
      2500,
      account.trades![0]!.price,
      'before-run',
    ]);
    expect([...sim.ledger.pendingOrders.keys()].sort()).toEqual(account.orders!.map((o) => o.id).sort());
    expect(sim.ledger.lastTransactionID).toBe(account.lastTransactionID);

    // ping-pong sells 1000 while long: 2500 → 1500 → 500 → closed and 500 short → bought back...
    for (const p of pricePath(18)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    // One more price: the simulator fills a market order at the price after the one that prompted it.
    r.sandbox.pushPrice({ ...pricePath(19)[18]!, instrument: 'EUR_USD' });
    await settle(r, runner);
    await new Promise((res) => setTimeout(res, 50));
    const res = await runner.stop('end');
    const live = effects(await accountTransactions(r, account.lastTransactionID));
    const shadow = effects(runner.shadowBook!.txs);
    console.log(
      `[shadow, seeded] trade ${tradeID} of 2500 before the run; fills at the account: ${[...live.values()].join(' | ')}; in the simulator: ${[...shadow.values()].join(' | ')}`,
    );
    console.log(`[shadow, seeded] ${res.shadow?.split('\n')[0]}`);
    expect(live.size).toBe(6);
    // The first sells reduce the pre-existing trade, the third closes it and opens the rest short,
    // at the account and in the simulator alike (same trade IDs, same units).
    expect([...live.values()].slice(0, 3)).toEqual([
      `reduce ${tradeID} -1000`,
      `reduce ${tradeID} -1000`,
      `close ${tradeID} -500, open -500`,
    ]);
    expect(shadow).toEqual(live);
    expect(res.shadow).toMatch(/; trades opened, reduced or closed differ for 0/);
    // The closed trade's TP and SL were cancelled in both, the limit rests in both.
    const cancels = (txs: readonly Transaction[]) =>
      txs
        .filter(
          (t) => t.type === 'ORDER_CANCEL' && (t as { reason?: string }).reason === 'LINKED_TRADE_CLOSED',
        )
        .map((t) => (t as { orderID: string }).orderID)
        .sort();
    expect(cancels(runner.shadowBook!.txs)).toEqual(
      cancels(await accountTransactions(r, account.lastTransactionID)),
    );
    expect(cancels(runner.shadowBook!.txs)).toHaveLength(2);
  });
});

describe('the shadow simulator and instruments it does not know', () => {
  it('leaves out trades and orders in instruments missing from data/instruments.json (with their dependent orders), and names them', () => {
    const at = '2024-01-02T10:00:00.000000000Z';
    const book = new ShadowBook({
      instruments: loadInstruments(),
      currency: 'USD',
      balance: '1000.0000',
      marginRate: '0.02',
      hedging: false,
      account: {
        lastTransactionID: '20',
        balance: '1000.0000',
        trades: [
          {
            id: '5',
            instrument: 'XAU_XYZ',
            price: '2000.00',
            openTime: at,
            currentUnits: '1',
            realizedPL: '0.0000',
            takeProfitOrderID: '6',
          },
          {
            id: '8',
            instrument: 'EUR_USD',
            price: '1.10000',
            openTime: at,
            currentUnits: '-100',
            realizedPL: '0.0000',
          },
        ],
        orders: [
          {
            id: '6',
            type: 'TAKE_PROFIT',
            tradeID: '5',
            price: '2100.00',
            createTime: at,
            state: 'PENDING',
            timeInForce: 'GTC',
          },
          {
            id: '12',
            type: 'LIMIT',
            instrument: 'XAU_XYZ',
            units: '1',
            price: '1900.00',
            createTime: at,
            state: 'PENDING',
            timeInForce: 'GTC',
          },
          {
            id: '15',
            type: 'LIMIT',
            instrument: 'EUR_USD',
            units: '100',
            price: '1.05000',
            createTime: at,
            state: 'PENDING',
            timeInForce: 'GTC',
          },
        ] as never,
      },
    });
    expect(book.leftOut).toEqual(['trade 5 (XAU_XYZ)', 'order 6 (of trade 5)', 'order 12 (XAU_XYZ)']);
    expect([...book.sim.ledger.trades.keys()]).toEqual(['8']);
    expect([...book.sim.ledger.pendingOrders.keys()]).toEqual(['15']);
    expect(book.sim.ledger.lastTransactionID).toBe('20');
  });
});
