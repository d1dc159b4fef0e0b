// Live candles from the candles endpoint: the runner against fxflow's sandbox over real HTTP on
// loopback. The sandbox serves its catalog's candles; the prices pushed into it deliberately skip
// each minute's high, so a candle built from ticks differs from the official one.
import { Writable } from 'node:stream';
import { resolve } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { aggregateBatches } from '../../src/adapters/catalog/aggregate.ts';
import { Catalog } from '../../src/adapters/catalog/catalog.ts';
import type { Candle } from '../../src/domain/candle.ts';
import type { Granularity } from '../../src/domain/granularity.ts';
import { formatTime } from '../../src/domain/time.ts';
import { candleOptionsOf } from '../../src/cli/run.ts';
import { CandleBuilder } from '../../src/runner/session/live-candles.ts';
import type { Runner, RunnerOptions } from '../../src/runner/session/runner.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { rig, waitTicks, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const START = Date.UTC(2024, 0, 2, 10, 0);
let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

interface Seen {
  readonly candle: Candle;
  /** ctx.now in the handler. */
  readonly now: number;
  /** Ticks the strategy had seen when the candle reached it, and the latest of their times. */
  readonly ticksBefore: number;
  readonly lastTickAt: number;
  /** Wall time of the delivery. */
  readonly wall: number;
}

/** A strategy that records every live candle and tick it is given. */
function recorder(series: string[]): { strategy: RunnerOptions['strategy']; seen: Seen[]; ticks: number[] } {
  const seen: Seen[] = [];
  const ticks: number[] = [];
  const strategy = defineStrategy({
    params: {},
    subscribe: { candles: series, ticks: ['EUR_USD'] },
    onTick(ctx) {
      ticks.push(ctx.tick!.at);
    },
    onCandle(ctx) {
      seen.push({
        candle: { ...ctx.candle! },
        now: ctx.now,
        ticksBefore: ticks.length,
        lastTickAt: ticks[ticks.length - 1] ?? Number.NaN,
        wall: Date.now(),
      });
    },
  });
  return { strategy: strategy as never, seen, ticks };
}

/** pino JSON lines kept in memory. */
function capture(level: pino.Level = 'debug'): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const l of chunk.toString('utf8').split('\n'))
        if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}

async function catalogM1(from: number, minutes: number): Promise<Candle[]> {
  const out: Candle[] = [];
  for await (const b of new Catalog(resolve(ROOT, 'data/catalog')).candles({
    instrument: 'EUR_USD',
    granularity: 'M1',
    from,
    to: from + minutes * 60_000,
  }))
    out.push(...b);
  return out;
}

/** Three ticks a minute (open, low, close): the high of the minute is never priced. */
function ticksMissingHighs(m1: readonly Candle[]): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (const c of m1)
    out.push([c.time, c.bo, c.ao], [c.time + 20_000, c.bl, c.al], [c.time + 59_000, c.bc, c.ac]);
  return out;
}

/** What `CandleBuilder` makes of ticks, up to `end` (the fallback's candles). */
function builtFrom(ticks: readonly [number, number, number][], g: Granularity, end: number): Candle[] {
  const b = new CandleBuilder('EUR_USD', g);
  const out: Candle[] = [];
  for (const [t, bid, ask] of ticks) {
    const c = b.tick(t, bid, ask);
    if (c) out.push(c);
  }
  const last = b.heartbeat(end);
  if (last) out.push(last);
  return out;
}

const fields = (c: Candle) => ({
  granularity: c.granularity,
  time: c.time,
  at: c.at,
  bo: c.bo,
  bh: c.bh,
  bl: c.bl,
  bc: c.bc,
  ao: c.ao,
  ah: c.ah,
  al: c.al,
  ac: c.ac,
  volume: c.volume,
  complete: c.complete,
});

/** Pushes ticks through the sandbox (its clock follows them), then one closing price at `end`. */
async function drive(
  rg: Rig,
  runner: Runner,
  ticks: readonly [number, number, number][],
  end: number,
  closing: [number, number],
): Promise<void> {
  let n = 0;
  for (const [t, bid, ask] of [...ticks, [end, ...closing] as [number, number, number]]) {
    rg.sandbox.setTime(t);
    rg.sandbox.pushPrice({ instrument: 'EUR_USD', bid, ask, time: t });
    n++;
  }
  await waitTicks(runner, n);
}

