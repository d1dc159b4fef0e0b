/**
 * `npm run bench`: SMA(10)/SMA(30) crossover over generated bid/ask M1 candles, through the real
 * engine, simulated broker and portfolio, against a hand-written loop doing the same trading on the
 * same candles. Each measurement runs in its own child process so peak RSS is its own.
 *
 * Prints a table, then one JSON line with the figures (the last line of output).
 *   npm run bench                       # 1,000,000 candles
 *   npm run bench -- --candles 250000   # another size
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { syntheticBatches } from '../../src/adapters/catalog/synthetic.ts';
import type { Candle } from '../../src/domain/candle.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import { runBacktest } from '../../src/cli/backtest.ts';
import { loadConfig } from '../../src/cli/config.ts';
import { loadStrategy } from '../../src/cli/load-strategy.ts';

const FROM = Date.UTC(2019, 0, 1);
const TO = Date.UTC(2024, 0, 1);
const SEED = 20240101;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** The first `n` generated EUR_USD M1 candles, streamed in batches (never all in memory). */
function* candles(n: number): Generator<readonly Candle[]> {
  let left = n;
  for (const batch of syntheticBatches({ instrument: 'EUR_USD', granularity: 'M1', from: FROM, to: TO, seed: SEED })) {
    if (batch.length >= left) {
      yield batch.slice(0, left);
      return;
    }
    left -= batch.length;
    yield batch;
  }
  throw new Error(`the generator produced fewer than ${n} candles between ${new Date(FROM).toISOString()} and ${new Date(TO).toISOString()}`);
}

interface Figures {
  mode: 'engine' | 'loop';
  candles: number;
  wallMs: number;
  processMs: number;
  candlesPerSec: number;
  peakRssMB: number;
  fills: number;
  finalBalance: number;
}

async function engineRun(n: number): Promise<Figures> {
  const config = loadConfig(undefined, { run: { instrument: 'EUR_USD', granularity: 'M1', from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() }, costs: { financing: false } });
  const loaded = await loadStrategy(fileURLToPath(new URL('../../strategies/sma-cross.ts', import.meta.url)), ['instrument=EUR_USD', 'granularity=M1', 'component=M', 'fast=10', 'slow=30']);
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const t0 = performance.now();
  const r = await runBacktest({
    loaded,
    config,
    instruments: loadInstruments(),
    candles: async function* () {
      yield* candles(n);
    },
    log: silent,
  });
  const wallMs = performance.now() - t0;
  return {
    mode: 'engine',
    candles: r.engine.candles,
    wallMs,
    processMs: performance.now(),
    candlesPerSec: r.engine.candles / (wallMs / 1000),
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    fills: r.sim.fills,
    finalBalance: r.summary.finalBalance,
  };
}

/**
 * The hand-written loop: the same decisions and fills with plain numbers and no framework.
 * SMAs on mid closes; on a change of sign, a market order for the difference to the target
 * position, filled at the next candle's open on the ask (buy) or bid (sell); P/L in USD.
 */
