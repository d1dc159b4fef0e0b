// Issue 24, item 1: the kill switch engaged while a plain stop (no flatten) is still draining an
// order in flight still closes what the account holds (it used to join the plain stop: nothing
// closed). In process against the sandbox over HTTP, the order's reply held 1.5 s by the fault proxy.
import { afterEach, describe, expect, it } from 'vitest';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { type FaultProxy, startFaultProxy } from '../fault-proxy.ts';
import { pricePath, quiet, rig, type Rig, waitTicks } from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await r?.close();
  r = undefined;
});

describe('the kill switch during a plain stop', () => {
  it("engaged while the stop waits for an order's answer: the order is answered and journaled, then the account is flattened and confirmed", async () => {
    r = await rig();
    proxy = await startFaultProxy(r.sandbox.url);
    const http = new V20Http({
      baseUrl: proxy.url,
      streamUrl: r.sandbox.url,
      log: quiet,
      retryBaseMs: 20,
      rate: { perSecond: 1000, burst: 1000 },
      connectionsPerSecond: 1000,
    });
    const runner = r.runner({ http, rest: new V20Rest(http) });
    await runner.start();
    proxy.rule((q) => q.method === 'POST' && q.path.endsWith('/orders'), { kind: 'delay', ms: 1500 });
    const path = pricePath(3);
    for (const [i, p] of path.entries()) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await waitTicks(runner, i + 1);
    }
    // Ping-pong bought on the 3rd price; its reply is held while the stop begins.
    await proxy.reached('forwarded', (q) => q.method === 'POST' && q.path.endsWith('/orders'));
    const stopping = runner.stop('plain stop');
    void runner.kill('test');
    const res = await stopping;
    const open = (await r.rest.openTrades(r.accountID)).length;
    console.log(
      `[kill during stop] reason "${res.reason}"; account check ${JSON.stringify(res.account)}; open trades after: ${open}; unconfirmed intents in the journal: ${runner.journal.unconfirmedCount}`,
    );
    expect(open).toBe(0);
    expect(res.account).toMatchObject({ ok: true, positions: [] });
  }, 60_000);
});
