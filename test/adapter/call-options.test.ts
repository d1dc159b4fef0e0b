// Per-call options of the v20 REST path (V20CallOptions: signal, retry) over real HTTP against the
// sandbox on loopback. Candle faults slow or fail the candles endpoint; a TCP tap between client
// and sandbox shows when each connection closed and which side closed it.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { V20Error } from '../../src/adapters/v20/errors.ts';
import { V20AbortError, V20Http, type V20HttpOptions } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import type { FaultOptions } from '../../src/sandbox/server.ts';
import { closeTapRigs, tapRig, type TapRig } from '../tap-rig.ts';

const START = Date.UTC(2024, 0, 2, 10, 0);
const Q = { granularity: 'M1', price: 'BA', from: START, count: 1 } as const;

afterEach(closeTapRigs);

/** A sandbox two minutes after START (minute START complete), a tap and a client (`o` overrides; 100 new connections a second). */
const rig = (faults: FaultOptions, o: Partial<V20HttpOptions> = {}): Promise<TapRig> =>
  tapRig(START + 120_000, faults, { connectionsPerSecond: 100, ...o });

/** The rejection of `p` and how long it took. */
async function failure(p: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const t0 = performance.now();
  try {
    await p;
  } catch (e) {
    return { err: e, ms: performance.now() - t0 };
  }
  throw new Error('expected a rejection, got an answer');
}

describe('V20Rest.candles with a signal', () => {
  it('an aborted request rejects with V20AbortError well before the server would answer; the socket is closed at once and the next request on the same one-connection client is served at once', async () => {
    // The first candle request is held 30 s by the sandbox, the next ones are answered at once. The
    // bounds below are half of that hold, so a busy machine cannot fail them, while an abort that did
    // not free the connection (or did not reject) would still take the whole 30 s.
    const HOLD = 30_000;
    const r = await rig({ candleDelayMs: [HOLD, 0] }, { connections: 1 });
    const t0 = performance.now();
    const { err, ms } = await failure(r.rest.candles('EUR_USD', Q, { signal: AbortSignal.timeout(200) }));
    expect(err).toBeInstanceOf(V20AbortError);
    expect(err).toBeInstanceOf(V20Error); // still the boundary's class
    const a = err as V20AbortError;
    expect(a).toMatchObject({
      aborted: true,
      timedOut: true,
      retryable: false,
      code: 'V20_NETWORK',
      method: 'GET',
      name: 'V20AbortError',
    });
    expect(a.status).toBeUndefined();
    expect(a.message).toMatch(
      /^GET \/v3\/instruments\/EUR_USD\/candles\?.*: aborted \(the caller's time limit passed\)/,
    );
    // Not before the signal fired: t0 was taken before the signal was made (libuv's loop clock is
    // cached per turn, so a timer can look a few ms early against performance.now()).
    expect(performance.now() - t0).toBeGreaterThanOrEqual(150);
    expect(ms).toBeLessThan(HOLD / 2);
    // The tap saw the client drop the connection at the abort, before any answer byte.
    const first = await r.tap.closed(0);
    expect(first).toMatchObject({ closedBy: 'client', bytesDown: 0 });
    expect(first.closedAt! - t0).toBeLessThan(HOLD / 2);
    expect(first.bytesUp).toBeGreaterThan(0);

    // One connection only: had the aborted request kept it, this one would wait for the 3 s answer.
    const t1 = performance.now();
    const ok = await r.rest.candles('EUR_USD', Q);
    const second = performance.now() - t1;
    expect(ok.candles.map((c) => [c.time, c.complete])).toEqual([['2024-01-02T10:00:00.000000000Z', true]]);
    expect(second).toBeLessThan(HOLD / 2);
    expect(r.http.stats.connections).toBe(2);
    expect(r.tap.connections.length).toBe(2);
    expect(r.served()).toBe(2);
    console.log(
      `[call options] abort at 200 ms of a 30 s candle request: rejected after ${Math.round(ms)} ms, socket closed by the client ${Math.round(first.closedAt! - t0)} ms after the call, the next request answered in ${Math.round(second)} ms`,
    );
  });

  it("aborting during the transport's backoff or its wait for the rate budget rejects at once with V20AbortError (the caller's reason in the message); an already aborted signal sends nothing", async () => {
    // 503 on every candle request, retries on (a GET's default) with a backoff of at least 30 s, so
    // the bound below (half that) holds on a busy machine and still fails if the abort is ignored.
    const r = await rig({ candleFailStatus: 503 }, { retryBaseMs: 60_000, connections: 1 });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('the run stopped')), 150);
    const { err, ms } = await failure(r.rest.candles('EUR_USD', Q, { signal: ctl.signal }));
    expect(err).toBeInstanceOf(V20AbortError);
    expect(err).toMatchObject({ timedOut: false, reason: ctl.signal.reason });
    expect((err as Error).message).toContain('aborted (the run stopped)');
    expect(ms).toBeLessThan(15_000);
    expect(r.served()).toBe(1); // the 503, then the abort ended the backoff
    expect(r.http.stats.retries).toBe(1);

    const pre = new AbortController();
    pre.abort();
    const before = r.http.stats.requests;
    const p = await failure(r.rest.candles('EUR_USD', Q, { signal: pre.signal }));
    expect(p.err).toBeInstanceOf(V20AbortError);
    expect((p.err as Error).message).toContain('aborted (by the caller)');
    expect(r.http.stats.requests).toBe(before);
    expect(r.served()).toBe(1);

    // A budget of one request a second: the second call waits for it, and its signal ends the wait
    // (had the signal been ignored, the call would have been sent after the wait and succeeded).
    const slow = await rig({}, { rate: { perSecond: 1, burst: 1 } });
    await slow.rest.candles('EUR_USD', Q);
    const w = await failure(slow.rest.candles('EUR_USD', Q, { signal: AbortSignal.timeout(100) }));
    expect(w.err).toBeInstanceOf(V20AbortError);
    expect(slow.served()).toBe(1);
  });

  it('a signal that never fires changes nothing: the candle comes back, one request', async () => {
    const r = await rig({});
    const res = await r.rest.candles('EUR_USD', Q, { signal: new AbortController().signal, retry: false });
    expect(res.candles.length).toBe(1);
    expect(res.candles[0]!.bid).toBeDefined();
    expect(r.served()).toBe(1);
  });
});

