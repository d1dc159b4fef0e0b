/**
 * transactions.jsonl's serialiser against JSON.stringify, alternated in one process: the
 * transactions of the bench's simulator scenario (sim-scenario.ts: fills, on-fill take profits,
 * stop losses and trailing stops, their cancels) are collected once, then each round writes every
 * one of them with `JSON.stringify` and with `transactionJson` (src/domain/v20/transaction-json.ts),
 * in turn, and the fastest round of each is kept. Fails if any text differs.
 *
 *   node --import tsx test/bench/tx-json.ts [--candles 100000] [--rounds 10]
 *
 * Prints one JSON line: transactions, µs a transaction for each, and their ratio.
 */
import { transactionJson } from '../../src/domain/v20/transaction-json.ts';
import { arg, feed, loadSim } from './sim-scenario.ts';

const n = Number(arg('candles', '100000'));
const rounds = Number(arg('rounds', '10'));
const here = await loadSim();
here.tuneV8();
const sim = here.newSim();
const txs: object[] = [];
const stop = sim.listen((tx) => txs.push(tx as object));
feed(sim, here.candles(n), true);
stop();

for (const tx of txs) {
  if (transactionJson(tx) !== JSON.stringify(tx)) {
    console.error(`transactionJson differs from JSON.stringify on ${JSON.stringify(tx)}`);
    process.exit(1);
  }
}

/** The line buffer, as the run folder's LineFile fills it (src/app/line-file.ts), rewound when full instead of written. */
const buf = Buffer.allocUnsafe(1 << 20);

/** CPU ms to write every transaction's line with `write` into the buffer, as the run folder does. */
function round(write: (tx: object) => string): number {
  let used = 0;
  const c0 = process.cpuUsage();
  for (let i = 0; i < txs.length; i++) {
    const text = write(txs[i]!);
    if (used + text.length * 3 + 1 > buf.length) used = 0;
    used += buf.write(text, used, 'utf8');
    buf[used++] = 10;
  }
  const c = process.cpuUsage(c0);
  if (used === 0) throw new Error('nothing written');
  return (c.user + c.system) / 1000;
}

let stringify = Infinity;
let direct = Infinity;
for (let r = 0; r < rounds; r++) {
  if (r % 2 === 0) {
    stringify = Math.min(stringify, round(JSON.stringify));
    direct = Math.min(direct, round(transactionJson));
  } else {
    direct = Math.min(direct, round(transactionJson));
    stringify = Math.min(stringify, round(JSON.stringify));
  }
}
const us = (ms: number): number => +((ms * 1000) / txs.length).toFixed(3);
console.log(
  JSON.stringify({
    transactions: txs.length,
    stringifyUsPerTx: us(stringify),
    serialiserUsPerTx: us(direct),
    ratio: +(direct / stringify).toFixed(2),
  }),
);
