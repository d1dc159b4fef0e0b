import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { REDACT_PATHS } from '../../src/cli/logger.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { pricePath, rig, settle, waitTicks, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** A pino logger whose JSON lines are kept in memory. */
function capture(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  return { log: pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, out), lines };
}

describe('operations', () => {
  it('status lines (equity, positions, latency, stream health), JSON logs without the token, flatten on exit', async () => {
    const TOKEN = 'tok-e2e-must-never-appear-0123456789';
    r = await rig({ requireToken: TOKEN });
    const { log, lines } = capture();
    const http = new V20Http({ baseUrl: r.sandbox.url, token: TOKEN, log, retryBaseMs: 20 });
    const runner = r.runner({
      http,
      rest: new V20Rest(http),
      log,
      statusEveryMs: 100,
      flattenOnExit: true,
      params: { every: 4, units: '1000' },
    });
    await runner.start();
    let n = 0;
    for (const p of pricePath(14)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await waitTicks(runner, ++n);
      await settle(r, runner);
    }
    await new Promise((res) => setTimeout(res, 250));
    const openBefore = (await r.rest.openTrades(r.accountID)).length;
    const res = await runner.stop('SIGTERM');
    const openAfter = (await r.rest.openTrades(r.accountID)).length;
    const status = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'status');
    console.log(
      `[operations] ${status.length} status lines, e.g. ${JSON.stringify(status[0])}; open trades before stop ${openBefore}, after flatten ${openAfter}; ${lines.length} log lines, token found in ${lines.filter((l) => l.includes(TOKEN)).length}`,
    );
    expect(status.length).toBeGreaterThanOrEqual(2);
    expect(status[0]).toMatchObject({
      nav: expect.any(Number),
      openTrades: expect.any(Number),
      latencyMs: expect.any(Object),
      pricing: expect.objectContaining({ connects: expect.any(Number) }),
      transactions: expect.objectContaining({ connects: expect.any(Number) }),
    });
    expect(lines.some((l) => l.includes(TOKEN))).toBe(false);
    expect(res.report).not.toContain(TOKEN);
    expect(openBefore).toBe(1);
    expect(openAfter).toBe(0);
  });

  it('warms the indicators from the candles endpoint without calling the handlers, then trades live', async () => {
    r = await rig({ start: '2024-01-03T12:00:00Z' });
    const seen: { live: number; closes: number }[] = [];
    const probe = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      onCandle(ctx) {
        seen.push({ live: ctx.now, closes: ctx.closes(1000).length });
      },
    });
    const runner = r.runner({ strategy: probe as never, name: 'probe', params: {}, warmup: 50 });
    await runner.start();
    expect(seen).toEqual([]); // warm-up candles never reach onCandle
    const t0 = Date.UTC(2024, 0, 3, 12, 0);
    for (let i = 0; i < 3; i++) {
      const time = t0 + i * 60_000 + 1000;
      r.sandbox.setTime(time);
      r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.095, ask: 1.09515, time });
      await waitTicks(runner, i + 1);
    }
    await runner.stop('end');
    console.log(
      `[warm-up] live candles seen: ${JSON.stringify(seen.map((s) => ({ at: new Date(s.live).toISOString(), closes: s.closes })))}`,
    );
    expect(seen.length).toBe(2);
    expect(seen[0]!.closes).toBe(51); // 50 warm-up candles + the first live one
    expect(seen[0]!.live).toBe(t0 + 60_000);
  });
});
