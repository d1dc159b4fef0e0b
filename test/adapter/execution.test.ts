import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { V20Execution, type SubmissionFailure } from '../../src/adapters/v20/execution.ts';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { startSandbox, type FaultOptions } from '../../src/sandbox/server.ts';

/** Every intent kind, in an order where each step depends on the previous ones. */
const SCRIPT: OrderIntent[] = [
  {
    kind: 'order',
    id: 'x-open',
    request: {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '1000',
      tradeClientExtensions: { id: 'x-trade' },
    },
  },
  {
    kind: 'tradeOrders',
    id: 'x-deps',
    tradeSpecifier: '@x-trade',
    takeProfit: { price: '1.12000' },
    stopLoss: { price: '1.08000' },
  },
  {
    kind: 'clientExtensions',
    id: 'x-ext',
    tradeSpecifier: '@x-trade',
    tradeClientExtensions: { id: 'x-trade', comment: 'scripted' },
  },
  { kind: 'closeTrade', id: 'x-part', tradeSpecifier: '@x-trade', units: '400' },
  {
    kind: 'order',
    id: 'x-limit',
    request: { type: 'LIMIT', instrument: 'EUR_USD', units: '-500', price: '1.12500' },
  },
  {
    kind: 'replace',
    id: 'x-limit-2',
    orderSpecifier: '@x-limit',
    request: { type: 'LIMIT', instrument: 'EUR_USD', units: '-500', price: '1.13000' },
  },
  { kind: 'cancel', id: 'x-cancel', orderSpecifier: '@x-limit-2' },
  { kind: 'tradeOrders', id: 'x-nodeps', tradeSpecifier: '@x-trade', takeProfit: null },
  { kind: 'closePosition', id: 'x-flat', instrument: 'EUR_USD', longUnits: 'ALL' },
];

/** Runs the script through V20Execution against a fresh sandbox; returns what the stream delivered and the final state. */
async function run(faults: FaultOptions) {
  const sb = await startSandbox({ heartbeatMs: 100 });
  sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  const http = new V20Http({ baseUrl: sb.url, retries: 12, retryBaseMs: 2, connectionsPerSecond: 100 });
  const rest = new V20Rest(http);
  const A = sb.accountIDs[0]!;
  try {
    const start = (await rest.summary(A)).lastTransactionID;
    const exec = new V20Execution({
      http,
      rest,
      accountID: A,
      lastTransactionID: start,
      reconnectBaseMs: 5,
      resubmitBaseMs: 2,
      resubmits: 12,
    });
    const failures: SubmissionFailure[] = [];
    exec.failures$.subscribe((f) => failures.push(f));
    const got: Transaction[] = [];
    const sub = exec.transactions$.subscribe((t) => got.push(t));
    sb.setFaults(faults);
    for (const intent of SCRIPT) exec.submit(intent);
    await exec.drain();
    sb.setFaults({});
    const summary = await rest.summary(A);
    const t0 = Date.now();
    while (
      (got.length === 0 || got[got.length - 1]!.id !== summary.lastTransactionID) &&
      Date.now() - t0 < 10_000
    )
      await new Promise((d) => setTimeout(d, 20));
    sub.unsubscribe();
    const pending = await rest.pendingOrders(A);
    const open = await rest.openTrades(A);
    return { got, failures, stats: { ...exec.stats }, retries: http.stats.retries, pending, open, summary };
  } finally {
    await http.close();
    await sb.close();
  }
}

describe('V20Execution: every intent kind against the sandbox', () => {
  it('maps each intent to its endpoint; with 50% 5xx the account ends with exactly the same transactions', async () => {
    const clean = await run({});
    expect(clean.failures).toEqual([]);
    const types = clean.got.map((t) => t.type);
    expect(types).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL', // x-open
      'TAKE_PROFIT_ORDER',
      'STOP_LOSS_ORDER', // x-deps
      'TRADE_CLIENT_EXTENSIONS_MODIFY', // x-ext
      'MARKET_ORDER',
      'ORDER_FILL', // x-part
      'LIMIT_ORDER', // x-limit
      'ORDER_CANCEL',
      'LIMIT_ORDER', // x-limit-2 replaces it
      'ORDER_CANCEL', // x-cancel
      'ORDER_CANCEL', // x-nodeps cancels the take profit
      'MARKET_ORDER',
      'ORDER_FILL',
      'ORDER_CANCEL', // x-flat, the stop loss goes with the trade
    ]);
    expect((clean.got[5] as { tradeClose?: { units?: string } }).tradeClose?.units).toBe('400');
    expect((clean.got[7] as { clientExtensions?: { id?: string } }).clientExtensions?.id).toBe('x-limit');
    expect((clean.got[9] as { clientExtensions?: { id?: string } }).clientExtensions?.id).toBe('x-limit-2');
    expect(clean.pending).toEqual([]);
    expect(clean.open).toEqual([]);
    expect(clean.stats.ambiguous).toBe(0);

    const faulty = await run({ errorRate: 0.5, seed: 11 });
    expect(faulty.failures).toEqual([]);
    expect(faulty.stats.ambiguous).toBeGreaterThan(0);
    expect(faulty.retries).toBeGreaterThan(0);
    // exactly once: the same transactions in the same order, and the same balance to the last digit
    expect(faulty.got.map((t) => t.type)).toEqual(types);
    expect(faulty.got.map((t) => t.id)).toEqual(clean.got.map((t) => t.id));
    expect(faulty.summary.account.balance).toBe(clean.summary.account.balance);
    expect(faulty.pending).toEqual([]);
    expect(faulty.open).toEqual([]);
    console.log(
      `v20 execution under 50% 5xx: ${JSON.stringify({ ...faulty.stats, httpRetries: faulty.retries })}`,
    );
  });

  it('a rejected order is reported as rejected, not retried, and its reject transaction arrives on the stream', async () => {
    const sb = await startSandbox({ heartbeatMs: 100 });
    const http = new V20Http({ baseUrl: sb.url });
    const rest = new V20Rest(http);
    const A = sb.accountIDs[0]!;
    try {
      const exec = new V20Execution({
        http,
        rest,
        accountID: A,
        lastTransactionID: (await rest.summary(A)).lastTransactionID,
      });
      const failures: SubmissionFailure[] = [];
      exec.failures$.subscribe((f) => failures.push(f));
      const next = firstValueFrom(exec.transactions$);
      exec.submit({
        kind: 'order',
        id: 'bad-1',
        request: { type: 'TAKE_PROFIT', tradeID: '424242', price: '1.20000' },
      });
      await exec.drain();
      const reject = await next;
      expect(reject.type).toBe('TAKE_PROFIT_ORDER_REJECT');
      expect((reject as { clientExtensions?: { id?: string } }).clientExtensions?.id).toBe('bad-1');
      expect(failures).toHaveLength(1);
      expect(failures[0]!.outcome).toBe('rejected');
      expect((failures[0]!.error as { errorCode?: string }).errorCode).toBe('TRADE_DOESNT_EXIST');
      expect(exec.stats.resubmitted).toBe(0);
      const last = (await rest.summary(A)).lastTransactionID;
      expect(
        (await rest.transactionsIdRange(A, '1', last)).transactions.filter(
          (t) => t.type === 'TAKE_PROFIT_ORDER_REJECT',
        ),
      ).toHaveLength(1);
    } finally {
      await http.close();
      await sb.close();
    }
  });
});
