// The floor of the whole-process bench: a plain Node program (no TypeScript, no fxflow) that reads
// the same one-sided CSV as `fxflow backtest --data` and runs a hand-written SMA(10)/SMA(30)
// crossover on it, long-only, as the bench's backtest does. It parses each row's time and OHLC
// (what a backtest needs of a candle) and counts the position changes. Prints one JSON line.
//   node test/bench/floor-sma.mjs <file.csv>
import { createReadStream } from 'node:fs';

const file = process.argv[2];
const fast = new Float64Array(10);
const slow = new Float64Array(30);
let fastSum = 0;
let slowSum = 0;
let n = 0;
let signal = 0;
let changes = 0;
let carry = '';
let header = true;
let last = 0;
let entry = 0;
let pl = 0;

function row(line) {
  if (header) {
    header = false;
    return;
  }
  const f = line.split(',');
  const t = Date.parse(f[0]);
  const o = +f[1];
  const h = +f[2];
  const l = +f[3];
  const c = +f[4];
  if (!(t > last) || !(l <= o && o <= h && l <= c && c <= h)) throw new Error(`bad row ${line}`);
  last = t;
  fastSum += c - fast[n % 10];
  fast[n % 10] = c;
  slowSum += c - slow[n % 30];
  slow[n % 30] = c;
  n++;
  if (n < 30) return;
  const s = fastSum / 10 > slowSum / 30 ? 1 : fastSum / 10 < slowSum / 30 ? -1 : signal;
  if (s === signal) return;
  if (signal > 0) pl += (c - entry) * 10_000;
  if (s > 0) entry = c;
  signal = s;
  changes++;
}

for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 16 })) {
  const lines = (carry + chunk).split('\n');
  carry = lines.pop();
  for (const line of lines) if (line.length > 0) row(line);
}
if (carry.length > 0) row(carry);
const u = process.resourceUsage();
console.log(
  JSON.stringify({
    candles: n,
    changes,
    pl: Math.round(pl * 100) / 100,
    cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000,
    peakRssMB: u.maxRSS / 1024,
  }),
);
