import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';
import { call, readLines, type LineReader } from '../../src/sandbox/testkit.ts';
import { HAS_SHARED, warnIfNoShared } from '../shared.ts';
import { validateExchanges } from './official-kit.ts';
import { OpenApiValidator } from './openapi.ts';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.ts';

/**
 * The sandbox with its slippage and latency faults on still speaks v20: every answer of an order
 * held back by the latency (market order, stop, trade close, position close) and every transaction
 * stream line validates against OANDA's definitions, recorded through a proxy.
 */

warnIfNoShared('the sandbox with slippage and latency faults against the v20 definitions (contract)');

describe.skipIf(!HAS_SHARED)('sandbox fill faults: answers and stream lines stay v20-shaped', () => {
  let sandbox: Sandbox;
  let proxy: RecordingProxy;
  let validator: OpenApiValidator;
  let stream: LineReader;
  let A = '';

  beforeAll(async () => {
    validator = OpenApiValidator.load();
    sandbox = await startSandbox({
      clock: 'manual',
      start: '2024-01-03T10:00:00Z',
      heartbeatMs: 50,
      fill: { slippage: 'fixed:0.5', latency: 'fixed:300', latencyTimeoutMs: 60_000 },
    });
    sandbox.pushPrice({ instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
    proxy = await startRecordingProxy(sandbox.url);
    A = `http://${proxy.hostname}:${proxy.port}/v3/accounts/${sandbox.accountIDs[0]}`;
    stream = await readLines(`${A}/transactions/stream`);
  });

  afterAll(async () => {
    stream?.close();
    proxy?.cutOpenResponses();
    await proxy?.close();
    await sandbox?.close();
  });

  /** A request whose answer waits for the latency: sent, then the clock is moved past the arrival. */
  const delayed = async (method: string, url: string, body: unknown): Promise<Record<string, any>> => {
    const before = sandbox.stats().delayedOrders;
    const answer = call(method, url, body);
    for (let i = 0; sandbox.stats().delayedOrders === before; i++) {
      if (i > 2000) throw new Error(`the sandbox never held back ${method} ${url}`);
      await new Promise((done) => setTimeout(done, 5));
    }
    sandbox.advance(1000);
    const r = await answer;
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    return r.body;
  };

  it('a delayed, slipped market order with a take profit; a stop; a trade close; a position close', async () => {
    const open = await delayed('POST', `${A}/orders`, {
      order: { type: 'MARKET', instrument: 'EUR_USD', units: '1000', takeProfitOnFill: { price: '1.10600' } },
    });
    expect(open.orderFillTransaction.price).toBe('1.10025');
    const stop = await call('POST', `${A}/orders`, {
      order: { type: 'STOP', instrument: 'EUR_USD', units: '500', price: '1.10100' },
    });
    expect(stop.status).toBe(201);
    sandbox.advance(1000);
    sandbox.pushPrice({ instrument: 'EUR_USD', bid: '1.10100', ask: '1.10120' });
    const closed = await delayed(
      'PUT',
      `${A}/trades/${open.orderFillTransaction.tradeOpened.tradeID}/close`,
      {},
    );
    expect(closed.orderFillTransaction.price).toBe('1.10095');
    const flat = await delayed('PUT', `${A}/positions/EUR_USD/close`, { longUnits: 'ALL' });
    expect(flat.longOrderFillTransaction.units).toBe('-500');
    await stream.until(
      () => stream.lines.filter((l) => l.includes('"ORDER_FILL"')).length === 4,
      10_000,
      'four fills on the stream',
    );
  });

  it('every answer and every stream line validates against the OpenAPI definitions', () => {
    stream.close();
    proxy.cutOpenResponses();
    const { problems, rest, streams, lines } = validateExchanges(validator, proxy);
    if (problems.length > 0)
      throw new Error(`${problems.length} violations of the v20 definitions:\n${problems.join('\n')}`);
    expect(rest).toBe(4);
    expect(streams).toBe(1);
    expect(lines).toBeGreaterThanOrEqual(10);
  });
});
