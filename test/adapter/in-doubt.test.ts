// The in-doubt rule in the v20 adapter (V20Execution), over real HTTP: the sandbox behind the fault
// proxy and a client whose timeout is short (400 ms). An order request that may still be in transit
// is resent only once its whole window has passed with no sign of it. Only the test that waits the
// window out has a short one (1.5 s + 0.3 s); the others have a long one (60 s) and act on events
// (the request held until the adapter holds it in doubt), so a loaded machine cannot push a step
// past a window it was meant to fall within.
import { afterEach, describe, expect, it } from 'vitest';
import {
  type SubmissionFailure,
  V20Execution,
  type V20ExecutionOptions,
} from '../../src/adapters/v20/execution.ts';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';
import { type FaultProxy, startFaultProxy, v20 } from '../fault-proxy.ts';

let sb: Sandbox | undefined;
let proxy: FaultProxy | undefined;
let http: V20Http | undefined;
afterEach(async () => {
  await http?.close();
  await proxy?.close();
  await sb?.close();
  http = undefined;
  proxy = undefined;
  sb = undefined;
});

const WINDOW = 1500;
const MARGIN = 300;
/** A window no step of a quick test comes near, however loaded the machine. */
const LONG = 60_000;
const order = (id: string): OrderIntent => ({
  kind: 'order',
  id,
  request: { type: 'MARKET', instrument: 'EUR_USD', units: '1000' },
});
const cid = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;

async function setup(
  window = WINDOW,
  extra: Pick<V20ExecutionOptions, 'maySend' | 'onSend'> = {},
): Promise<{ exec: V20Execution; rest: V20Rest; A: string; start: string; stream: Transaction[] }> {
  sb = await startSandbox({ heartbeatMs: 100 });
  sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
  proxy = await startFaultProxy(sb.url);
  http = new V20Http({ baseUrl: proxy.url, timeoutMs: 400, retryBaseMs: 2, connectionsPerSecond: 100 });
  const rest = new V20Rest(http);
  const A = sb.accountIDs[0]!;
  const start = (await rest.summary(A)).lastTransactionID;
  const exec = new V20Execution({
    http,
    rest,
    accountID: A,
    lastTransactionID: start,
    reconnectBaseMs: 5,
    resubmitBaseMs: 2,
    requestWindowMs: window,
    inDoubtMarginMs: MARGIN,
    inDoubtScanMs: 100,
    ...extra,
  });
  const stream: Transaction[] = [];
  exec.transactions$.subscribe((t) => stream.push(t));
  return { exec, rest, A, start, stream };
}

/** Resolves once `exec` holds the intent in doubt (its client gave up; it waits for a sign): looked at every 10 ms. */
async function inDoubt(exec: V20Execution, id: string): Promise<void> {
  while (!exec.inDoubt.has(id)) await new Promise((res) => setTimeout(res, 10));
}