/** Starts a runner and waits until both its streams are connected (prices pushed before would be lost). */
async function begin(rg: Rig | undefined, runner: Runner): Promise<void> {
  await runner.start();
  await until(
    () => rg!.sandbox.stats().streamConnections >= 2,
    10_000,
    'the pricing and transaction streams',
  );
}

async function until(pred: () => boolean, ms: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

describe('live candles from the candles endpoint', () => {
  it('the strategy sees the endpoint candles (M1 and M5, in order), not those built from ticks that missed every high; --candles ticks sees the built ones', async () => {
    r = await rig({ start: START, feed: false });
    const m1 = await catalogM1(START, 20);
    expect(m1.length).toBe(20);
    const m5 = [...aggregateBatches([m1], 'M5')].flat();
    const ticks = ticksMissingHighs(m1);
    const end = START + 20 * 60_000;
    const closing: [number, number] = [m1[19]!.bc, m1[19]!.ac];
    const official = [...m1, ...m5].sort((a, b) => a.at - b.at || (a.granularity === 'M1' ? -1 : 1));
    const built = [...builtFrom(ticks, 'M1', end), ...builtFrom(ticks, 'M5', end)].sort(
      (a, b) => a.at - b.at || (a.granularity === 'M1' ? -1 : 1),
    );
    // The premise: the ticks missed the highs, so the two sets differ (else the test proves nothing).
    const differing = built.filter((b, i) => b.bh !== official[i]!.bh).length;
    expect(built.length).toBe(official.length);
    expect(differing).toBeGreaterThan(10);

    const ep = recorder(['EUR_USD:M1', 'EUR_USD:M5']);
    const runner = r.runner({ strategy: ep.strategy, name: 'recorder', params: {} });
    await begin(r, runner);
    await drive(r, runner, ticks, end, closing);
    const res = await runner.stop('end');
    expect(ep.seen.map((s) => fields(s.candle))).toEqual(official.map(fields));
    expect(ep.seen.every((s) => s.now === s.candle.at)).toBe(true); // a candle's time is its close, however late it came
    expect(res.candles).toEqual({ source: 'endpoint', official: 24, fromTicks: 0, pending: 0, dropped: 0 });
    await r.close();

    // The same prices with --candles ticks: the candles built from them, highs missed.
    r = await rig({ start: START, feed: false });
    const tk = recorder(['EUR_USD:M1', 'EUR_USD:M5']);
    const runner2 = r.runner({ strategy: tk.strategy, name: 'recorder', params: {}, candles: 'ticks' });
    await begin(r, runner2);
    await drive(r, runner2, ticks, end, closing);
    const res2 = await runner2.stop('end');
    expect(tk.seen.map((s) => fields(s.candle))).toEqual(built.map(fields));
    expect(res2.candles).toEqual({ source: 'ticks', official: 0, fromTicks: 24, pending: 0, dropped: 0 });
    console.log(
      `[live candles] 20 min of EUR_USD, 3 ticks a minute without the high: endpoint run saw ${res.candles.official} official candles (= catalog); ticks run saw ${res2.candles.fromTicks} built ones, ${differing} of them with a lower high`,
    );
  }, 60_000);

  it('the endpoint failing (503 on every candle request): after --candle-wait the tick-built candle is delivered, with a warning naming instrument, granularity and period, and counted', async () => {
    r = await rig({ start: START, feed: false, faults: { candleFailStatus: 503 } });
    const m1 = await catalogM1(START, 4);
    const ticks = ticksMissingHighs(m1);
    const end = START + 4 * 60_000;
    const rec = recorder(['EUR_USD:M1']);
    const { log, lines } = capture('warn');
    // Each attempt is one request (the HTTP client's own retries are off for candle fetches); the runner retries until the wait runs out.
    const runner = r.runner({
      strategy: rec.strategy,
      name: 'recorder',
      params: {},
      candleWaitMs: 1500,
      log,
    });
    await begin(r, runner);
    const t0 = Date.now();
    await drive(r, runner, ticks, end, [m1[3]!.bc, m1[3]!.ac]);
    await until(() => runner.candles.pending === 0, 10_000, 'the fallback');
    const waited = Date.now() - t0;
    const res = await runner.stop('end');
    expect(rec.seen.map((s) => fields(s.candle))).toEqual(builtFrom(ticks, 'M1', end).map(fields));
    expect(res.candles).toEqual({ source: 'endpoint', official: 0, fromTicks: 4, pending: 0, dropped: 0 });
    const warns = lines.filter(
      (l) => l.msg === 'official candle unavailable; the candle built from ticks is delivered instead',
    );
    // Fetches run side by side: warnings come as each gives up (deliveries stay in order, above).
    expect(warns.map((w) => `${w.instrument} ${w.granularity} ${w.candleTime}`).sort()).toEqual(
      m1.map((c) => `EUR_USD M1 ${formatTime(c.time)}`),
    );
    expect(
      warns.every(
        (w) =>
          String(w.reason).includes('HTTP 503') &&
          (w.attempts as number) >= 2 &&
          (w.waitedMs as number) >= 1450,
      ),
    ).toBe(true);
    expect(waited).toBeGreaterThanOrEqual(1450);
    console.log(
      `[live candles] 503 on every candle request: 4 tick-built candles after ${waited} ms (wait 1500 ms), first warning: ${JSON.stringify({ msg: warns[0]!.msg, instrument: warns[0]!.instrument, granularity: warns[0]!.granularity, candleTime: warns[0]!.candleTime, reason: warns[0]!.reason, attempts: warns[0]!.attempts, waitedMs: warns[0]!.waitedMs })}`,
    );
  }, 30_000);

  it('a candle the endpoint keeps incomplete falls back to the tick-built one; one that completes while the runner retries is delivered official', async () => {
    // v20 may mark a candle incomplete right after its close: the sandbox does so for 30 s (sandbox time).
    r = await rig({ start: START, feed: false, faults: { candleCompleteLagMs: 30_000 } });
    const m1 = await catalogM1(START, 2);
    const ticks = ticksMissingHighs(m1);
    const rec = recorder(['EUR_USD:M1']);
    const { log, lines } = capture('debug');
    // Attempts at about 0, 250, 750 and 1750 ms (the pause doubles), within the 3 s wait: long
    // enough that the check 300 ms into the second candle's retries holds on a loaded machine.
    const runner = r.runner({
      strategy: rec.strategy,
      name: 'recorder',
      params: {},
      candleWaitMs: 3000,
      log,
    });
    await begin(r, runner);
    // Minute 0 completes at 10:01:00 and the clock stays there: incomplete for the whole wait.
    await drive(r, runner, ticks.slice(0, 3), START + 60_000, [m1[1]!.bo, m1[1]!.ao]);
    await until(() => runner.candles.pending === 0, 10_000, 'the first candle');
    expect(runner.candles).toMatchObject({ official: 0, fromTicks: 1 });
    const warn = lines.find(
      (l) => l.msg === 'official candle unavailable; the candle built from ticks is delivered instead',
    );
    expect(warn).toMatchObject({
      instrument: 'EUR_USD',
      granularity: 'M1',
      candleTime: formatTime(START),
      reason: expect.stringContaining('the endpoint still marks the candle incomplete (complete: false)'),
    });
    expect(warn!.attempts as number).toBeGreaterThanOrEqual(2);
    // Minute 1 completes at 10:02:00; 300 ms later (retrying) the sandbox clock passes the lag.
    for (const [t, bid, ask] of [...ticks.slice(4), [START + 120_000, m1[1]!.bc, m1[1]!.ac] as const]) {
      r.sandbox.setTime(t);
      r.sandbox.pushPrice({ instrument: 'EUR_USD', bid, ask, time: t });
    }
    await waitTicks(runner, 7);
    await new Promise((res) => setTimeout(res, 300));
    expect(runner.candles.pending).toBe(1);
    r.sandbox.setTime(START + 120_000 + 30_000);
    await until(() => runner.candles.pending === 0, 10_000, 'the second candle');
    const res = await runner.stop('end');
    expect(res.candles).toEqual({ source: 'endpoint', official: 1, fromTicks: 1, pending: 0, dropped: 0 });
    expect(rec.seen.map((s) => fields(s.candle))).toEqual([
      fields(builtFrom(ticks.slice(0, 3), 'M1', START + 60_000)[0]!),
      fields(m1[1]!),
    ]);
    const retried = lines.find((l) => l.msg === 'official candle after retries');
    expect(retried).toMatchObject({
      instrument: 'EUR_USD',
      granularity: 'M1',
      candleTime: formatTime(START + 60_000),
    });
    console.log(
      `[live candles] incomplete for 30 s of sandbox time: minute 0 fell back after ${warn!.attempts} attempts (${warn!.waitedMs} ms); minute 1 official after ${retried!.attempts} attempts (${retried!.ms} ms)`,
    );
  }, 30_000);

  it('a slow fetch holds the later candles of its instrument, never its ticks; each candle keeps its close as time; the portfolio is marked at the latest tick after a late candle', async () => {
    // The first candle request takes 1.5 s, the others are answered at once.
    r = await rig({ start: START, feed: false, faults: { candleDelayMs: [1500, 0] } });
    const m1 = await catalogM1(START, 3);
    const ticks = ticksMissingHighs(m1);
    const rec = recorder(['EUR_USD:M1']);
    const runner = r.runner({ strategy: rec.strategy, name: 'recorder', params: {} });
    await begin(r, runner);
    const t0 = Date.now();
    // Minute 0 completes (slow fetch); minutes 1 and 2 complete 200 ms later (fast fetches).
    await drive(r, runner, ticks.slice(0, 4), START + 60_000 + 20_000, [m1[1]!.bl, m1[1]!.al]);
    await new Promise((res) => setTimeout(res, 200));
    const up = (x: number): number => Math.round((x + 0.0003) * 1e5) / 1e5;
    const late: [number, number, number][] = [
      ...ticks.slice(5),
      [START + 180_000, up(m1[2]!.bc), up(m1[2]!.ac)],
    ];
    for (const [t, bid, ask] of late) {
      r.sandbox.setTime(t);
      r.sandbox.pushPrice({ instrument: 'EUR_USD', bid, ask, time: t });
    }
    await waitTicks(runner, 5 + late.length);
    const ticksWhileWaiting = rec.ticks.length;
    expect(rec.seen).toEqual([]); // minutes 1 and 2 are fetched but wait behind minute 0
    expect(runner.candles.pending).toBe(3);
    await until(() => runner.candles.pending === 0, 10_000, 'the candles');
    const quote = runner.portfolio.quote('EUR_USD');
    const res = await runner.stop('end');
    expect(rec.seen.map((s) => fields(s.candle))).toEqual(m1.map(fields));
    expect(rec.seen.map((s) => s.now)).toEqual(m1.map((c) => c.at));
    // Ticks were not held: every price, up to the last one, reached the strategy before minute 0.
    expect(ticksWhileWaiting).toBe(5 + late.length);
    expect(rec.seen[0]!.ticksBefore).toBe(5 + late.length);
    expect(rec.seen[0]!.lastTickAt).toBe(START + 180_000);
    expect(rec.seen[0]!.wall - t0).toBeGreaterThanOrEqual(1400);
    // The last candle (close m1[2].bc) came after the last tick (bc + 3 pips): the mark is the tick's.
    expect(quote).toMatchObject({ bid: up(m1[2]!.bc), ask: up(m1[2]!.ac) });
    expect(res.candles).toEqual({ source: 'endpoint', official: 3, fromTicks: 0, pending: 0, dropped: 0 });
    console.log(
      `[live candles] first fetch 1.5 s: ${late.length + 5} ticks delivered meanwhile, then candles ${rec.seen.map((s) => new Date(s.candle.time).toISOString().slice(11, 16)).join(', ')} in order, ${rec.seen[0]!.wall - t0} ms after the first completed`,
    );
  }, 30_000);

  it('--broker sim (shadow paper) uses the endpoint too (market data only); on a quiet stream a heartbeat closes the bucket', async () => {
    r = await rig({ start: START, feed: false });
    const m1 = await catalogM1(START, 2);
    const ticks = ticksMissingHighs(m1);
    const rec = recorder(['EUR_USD:M1']);
    const runner = r.runner({ strategy: rec.strategy, name: 'recorder', params: {}, broker: 'sim' });
    await runner.start();
    await until(() => r!.sandbox.stats().streamConnections >= 1, 10_000, 'the pricing stream'); // no transaction stream with the simulator
    await drive(r, runner, ticks.slice(0, 3), START + 60_000, [m1[1]!.bo, m1[1]!.ao]); // minute 0 closed by a price
    for (const [t, bid, ask] of ticks.slice(4, 6)) {
      r.sandbox.setTime(t);
      r.sandbox.pushPrice({ instrument: 'EUR_USD', bid, ask, time: t });
    }
    await waitTicks(runner, 6);
    r.sandbox.setTime(START + 125_000); // no price after minute 1: only heartbeats (every 200 ms here)
    await until(() => rec.seen.length === 2, 10_000, 'minute 1 closed by a heartbeat');
    const res = await runner.stop('end');
    expect(rec.seen.map((s) => fields(s.candle))).toEqual(m1.map(fields));
    expect(res.candles).toEqual({ source: 'endpoint', official: 2, fromTicks: 0, pending: 0, dropped: 0 });
  }, 30_000);

  it('a stop waits for candles that completed before it; a kill does not', async () => {
    r = await rig({ start: START, feed: false, faults: { candleDelayMs: 400 } });
    const m1 = await catalogM1(START, 2);
    const ticks = ticksMissingHighs(m1);
    const rec = recorder(['EUR_USD:M1']);
    const runner = r.runner({ strategy: rec.strategy, name: 'recorder', params: {} });
    await begin(r, runner);
    await drive(r, runner, ticks.slice(0, 3), START + 60_000, [m1[1]!.bo, m1[1]!.ao]);
    expect(runner.candles.pending).toBe(1);
    const res = await runner.stop('end');
    expect(res.candles).toMatchObject({ official: 1, dropped: 0 });
    expect(rec.seen.map((s) => fields(s.candle))).toEqual([fields(m1[0]!)]);
    await r.close();

    r = await rig({ start: START, feed: false, faults: { candleDelayMs: 3000 } });
    const rec2 = recorder(['EUR_USD:M1']);
    const runner2 = r.runner({ strategy: rec2.strategy, name: 'recorder', params: {} });
    await begin(r, runner2);
    await drive(r, runner2, ticks.slice(0, 3), START + 60_000, [m1[1]!.bo, m1[1]!.ao]);
    const t0 = Date.now();
    const killed = await runner2.kill('test');
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(killed.candles).toMatchObject({ official: 0, fromTicks: 0, pending: 0, dropped: 1 });
    expect(rec2.seen).toEqual([]);
  }, 30_000);
});

describe('candle faults of the sandbox and the --candles flag', () => {
  it('the sandbox answers a bad candle fault with 400 naming the field; a served candle is incomplete within candleCompleteLagMs of its close', async () => {
    r = await rig({ start: START + 90_000 });
    const post = async (body: unknown) => {
      const res = await fetch(`${r!.sandbox.url}/sandbox/faults`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { errorMessage?: string } };
    };
    const bad = await post({ candleFailStatus: 404 });
    expect(bad.status).toBe(400);
    expect(bad.body.errorMessage).toContain('candleFailStatus must be 500, 502, 503 or 504');
    expect((await post({ candleDelayMs: [] })).body.errorMessage).toContain('candleDelayMs');
    expect((await post({ candleCompleteLagMs: -1 })).body.errorMessage).toContain('candleCompleteLagMs');
    expect((await post({ candleCompleteLagMs: 45_000 })).status).toBe(200);
    // Sandbox time 10:01:30: the 10:00 candle closed 30 s ago (incomplete), the 09:59 one 90 s ago.
    const { candles } = await r.rest.candles('EUR_USD', { granularity: 'M1', price: 'BA', count: 2 });
    expect(candles.map((c) => [c.time.slice(11, 16), c.complete])).toEqual([
      ['09:59', true],
      ['10:00', false],
    ]);
  });

  it('--candles takes endpoint or ticks, --candle-wait seconds >= 0; anything else is refused with a message saying what to give', () => {
    expect(candleOptionsOf({ candles: 'endpoint', candleWait: 10 })).toEqual({
      candles: 'endpoint',
      candleWaitMs: 10_000,
    });
    expect(candleOptionsOf({ candles: 'ticks', candleWait: 0.5 })).toEqual({
      candles: 'ticks',
      candleWaitMs: 500,
    });
    expect(() => candleOptionsOf({ candles: 'tick', candleWait: 10 })).toThrow(
      /--candles must be 'endpoint' .* or 'ticks' .*got "tick"/,
    );
    expect(() => candleOptionsOf({ candles: 'endpoint', candleWait: Number.NaN })).toThrow(
      /--candle-wait must be a number of seconds >= 0/,
    );
    expect(() => candleOptionsOf({ candles: 'endpoint', candleWait: -1 })).toThrow(/--candle-wait/);
  });
});