describe('V20Rest.candles with retry: false', () => {
  it('a 503 comes back to the caller after exactly one request (a retryable V20Error, not an abort); without the option the transport retries as before', async () => {
    const r = await rig({ candleFailStatus: 503 }, { retries: 3, retryBaseMs: 1 });
    const { err } = await failure(r.rest.candles('EUR_USD', Q, { retry: false }));
    expect(err).toBeInstanceOf(V20Error);
    expect(err).not.toBeInstanceOf(V20AbortError);
    expect(err).toMatchObject({ code: 'V20_HTTP', status: 503, retryable: true });
    expect(r.served()).toBe(1);
    expect(r.http.stats.retries).toBe(0);

    const d = await failure(r.rest.candles('EUR_USD', Q));
    expect(d.err).toMatchObject({ code: 'V20_HTTP', status: 503 });
    expect(r.served()).toBe(1 + 4); // 1 + 3 retries
    expect(r.http.stats.retries).toBe(3);
  });

  it('requests at the sandbox per failing call = 1 with retry: false, 1 + retries otherwise (fast-check over status, option and retry count)', async () => {
    const { sb, tap } = await rig({});
    const clients = [0, 1, 2, 3].map(
      (n) =>
        new V20Http({
          baseUrl: tap.url,
          retries: n,
          retryBaseMs: 1,
          connectionsPerSecond: 100,
          rate: { perSecond: 1000, burst: 1000 },
        }),
    );
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(500, 502, 503, 504),
          fc.constantFrom<boolean | undefined>(false, undefined, true),
          fc.integer({ min: 0, max: 3 }),
          async (status, retry, retries) => {
            sb.setFaults({ candleFailStatus: status });
            const before = sb.stats().requests;
            const o = retry === undefined ? undefined : { retry };
            const { err } = await failure(new V20Rest(clients[retries]!).candles('EUR_USD', Q, o));
            expect(err).toMatchObject({ code: 'V20_HTTP', status, retryable: true });
            expect(sb.stats().requests - before).toBe(retry === false ? 1 : 1 + retries);
          },
        ),
        { numRuns: 30 },
      );
    } finally {
      for (const c of clients) await c.close();
    }
  });
});
