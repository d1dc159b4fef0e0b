/**
 * Tick-to-order latency of `fxflow run`, in process: from a price reaching the runner (parsed from
 * the pricing stream line) to the order request's headers written to the socket (undici's
 * `undici:client:sendHeaders` diagnostics channel), through the engine, the strategy, the journal
 * (intent + state written; fdatasync right after the request by default), the risk checks and the v20 execution queue.
 *
 * A local sandbox on 127.0.0.1 serves the account; a strategy orders on every price. Prices are sent
 * one at a time (the next after the previous order settled), so each measurement is one tick's path.
 *
 * Call `benchLatency()` from `npm run bench`, or run this file:
 *   node --import tsx test/bench/latency.ts [--ticks 2000]
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { InputRecorder } from '../../src/runner/recording/input-recorder.ts';
import { Runner } from '../../src/runner/session/runner.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { assemble } from '../../src/app/assembly.ts';

export interface LatencyFigures {
  readonly ticks: number;
  readonly orders: number;
  /** Milliseconds, price received → order request written. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** With `intentDurability: 'before-submit'` (fdatasync before the order is sent). */
  readonly beforeSubmit: { readonly p50: number; readonly p99: number; readonly max: number };
  /** With the journal's fdatasync switched off (what durability costs). */
  readonly noSync: { readonly p50: number; readonly p99: number; readonly max: number };
  /** The default with the run folder's input recorder on (what `fxflow run` does). */
  readonly recording: { readonly p50: number; readonly p99: number; readonly max: number };
  /** The recorder alone: ns per recorded tick (string, buffer, gzip), over 1M ticks. */
  readonly recorderNsPerTick: number;
}

const everyTick = defineStrategy({
  params: {},
  subscribe: { ticks: ['EUR_USD'] },
  onTick(ctx) {
    return [ctx.market('EUR_USD', ctx.position('EUR_USD').net > 0 ? '-1000' : '1000')];
  },
});

const recorderFor = (dir: string): InputRecorder =>
  new InputRecorder({
    dir,
    meta: {
      fxflow: 'bench',
      strategy: { file: 'latency', name: 'latency', sha256: '' },
      params: {},
      env: 'sandbox',
      accountID: '',
      broker: 'v20',
      subscriptions: { candles: [], ticks: ['EUR_USD'], signals: [], calendar: [] },
      config: {},
    },
  });

async function measure(
  ticks: number,
  sync: boolean,
  durability: 'before-submit' | 'after-submit' = 'after-submit',
  record = false,
): Promise<{ p50: number; p99: number; max: number; orders: number }> {
  const sandbox = await startSandbox({ heartbeatMs: 1000 });
  const log = pino({ level: 'silent' });
  const http = new V20Http({
    baseUrl: sandbox.url,
    log,
    rate: { perSecond: 100_000, burst: 100_000 },
    connectionsPerSecond: 100,
  });
  const rest = new V20Rest(http);
  const accountID = sandbox.accountIDs[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-latency-'));
  const runner = new Runner({
    assemble,
    strategy: everyTick as never,
    name: 'latency',
    params: {},
    http,
    rest,
    accountID,
    instruments: loadInstruments(),
    journalDir: dir,
    journalSync: sync,
    intentDurability: durability,
    log,
    statusEveryMs: 0,
    warmup: 0,
    ...(record ? { recorder: recorderFor(dir) } : {}),
  });
  const samples: number[] = [];
  const onSend = (m: unknown): void => {
    const req = (m as { request?: { method?: string; path?: string } }).request;
    if (req?.method === 'POST' && req.path?.endsWith('/orders'))
      samples.push(performance.now() - runner.tickReceivedAt);
  };
  subscribe('undici:client:sendHeaders', onSend);
  try {
    await runner.start();
    const t0 = Date.UTC(2024, 0, 2, 10);
    for (let i = 0; i < ticks; i++) {
      const bid = 1.1 + 0.0001 * Math.sin(i / 5);
      const time = t0 + (i + 1) * 1000;
      sandbox.setTime(time);
      sandbox.pushPrice({
        instrument: 'EUR_USD',
        bid: bid.toFixed(5),
        ask: (bid + 0.00015).toFixed(5),
        time,
      });
      const deadline = Date.now() + 10_000;
      while (samples.length < i + 1 || Number(runner.journal.lastTransactionID) < 2 + 2 * (i + 1)) {
        if (Date.now() > deadline) throw new Error(`latency bench: tick ${i} got no order`);
        await new Promise((r) => setImmediate(r));
      }
    }
    const inner = runner.latency.snapshot();
    if (process.env.FXFLOW_LATENCY_DEBUG)
      process.stdout.write(
        `  (tick → submit: p50 ${inner.p50.toFixed(3)} p99 ${inner.p99.toFixed(3)} max ${inner.max.toFixed(3)})\n`,
      );
    await runner.stop('bench');
  } finally {
    unsubscribe('undici:client:sendHeaders', onSend);
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number): number => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { p50: q(0.5), p99: q(0.99), max: s[s.length - 1]!, orders: s.length };
}

/** The input recorder alone: ns per tick recorded (string, buffer, gzip hand-off), best of 3 rounds of `n`. */
export async function benchRecorder(n = 1_000_000): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-recorder-'));
    const rec = recorderFor(dir);
    rec.start({
      runId: 'bench',
      clientIdPrefix: 'bench',
      sequence: 0,
      restoredState: false,
      account: { broker: 'sim', currency: 'USD', marginRate: '0.02', hedging: false, deposit: '0' },
    });
    const t0 = Date.UTC(2024, 0, 2, 10);
    const start = performance.now();
    for (let i = 0; i < n; i++)
      rec.tick('EUR_USD', t0 + i * 250, 1.1 + (i % 100) * 0.00001, 1.10015 + (i % 100) * 0.00001, start + i);
    const ns = ((performance.now() - start) * 1e6) / n;
    await rec.stop('bench');
    rmSync(dir, { recursive: true, force: true });
    best = Math.min(best, ns);
  }
  return best;
}