describe('V20Execution: orders in doubt', () => {
  it('held past the client timeout and arriving within the window: found (on the stream), not resent; the queue waited', async () => {
    const { exec, rest, A, start } = await setup(LONG);
    proxy!.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
    exec.submit(order('held-1'));
    exec.submit(order('next-1'));
    await proxy!.reached('held');
    // The client has given up (400 ms) and holds the request in doubt: now it arrives, within its window.
    await inDoubt(exec, 'held-1');
    expect(proxy!.requests.filter(v20.orderPost)).toHaveLength(1);
    proxy!.release();
    await exec.drain();
    const orders = (await rest.transactionsSinceId(A, start)).transactions
      .filter((t) => t.type === 'MARKET_ORDER')
      .map(cid);
    const posts = proxy!.requests.filter(v20.orderPost);
    console.log(
      `[in doubt / adapter] held past a 400 ms timeout until the adapter held it in doubt (${(posts[0]!.at.forwarded! - posts[0]!.at.received!).toFixed(0)} ms): orders ${orders.join(', ')}; stats ${JSON.stringify(exec.stats)}`,
    );
    expect(orders).toEqual(['held-1', 'next-1']);
    expect(exec.stats).toMatchObject({ ambiguous: 1, inDoubt: 1, foundAfterFailure: 1, resubmitted: 0 });
    // The next order went out only after the held one had reached the sandbox.
    expect(posts[1]!.at.received!).toBeGreaterThanOrEqual(posts[0]!.at.forwarded!);
    expect(exec.inDoubt.size).toBe(0);
  });

  it('never arriving (the proxy keeps it): resent once, and only after the whole window with no sign of it', async () => {
    const { exec, rest, A, start } = await setup();
    proxy!.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
    // Before the request is sent: the window counts from its sending, so from later than this.
    const t0 = performance.now();
    exec.submit(order('lost-1'));
    const held = await proxy!.reached('held');
    await exec.drain();
    const resent = proxy!.requests.filter(v20.orderPost)[1]!;
    const orders = (await rest.transactionsSinceId(A, start)).transactions
      .filter((t) => t.type === 'MARKET_ORDER')
      .map(cid);
    console.log(
      `[in doubt / adapter] never arriving: resent ${(resent.at.received! - held.at.received!).toFixed(0)} ms after the first reached the proxy, ${(resent.at.received! - t0).toFixed(0)} ms after submit (window ${WINDOW} + ${MARGIN} ms); orders ${orders.join(', ')}`,
    );
    expect(orders).toEqual(['lost-1']);
    expect(exec.stats).toMatchObject({ inDoubt: 1, resubmitted: 1 });
    // (1 ms: Date.now(), which the adapter's window is in, counts whole milliseconds.)
    expect(resent.at.received! - t0).toBeGreaterThanOrEqual(WINDOW + MARGIN - 1);
  });

  it('cut after forwarding (applied, answer lost): found at the first scan, no wait for the window', async () => {
    const { exec, rest, A, start } = await setup(LONG);
    proxy!.rule(v20.orderPost, { kind: 'cut' }, 1);
    const t0 = performance.now();
    exec.submit(order('cut-1'));
    await exec.drain();
    const ms = performance.now() - t0;
    const orders = (await rest.transactionsSinceId(A, start)).transactions
      .filter((t) => t.type === 'MARKET_ORDER')
      .map(cid);
    console.log(
      `[in doubt / adapter] cut after forwarding: settled in ${ms.toFixed(0)} ms; orders ${orders.join(', ')}`,
    );
    expect(orders).toEqual(['cut-1']);
    expect(exec.stats).toMatchObject({ inDoubt: 1, foundAfterFailure: 1, resubmitted: 0 });
    expect(ms).toBeLessThan(LONG);
  });
  it('the send point asks maySend before every attempt: halted while in doubt, a request that never arrived is not resent; one halted before is never sent; onSend marks each sending', async () => {
    let halted = false;
    const sent: string[] = [];
    const { exec, rest, A, start } = await setup(WINDOW, {
      maySend: () => !halted,
      onSend: (i, attempt) => sent.push(`${i.id}#${attempt}`),
    });
    const failures: SubmissionFailure[] = [];
    exec.failures$.subscribe((f) => failures.push(f));
    proxy!.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
    exec.submit(order('gate-1'));
    await proxy!.reached('held');
    await inDoubt(exec, 'gate-1');
    halted = true;
    exec.submit(order('gate-2'));
    await exec.drain();
    const orders = (await rest.transactionsSinceId(A, start)).transactions
      .filter((t) => t.type === 'MARKET_ORDER')
      .map(cid);
    expect(orders).toEqual([]);
    expect(proxy!.requests.filter(v20.orderPost)).toHaveLength(1);
    expect(sent).toEqual(['gate-1#0']);
    expect(failures.map((f) => [f.intent.id, f.outcome, (f.error as { attempt?: number }).attempt])).toEqual([
      ['gate-1', 'not-sent', 1],
      ['gate-2', 'not-sent', 0],
    ]);
    expect(exec.stats).toMatchObject({ inDoubt: 1, resubmitted: 0 });
  });
});
