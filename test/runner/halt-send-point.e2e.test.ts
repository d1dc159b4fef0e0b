// Issue 33, item 2: one send point, and the halt checked there for every first sending and every
// resend. The strategy's order request is held by the fault proxy (never forwarded, or forwarded only
// once the halt has engaged); the kill switch engages while it is held. The runner, in process,
// against the sandbox over real HTTP through the proxy: a client timeout of 400 ms and, where the
// window must pass, a request window of 1 s + 0.5 s, so the in-doubt wait ends within seconds. Every step waits on an event (a
// request reaching the proxy, the runner holding the order in doubt), not on a guessed time.
import { afterEach, describe, expect, it } from 'vitest';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { RUNNER_ID_PREFIX } from '../../src/domain/intents.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import { type FaultProxy, type ProxyRecord, startFaultProxy, v20 } from '../fault-proxy.ts';
import { accountTransactions, pricePath, quiet, rig, type Rig, until } from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
let http: V20Http | undefined;
let runner: Runner | undefined;
afterEach(async () => {
  await runner?.stop('test end').catch(() => undefined);
  await http?.close();
  await proxy?.close();
  await r?.close();
  [r, proxy, http, runner] = [undefined, undefined, undefined, undefined];
});

const cid = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;
const bodyCid = (q: ProxyRecord): string =>
  (JSON.parse(q.body) as { order: { clientExtensions?: { id?: string } } }).order.clientExtensions?.id ?? '';
const strategyPost = (q: ProxyRecord): boolean =>
  v20.orderPost(q) && !bodyCid(q).startsWith(RUNNER_ID_PREFIX);

/** A runner through the proxy whose first order request is held; resolves with the held request once the strategy's order is held. */
async function heldOrder(requestWindowMs: number): Promise<{ held: ProxyRecord; start: string }> {
  r = await rig();
  proxy = await startFaultProxy(r.sandbox.url);
  http = new V20Http({
    baseUrl: proxy.url,
    log: quiet,
    timeoutMs: 400,
    retryBaseMs: 20,
    rate: { perSecond: 1000, burst: 1000 },
    connectionsPerSecond: 1000,
  });
  const rest = new V20Rest(http);
  const start = (await r.rest.summary(r.accountID)).lastTransactionID;
  runner = r.runner({ http, rest, flattenRetryBaseMs: 20, inDoubtMarginMs: 500, requestWindowMs });
  await runner.start();
  proxy.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
  // Prices until the strategy's first order is held (the pricing stream may connect after start).
  const path = pricePath(200);
  for (let i = 0; !proxy.requests.some(v20.orderPost); i++) {
    if (i >= path.length) throw new Error('the strategy placed no order');
    r.sandbox.setTime(path[i]!.time);
    r.sandbox.pushPrice(path[i]!);
    const seen = runner.ticks;
    await until(
      () => runner!.ticks > seen || proxy!.requests.some(v20.orderPost),
      'the runner to handle the price',
    );
  }
  const held = await proxy.reached('held', v20.orderPost);
  return { held, start };
}

describe('the halt at the send point', () => {
  it("halted while the strategy's order is held and it never arrives: it is waited out and not resent; 0 strategy orders after the trigger; flat", async () => {
    const { held, start } = await heldOrder(1000);
    const first = bodyCid(held);
    // The halt engages while the request is held (no step races the window: it starts counting
    // before the halt, and the client gives up at 400 ms only after it). Then the runner holds the
    // order in doubt for its window, finds nothing, and must not send it again.
    const trigger = proxy!.requests.length;
    const result = await runner!.kill('test: halted during the hold');
    const after = proxy!.requests.slice(trigger);
    const txs = await accountTransactions(r!, start);
    const strategyOrders = txs.filter((t) => t.type === 'MARKET_ORDER' && cid(t) === first);
    console.log(
      `[halt / send point] order ${first} held, halt engaged in doubt: ${after.filter(strategyPost).length} strategy order request(s) after the trigger, ${strategyOrders.length} at the account; account ${result.account?.ok === true ? 'flat' : `NOT FLAT ${result.account?.open.join(', ')}`}`,
    );
    // Before the fix: at the end of the window "the request provably had no effect; resubmitting".
    expect(after.filter(strategyPost)).toHaveLength(0);
    expect(strategyOrders).toHaveLength(0);
    expect(result.account?.ok).toBe(true);
    expect((await r!.rest.openTrades(r!.accountID)).length).toBe(0);
    expect(runner!.execution!.stats).toMatchObject({ inDoubt: 1, foundAfterFailure: 0, resubmitted: 0 });
  });

  it("halted while it is held, and it arrives within its window: found, never resent; the kill switch's flatten closes it; flat", async () => {
    // A window no loaded machine comes near: the held order is found as soon as it arrives.
    const { held, start } = await heldOrder(60_000);
    const first = bodyCid(held);
    await until(() => runner!.inDoubt.some((d) => d.intentId === first), 'the order to be held in doubt');
    const trigger = proxy!.requests.length;
    const killed = runner!.kill('test: halted during the hold');
    // The held request goes on now, after the halt and within its window.
    proxy!.release();
    const result = await killed;
    const after = proxy!.requests.slice(trigger);
    const txs = await accountTransactions(r!, start);
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER' && cid(t) === first);
    const closes = txs.filter(
      (t) => t.type === 'MARKET_ORDER' && (t as { reason?: string }).reason === 'POSITION_CLOSEOUT',
    );
    expect(after.filter(strategyPost)).toHaveLength(0);
    expect(orders).toHaveLength(1);
    expect(closes).toHaveLength(1);
    expect(result.account?.ok).toBe(true);
    expect((await r!.rest.openTrades(r!.accountID)).length).toBe(0);
    expect(runner!.execution!.stats).toMatchObject({ foundAfterFailure: 1, resubmitted: 0 });
  });
});