/** Measures and prints tick-to-order latency (p50/p99/max, ms); target p99 < 1 ms. */
export async function benchLatency(o: { ticks?: number } = {}): Promise<LatencyFigures> {
  const ticks = o.ticks ?? 2000;
  // A short warm-up run first so JIT compilation is not measured.
  await measure(Math.min(200, ticks), true);
  const synced = await measure(ticks, true);
  const before = await measure(ticks, true, 'before-submit');
  const unsynced = await measure(ticks, false);
  const recording = await measure(ticks, true, 'after-submit', true);
  const recorderNs = await benchRecorder();
  const f = (x: number): string => x.toFixed(3);
  process.stdout.write(
    `tick-to-order latency (${ticks} ticks, ${synced.orders} orders; price received → order request written):\n` +
      `  default (intent written before, fdatasync after submit): p50 ${f(synced.p50)} ms  p99 ${f(synced.p99)} ms  max ${f(synced.max)} ms   (target p99 < 1 ms)\n` +
      `  intentDurability before-submit (fdatasync first)      : p50 ${f(before.p50)} ms  p99 ${f(before.p99)} ms  max ${f(before.max)} ms\n` +
      `  journal fdatasync off                                 : p50 ${f(unsynced.p50)} ms  p99 ${f(unsynced.p99)} ms  max ${f(unsynced.max)} ms\n` +
      `  default + the run folder's input recorder (fxflow run): p50 ${f(recording.p50)} ms  p99 ${f(recording.p99)} ms  max ${f(recording.max)} ms\n` +
      `  the input recorder alone: ${recorderNs.toFixed(0)} ns a tick (1M ticks, best of 3)\n`,
  );
  return {
    ticks,
    orders: synced.orders,
    p50: synced.p50,
    p99: synced.p99,
    max: synced.max,
    beforeSubmit: { p50: before.p50, p99: before.p99, max: before.max },
    noSync: { p50: unsynced.p50, p99: unsynced.p99, max: unsynced.max },
    recording: { p50: recording.p50, p99: recording.p99, max: recording.max },
    recorderNsPerTick: recorderNs,
  };
}

/**
 * A/B of the input recorder, interleaved: rounds alternate a run without and a run with it (the
 * machine's load hits both alike); prints each round and the medians of p50 and p99.
 */
export async function abRecorder(rounds: number, ticks: number): Promise<void> {
  await measure(Math.min(200, ticks), true);
  const off: { p50: number; p99: number }[] = [];
  const on: { p50: number; p99: number }[] = [];
  for (let k = 0; k < rounds; k++) {
    const a = await measure(ticks, true, 'after-submit', k % 2 === 1);
    const b = await measure(ticks, true, 'after-submit', k % 2 === 0);
    (k % 2 === 1 ? on : off).push(a);
    (k % 2 === 0 ? on : off).push(b);
    process.stdout.write(
      `round ${k + 1}: without p50 ${(k % 2 === 1 ? b : a).p50.toFixed(3)} p99 ${(k % 2 === 1 ? b : a).p99.toFixed(3)} | with p50 ${(k % 2 === 1 ? a : b).p50.toFixed(3)} p99 ${(k % 2 === 1 ? a : b).p99.toFixed(3)} ms\n`,
    );
  }
  const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  process.stdout.write(
    `medians over ${rounds} rounds of ${ticks} ticks: without the recorder p50 ${med(off.map((x) => x.p50)).toFixed(3)} ms p99 ${med(off.map((x) => x.p99)).toFixed(3)} ms; with it p50 ${med(on.map((x) => x.p50)).toFixed(3)} ms p99 ${med(on.map((x) => x.p99)).toFixed(3)} ms\n`,
  );
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const i = process.argv.indexOf('--ticks');
  const ticks = i >= 0 ? Number(process.argv[i + 1]) : 2000;
  const ab = process.argv.indexOf('--ab-recorder');
  if (ab >= 0) {
    await abRecorder(Number(process.argv[ab + 1] ?? 6), ticks);
    process.exit(0);
  }
  const figures = await benchLatency({ ticks });
  process.stdout.write(`${JSON.stringify({ latency: figures })}\n`);
}
