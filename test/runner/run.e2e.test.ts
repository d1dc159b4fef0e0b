import { afterEach, describe, expect, it } from 'vitest';
import { accountTransactions, duplicateOrders, pricePath, rig, settle, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('runner against the sandbox', () => {
  it('reconciles, trades on live ticks, journals every transaction and stops with a report', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const runner = r.runner();
    await runner.start();
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    const res = await runner.stop('test end');
    const txs = await accountTransactions(r, start);
    const journaled = runner.journal.contents().transactions.map((t) => t.id);
    expect(journaled).toEqual(txs.map((t) => t.id));
    expect(duplicateOrders(txs)).toBe(0);
    expect(res.intents).toBe(10);
    expect(txs.filter((t) => t.type === 'ORDER_FILL')).toHaveLength(10);
    expect(res.report).toMatch(/ping-pong/);
    console.log(
      `[run] ${res.intents} intents, ${txs.length} transactions, all journaled; latency p50 ${res.latency.p50.toFixed(3)} ms p99 ${res.latency.p99.toFixed(3)} ms`,
    );
    console.log(res.report);
  });
});

describe('recovery of journaled intents', () => {
  it('an unconfirmed intent that reached the broker is found by @clientID and not resubmitted; one that did not is submitted once', async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015 });
    // A first run journals its baseline, then stops.
    const first = r.runner();
    await first.start();
    await first.stop('first');
    // As if a run had crashed: two intents journaled, only the first reached the broker.
    const { Journal } = await import('../../src/runner/order-path/journal.ts');
    const j = Journal.open(r.journalDir);
    const sent = {
      kind: 'order' as const,
      id: 'ping-pong-crash-1',
      request: { type: 'MARKET', instrument: 'EUR_USD', units: '1000' } as never,
    };
    const lost = {
      kind: 'order' as const,
      id: 'ping-pong-crash-2',
      request: { type: 'MARKET', instrument: 'EUR_USD', units: '-1000' } as never,
    };
    j.intent(sent, 0);
    j.intent(lost, 0);
    j.close();
    await r.rest.createOrder(r.accountID, {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '1000',
      clientExtensions: { id: sent.id },
    } as never);
    const second = r.runner();
    await second.start();
    await settle(r, second);
    const res = await second.stop('second');
    const txs = await accountTransactions(r, start);
    const byClient = (id: string) =>
      txs.filter(
        (t) =>
          t.type === 'MARKET_ORDER' &&
          (t as { clientExtensions?: { id?: string } }).clientExtensions?.id === id,
      ).length;
    console.log(
      `[recovery] looked up ${res.recovered.lookedUp}, resubmitted ${res.recovered.resubmitted}, replayed ${res.recovered.replayed}; orders per client ID: ${sent.id}=${byClient(sent.id)}, ${lost.id}=${byClient(lost.id)}`,
    );
    expect(res.recovered.lookedUp).toBe(2);
    expect(res.recovered.resubmitted).toBe(1);
    expect(byClient(sent.id)).toBe(1);
    expect(byClient(lost.id)).toBe(1);
    expect(duplicateOrders(txs)).toBe(0);
    expect(res.recovered.restoredState).toBe(true);
  });

  it('two unconfirmed partial closes of one trade: the one whose close the journal holds is not sent again, the other is sent once', async () => {
    r = await rig();
    r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015 });
    const opened = await r.rest.createOrder(r.accountID, {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '3000',
    } as never);
    const tradeID = (opened as { orderFillTransaction: { tradeOpened: { tradeID: string } } })
      .orderFillTransaction.tradeOpened.tradeID;
    const first = r.runner();
    await first.start();
    await settle(r, first);
    await first.stop('first');
    // As if a run had crashed: a partial close journaled, sent, its transactions journaled; then a
    // second partial close journaled and never sent; neither confirmed. Closes carry no client ID.
    const { Journal } = await import('../../src/runner/order-path/journal.ts');
    const j = Journal.open(r.journalDir);
    const sent = {
      kind: 'closeTrade' as const,
      id: 'ping-pong-close-1',
      tradeSpecifier: tradeID,
      units: '1000',
    };
    const lost = {
      kind: 'closeTrade' as const,
      id: 'ping-pong-close-2',
      tradeSpecifier: tradeID,
      units: '1000',
    };
    j.intent(sent, 0);
    await r.rest.closeTrade(r.accountID, tradeID, '1000');
    for (const t of await accountTransactions(r, j.lastTransactionID)) j.transaction(t);
    j.intent(lost, 0);
    j.close();
    const second = r.runner();
    await second.start();
    await settle(r, second);
    const res = await second.stop('second');
    const trade = await r.rest.trade(r.accountID, tradeID);
    console.log(
      `[recovery, closes] looked up ${res.recovered.lookedUp}, resubmitted ${res.recovered.resubmitted}; trade ${tradeID} at ${trade.currentUnits} units (3000 - 1000 before the crash - 1000 resubmitted)`,
    );
    expect(res.recovered.lookedUp).toBe(2);
    expect(res.recovered.resubmitted).toBe(1);
    expect(trade.currentUnits).toBe('1000');
  });
});

describe('reconciliation at start', () => {
  it('open trades and pending orders that exist before the first start are in the strategy view', async () => {
    r = await rig();
    r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015 });
    await r.rest.createOrder(r.accountID, { type: 'MARKET', instrument: 'EUR_USD', units: '2500' } as never);
    await r.rest.createOrder(r.accountID, {
      type: 'LIMIT',
      instrument: 'EUR_USD',
      units: '700',
      price: '1.05000',
      timeInForce: 'GTC',
    } as never);
    const { account } = await r.rest.account(r.accountID);
    const runner = r.runner();
    await runner.start();
    const l = runner.portfolio.ledger;
    const trade = [...l.trades.values()][0]!;
    console.log(
      `[reconcile] balance ${account.balance}, ${l.trades.size} trade (${trade.unitsNum} @ ${trade.price}), ${l.pendingOrders.size} pending order, last transaction ${l.lastTransactionID}`,
    );
    expect(l.trades.size).toBe(1);
    expect(trade.unitsNum).toBe(2500);
    expect(l.pendingOrders.size).toBe(1);
    expect(l.lastTransactionID).toBe(account.lastTransactionID);
    // The strategy sees the position: ping-pong sells what is long on its first order.
    for (const p of pricePath(3)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    const res = await runner.stop('end');
    const fills = (await accountTransactions(r, account.lastTransactionID)).filter(
      (t) => t.type === 'ORDER_FILL',
    );
    expect(res.intents).toBe(1);
    expect(fills.map((t) => (t as { units?: string }).units)).toEqual(['-1000']);
    expect(runner.portfolio.ledger.position('EUR_USD').long).toBe(1500);
  });
});
