/**
 * Byte-identity check for changes to the simulator's fill path: runs generated EUR_USD M1 candles
 * through a SimBroker in a netting and a hedging account, with commission, client order and trade
 * IDs, TP/SL/trailing stops by distance, stop losses and take profits by price, on-fill orders with
 * their own client IDs and GTD times, GTD limit orders with on-fill exits, trade closes, cancels by
 * client ID, dependent-order replacements and position closes, and hashes every transaction's JSON
 * text (so field order counts) in delivery order. Two builds that print the same hashes deliver the
 * same transactions, byte for byte.
 *
 *   node --import tsx test/bench/tx-hash.ts                       # this checkout, 200,000 candles
 *   node --import tsx test/bench/tx-hash.ts --root /path/to/other  # another checkout's src/
 *   node --import tsx test/bench/tx-hash.ts --candles 50000
 *
 * Prints one JSON line per account and a combined line: transactions, fills, final balance, sha256.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const root = resolve(arg('root', new URL('../..', import.meta.url).pathname));
const n = Number(arg('candles', '200000'));
if (!Number.isInteger(n) || n < 1000) {
  console.error(`--candles must be a whole number of at least 1000 (got '${arg('candles', '')}')`);
  process.exit(64);
}

type Candle = { time: number; at: number; bc: number; ac: number };
type Sim = {
  onEvent(ev: unknown): void;
  submit(intent: unknown): void;
  listen(l: (tx: unknown) => void): () => void;
  ledger: {
    balance: number;
    trades: Map<string, { id: string }>;
    position(i: string): { long: number; short: number };
  };
  stats: { fills: number };
};

const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(`${root}/${rel}`).href)) as T;
const { SimBroker } = await load<{ SimBroker: new (o: unknown) => Sim }>('src/adapters/sim/broker.ts');
const { loadInstruments } = await load<{ loadInstruments: () => unknown }>('src/domain/instrument.ts');
const { syntheticBatches } = await load<{ syntheticBatches: (s: unknown) => Iterable<readonly Candle[]> }>(
  'src/adapters/catalog/synthetic.ts',
);

const instruments = loadInstruments();
const iso = (ms: number): string => new Date(ms).toISOString();

function run(hedging: boolean): {
  account: string;
  transactions: number;
  fills: number;
  balance: number;
  sha256: string;
} {
  const sim = new SimBroker({
    instruments,
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: true,
    hedging,
    commissionPerMillion: '45',
  });
  const hash = createHash('sha256');
  let transactions = 0;
  const stop = sim.listen((tx) => {
    transactions++;
    hash.update(JSON.stringify(tx));
    hash.update('\n');
  });
  let i = 0;
  let seq = 0;
  let side = 1;
  let left = n;
  const p = (x: number): string => x.toFixed(5);
  outer: for (const batch of syntheticBatches({
    instrument: 'EUR_USD',
    granularity: 'M1',
    from: Date.UTC(2019, 0, 1),
    to: Date.UTC(2024, 0, 1),
    seed: 20240101,
  })) {
    for (let k = 0; k < batch.length; k++, i++) {
      if (left-- === 0) break outer;
      const c = batch[k]!;
      sim.onEvent(c);
      const mid = (c.bc + c.ac) / 2;
      const id = `c${++seq}`;
      if (i % 25 === 24) {
        // A reversal (netting) or a new trade (hedging) with TP/SL/trailing by distance; every third
        // with a client trade ID, every seventh with on-fill orders carrying their own client IDs.
        const { long, short } = sim.ledger.position('EUR_USD');
        side = -side;
        const units = hedging ? side * 10_000 : side * 10_000 - (long + short);
        if (units === 0) continue;
        const r: Record<string, unknown> = {
          type: 'MARKET',
          instrument: 'EUR_USD',
          units: String(units),
          takeProfitOnFill:
            i % 7 === 3
              ? { distance: '0.00150', clientExtensions: { id: `tp-${id}`, tag: 'x' } }
              : { distance: '0.00150' },
          stopLossOnFill: { distance: '0.00100' },
          trailingStopLossOnFill: { distance: '0.00080' },
          clientExtensions: { id },
        };
        if (i % 75 === 74) r.tradeClientExtensions = { id: `t-${id}`, comment: 'c' };
        sim.submit({ kind: 'order', id, request: r });
      } else if (i % 40 === 13) {
        // Exits by price, one of them GTD.
        const units = i % 80 === 13 ? 3_000 : -3_000;
        const dir = units > 0 ? 1 : -1;
        sim.submit({
          kind: 'order',
          id,
          request: {
            type: 'MARKET',
            instrument: 'EUR_USD',
            units: String(units),
            positionFill: hedging ? 'DEFAULT' : 'OPEN_ONLY',
            takeProfitOnFill: { price: p(mid + dir * 0.002) },
            stopLossOnFill: {
              price: p(mid - dir * 0.0012),
              timeInForce: 'GTD',
              gtdTime: iso(c.at + 3 * 3600_000),
            },
          },
        });
      } else if (i % 60 === 29) {
        // A GTD limit below (or above) the market with on-fill exits; some of them GTD themselves.
        const buy = i % 120 === 29;
        sim.submit({
          kind: 'order',
          id,
          request: {
            type: 'LIMIT',
            instrument: 'EUR_USD',
            units: buy ? '2000' : '-2000',
            price: p(buy ? mid - 0.0004 : mid + 0.0004),
            timeInForce: 'GTD',
            gtdTime: iso(c.at + 90 * 60_000),
            takeProfitOnFill: { distance: '0.00120' },
            stopLossOnFill:
              i % 180 === 29
                ? { distance: '0.00090', timeInForce: 'GTD', gtdTime: iso(c.at + 6 * 3600_000) }
                : { distance: '0.00090' },
            clientExtensions: { id, tag: 'limit' },
            tradeClientExtensions: i % 240 === 29 ? { id: `lt-${id}` } : undefined,
          },
        });
      } else if (i % 60 === 45) {
        // Cancel the limit of 16 candles ago by its client ID (it may have filled or expired: a reject then).
        sim.submit({ kind: 'cancel', id, orderSpecifier: `@c${seq - 16}` });
      } else if (i % 90 === 50) {
        // Replace the oldest trade's stop loss by a price, or close a trade by halves.
        const first = sim.ledger.trades.values().next().value;
        if (first !== undefined) {
          if (i % 180 === 50)
            sim.submit({
              kind: 'tradeOrders',
              id,
              tradeSpecifier: first.id,
              stopLoss: { distance: '0.00200' },
              takeProfit: null,
            });
          else sim.submit({ kind: 'closeTrade', id, tradeSpecifier: first.id, units: 'ALL' });
        }
      } else if (hedging && i % 500 === 499) {
        sim.submit({ kind: 'closePosition', id, instrument: 'EUR_USD', longUnits: 'ALL', shortUnits: 'ALL' });
      }
    }
  }
  stop();
  return {
    account: hedging ? 'hedging' : 'netting',
    transactions,
    fills: sim.stats.fills,
    balance: sim.ledger.balance,
    sha256: hash.digest('hex'),
  };
}

const a = run(false);
const b = run(true);
console.log(JSON.stringify(a));
console.log(JSON.stringify(b));
console.log(
  JSON.stringify({
    root,
    candles: n,
    transactions: a.transactions + b.transactions,
    sha256: createHash('sha256')
      .update(a.sha256 + b.sha256)
      .digest('hex'),
  }),
);
