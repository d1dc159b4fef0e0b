import type { Candle } from '../../domain/candle.ts';
import type { Granularity } from '../../domain/granularity.ts';
import { loadInstruments, type InstrumentRegistry } from '../../domain/instrument.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { SimBroker, type SimBrokerOptions } from './broker.ts';

/**
 * Test helpers for the simulated broker: candles from compact specs and a broker whose emitted
 * transactions are collected. Used by the broker's unit and property tests and by the golden tests.
 */
export const MINUTE = 60_000;
export const T0 = Date.UTC(2024, 0, 2, 10, 0); // a Tuesday, 10:00 UTC

let registry: InstrumentRegistry | undefined;
export function instruments(): InstrumentRegistry {
  registry ??= loadInstruments();
  return registry;
}

/** A two-sided candle: bid OHLC given, ask = bid + spread on every price. */
export function candle(
  instrument: string,
  time: number,
  bid: readonly [number, number, number, number],
  spread = 0.0002,
  granularity: Granularity = 'M1',
  span = MINUTE,
): Candle {
  const [o, h, l, c] = bid;
  const r = (x: number): number => Math.round(x * 1e6) / 1e6;
  return {
    kind: 'candle',
    instrument,
    granularity,
    time,
    at: time + span,
    bo: o,
    bh: h,
    bl: l,
    bc: c,
    ao: r(o + spread),
    ah: r(h + spread),
    al: r(l + spread),
    ac: r(c + spread),
    volume: 100,
    complete: true,
  };
}

export interface Harness {
  readonly sim: SimBroker;
  readonly txs: Transaction[];
  submit(intent: OrderIntent): Transaction[];
  feed(c: Candle): Transaction[];
}

export function harness(opts: Partial<SimBrokerOptions> = {}, start = T0 - MINUTE): Harness {
  const sim = new SimBroker({
    instruments: instruments(),
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
    ...opts,
  });
  const txs: Transaction[] = [];
  sim.transactions$.subscribe((t) => txs.push(t));
  sim.start(start);
  const since = (n: number): Transaction[] => txs.slice(n);
  return {
    sim,
    txs,
    submit(intent) {
      const n = txs.length;
      sim.submit(intent);
      return since(n);
    },
    feed(c) {
      const n = txs.length;
      sim.onEvent(c);
      return since(n);
    },
  };
}

let seq = 0;
/** A market order intent in v20 request form. */
export function market(instrument: string, units: string, extra: Record<string, unknown> = {}): OrderIntent {
  const id = `t-${++seq}`;
  return { kind: 'order', id, request: { type: 'MARKET', instrument, units, ...extra } as never };
}

export function pending(
  type: 'LIMIT' | 'STOP' | 'MARKET_IF_TOUCHED',
  instrument: string,
  units: string,
  price: string,
  extra: Record<string, unknown> = {},
): OrderIntent {
  const id = `t-${++seq}`;
  return { kind: 'order', id, request: { type, instrument, units, price, ...extra } as never };
}

/** Field access on a transaction of any type (tests only). */
export function f(tx: Transaction | undefined, field: string): unknown {
  return (tx as unknown as Record<string, unknown> | undefined)?.[field];
}