function loopRun(n: number): Figures {
  const t0 = performance.now();
  const fastN = 10, slowN = 30;
  const fb = new Float64Array(fastN), sb = new Float64Array(slowN);
  let fi = 0, si = 0, fc = 0, sc = 0, fs = 0, ss = 0;
  let signal = 0, pending = 0, position = 0, avg = 0, balance = 100000, fills = 0, count = 0;
  for (const batch of candles(n)) {
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      count++;
      if (pending !== 0) {
        const px = pending > 0 ? c.ao : c.bo;
        // Reduce first, then open the rest (netting).
        if (position !== 0 && Math.sign(position) !== Math.sign(pending)) {
          const closing = Math.min(Math.abs(pending), Math.abs(position)) * Math.sign(position);
          balance += Math.round((px - avg) * closing * 1e4) / 1e4;
          position -= closing;
          const rest = pending + closing;
          if (rest !== 0) {
            position = rest;
            avg = px;
          }
        } else {
          avg = position === 0 ? px : (avg * position + px * pending) / (position + pending);
          position += pending;
        }
        fills++;
        pending = 0;
      }
      const mid = (c.bc + c.ac) / 2;
      fs += mid - fb[fi]!; fb[fi] = mid; fi = fi + 1 === fastN ? 0 : fi + 1; if (fc < fastN) fc++;
      ss += mid - sb[si]!; sb[si] = mid; si = si + 1 === slowN ? 0 : si + 1; if (sc < slowN) sc++;
      if (sc < slowN) continue;
      const f = fs / fastN, s = ss / slowN;
      const sig = f > s ? 1 : f < s ? -1 : signal;
      if (sig !== signal) {
        signal = sig;
        pending = sig * 10000 - position;
      }
    }
  }
  const wallMs = performance.now() - t0;
  return {
    mode: 'loop',
    candles: count,
    wallMs,
    processMs: performance.now(),
    candlesPerSec: count / (wallMs / 1000),
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    fills,
    finalBalance: balance,
  };
}

function child(mode: string, n: number): Figures {
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', mode, '--candles', String(n)], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop()!) as Figures;
}

async function main(): Promise<void> {
  const mode = arg('child', '');
  const n = Number(arg('candles', '1000000'));
  if (mode === 'engine') {
    console.log(JSON.stringify(await engineRun(n)));
    return;
  }
  if (mode === 'loop') {
    console.log(JSON.stringify(loopRun(n)));
    return;
  }
  const engine = child('engine', n);
  const loop = child('loop', n);
  const quarter = child('engine', Math.floor(n / 4));
  const ratio = loop.candlesPerSec / engine.candlesPerSec;
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
  const rows = [
    ['', 'candles', 'wall s', 'process s', 'candles/s', 'peak RSS MB', 'fills'],
    ['engine', fmt(engine.candles), (engine.wallMs / 1000).toFixed(3), (engine.processMs / 1000).toFixed(3), fmt(engine.candlesPerSec), engine.peakRssMB.toFixed(1), String(engine.fills)],
    ['hand loop', fmt(loop.candles), (loop.wallMs / 1000).toFixed(3), (loop.processMs / 1000).toFixed(3), fmt(loop.candlesPerSec), loop.peakRssMB.toFixed(1), String(loop.fills)],
    [`engine ¼`, fmt(quarter.candles), (quarter.wallMs / 1000).toFixed(3), (quarter.processMs / 1000).toFixed(3), fmt(quarter.candlesPerSec), quarter.peakRssMB.toFixed(1), String(quarter.fills)],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  const rssGrowth = engine.peakRssMB / quarter.peakRssMB;
  console.log(`engine is ${ratio.toFixed(2)}× slower than the hand-written loop (target ≤ 2×); peak RSS ×${rssGrowth.toFixed(2)} for 4× the candles`);
  if (engine.fills !== loop.fills) console.log(`note: fills differ (engine ${engine.fills}, loop ${loop.fills})`);
  console.log(
    JSON.stringify({
      candles: engine.candles,
      engine: { candlesPerSec: Math.round(engine.candlesPerSec), wallMs: Math.round(engine.wallMs), processMs: Math.round(engine.processMs), peakRssMB: Math.round(engine.peakRssMB), fills: engine.fills },
      loop: { candlesPerSec: Math.round(loop.candlesPerSec), wallMs: Math.round(loop.wallMs), processMs: Math.round(loop.processMs), peakRssMB: Math.round(loop.peakRssMB), fills: loop.fills },
      ratio: Number(ratio.toFixed(3)),
      quarter: { candles: quarter.candles, peakRssMB: Math.round(quarter.peakRssMB) },
      rssGrowth: Number(rssGrowth.toFixed(3)),
      targets: { candlesPerSec: engine.candlesPerSec >= 1_000_000, ratio: ratio <= 2 },
    }),
  );
}

await main();
