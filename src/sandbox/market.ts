/** The sandbox's market: its clock, each instrument's last quote, and the prices and time moves every account's broker hears. */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DataError, gateSeries, type Catalog } from '../adapters/catalog/index.ts';
import type { Candle } from '../domain/candle.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { formatTime, type UnixMs } from '../domain/time.ts';
import type { SandboxAccount } from './account.ts';
import { Replay } from './replay.ts';
import { HttpError } from './v3/context.ts';

/** The instruments the replay clock feeds and the manual clock opens with (the bundled sample's). */
export const FEED_INSTRUMENTS: readonly string[] = ['EUR_USD', 'GBP_USD', 'USD_JPY'];

/** A price as the control and the replay give it: numbers, a time (never before the clock) and an optional liquidity. */
export interface PriceIn {
  instrument: string;
  bid: number;
  ask: number;
  time?: number;
  liquidity?: number;
}

interface Quote {
  bid: number;
  ask: number;
  time: UnixMs;
  liquidity: number;
}

/**
 * The sandbox clock and its prices. Time never moves back; a price moves it to the price's time,
 * releases the orders the latency fault held back until then, and reaches every account's broker
 * before `onPrice` (the streams) hears it.
 */
export class SandboxMarket {
  #now: UnixMs;
  readonly #quotes = new Map<string, Quote>();
  /** Instruments whose last price gave its liquidity (the others have unlimited liquidity in the simulator). */
  readonly #limited = new Set<string>();

  constructor(
    private readonly o: {
      start: UnixMs;
      accounts: ReadonlyMap<string, SandboxAccount>;
      instruments: InstrumentRegistry;
      /** false: every market open at every time (`SandboxOptions.marketHours`). */
      marketHours: boolean;
      /** After the brokers: the price's fan-out to the streams. */
      onPrice?: (instrument: string) => void;
    },
  ) {
    this.#now = o.start;
  }

  /** The sandbox clock, epoch ms. */
  get now(): UnixMs {
    return this.#now;
  }

  /** The time of an instrument's last price, if it has one. */
  quoteTime(instrument: string): UnixMs | undefined {
    return this.#quotes.get(instrument)?.time;
  }

  /** A price: checked (a 400 naming what is wrong), then to every account's broker and the streams. */
  tick(p: PriceIn): void {
    if (!this.o.instruments.has(p.instrument))
      throw new HttpError(
        400,
        `Invalid value specified for 'instrument': '${p.instrument}' is not a known instrument`,
        'INVALID_INSTRUMENT',
      );
    if (!(Number.isFinite(p.bid) && Number.isFinite(p.ask) && p.bid > 0 && p.ask >= p.bid)) {
      throw new HttpError(
        400,
        `Invalid price for ${p.instrument}: 'bid' and 'ask' must be positive numbers with ask >= bid (got bid ${p.bid}, ask ${p.ask})`,
      );
    }
    const at = Math.max(p.time ?? this.#now, this.#now);
    // Orders the latency fault held back that arrive before this price meet the prices of their arrival.
    this.#release(at, p.instrument);
    this.#now = at;
    this.#quotes.set(p.instrument, {
      bid: p.bid,
      ask: p.ask,
      time: at,
      liquidity: p.liquidity ?? 10_000_000,
    });
    if (p.liquidity !== undefined) this.#limited.add(p.instrument);
    else this.#limited.delete(p.instrument);
    for (const a of this.o.accounts.values()) {
      a.broker.onEvent(
        p.liquidity !== undefined
          ? {
              kind: 'tick',
              instrument: p.instrument,
              at,
              bid: p.bid,
              ask: p.ask,
              bidLiquidity: p.liquidity,
              askLiquidity: p.liquidity,
            }
          : { kind: 'tick', instrument: p.instrument, at, bid: p.bid, ask: p.ask },
      );
      a.priced(p.instrument, at);
    }
    this.o.onPrice?.(p.instrument);
  }

  /** Moves the clock to `ms` (never back): delayed orders arriving by then, then a timer to every broker (expiries, financing). */
  setTime(ms: number): void {
    if (!Number.isFinite(ms))
      throw new HttpError(400, "Invalid value specified for 'time': give RFC 3339 or epoch ms");
    this.#release(ms);
    if (ms <= this.#now) return;
    this.#now = ms;
    for (const a of this.o.accounts.values())
      a.broker.onEvent({ kind: 'timer', at: ms, name: 'sandbox-clock' });
  }

  /** An instrument's PRICE object for an account (undefined before its first price). */
  priceJSON(account: SandboxAccount, instrument: string): Record<string, unknown> | undefined {
    const q = this.#quotes.get(instrument);
    if (!q) return undefined;
    const inst = this.o.instruments.get(instrument);
    // As the simulator halts market orders: by the instrument's trading hours at the sandbox clock.
    const open = !this.o.marketHours || inst.hours.isOpen(this.#now);
    const out: Record<string, unknown> = {
      type: 'PRICE',
      instrument,
      time: formatTime(q.time),
      tradeable: open,
      status: open ? 'tradeable' : 'non-tradeable',
      bids: [{ price: inst.price(q.bid), liquidity: q.liquidity }],
      asks: [{ price: inst.price(q.ask), liquidity: q.liquidity }],
      closeoutBid: inst.price(q.bid),
      closeoutAsk: inst.price(q.ask),
    };
    const f = account.quoteHomeConversionFactors(instrument);
    if (f) out.quoteHomeConversionFactors = f;
    return out;
  }

  /**
   * The manual clock's opening prices: each instrument's last catalog price in the week before the
   * start, at the start time, to every broker (so market orders fill at once). One the catalog cannot
   * give is logged and left without a price.
   */
  async open(catalog: Catalog, names: readonly string[], log?: Logger): Promise<void> {
    const start = this.o.start;
    for (const name of names) {
      if (!catalog.has(name, 'M1')) continue;
      try {
        for await (const batch of feedCandles(catalog, this.o.instruments, name, {
          from: start - 7 * 86_400_000,
          to: start + 60_000,
        })) {
          const last = batch[batch.length - 1];
          if (last)
            this.#quotes.set(name, { bid: last.bo, ask: last.ao, time: start, liquidity: 10_000_000 });
        }
      } catch (e) {
        if (e instanceof DataError) throw e; // data the gate refuses: the sandbox does not start on it
        log?.warn({ err: (e as Error).message, instrument: name }, 'no initial price from the catalog');
      }
      const q = this.#quotes.get(name);
      if (q)
        for (const a of this.o.accounts.values())
          a.broker.onEvent({ kind: 'tick', instrument: name, at: start, bid: q.bid, ask: q.ask });
    }
  }

  /** The quote a held-back order meets at its arrival: the current one (with its liquidity when the price gave one). */
  #quoteOf = (instrument: string): { bid: number; ask: number; liquidity?: number } | undefined => {
    const q = this.#quotes.get(instrument);
    if (q === undefined) return undefined;
    return this.#limited.has(instrument)
      ? { bid: q.bid, ask: q.ask, liquidity: q.liquidity }
      : { bid: q.bid, ask: q.ask };
  };

  /** The clock moves to `to` (with a price of `pricing` there, when given): release the orders that arrive by then (latency fault). */
  #release(to: number, pricing?: string): void {
    for (const a of this.o.accounts.values()) a.release(to, this.#quoteOf, pricing);
  }
}

/**
 * An instrument's M1 series of the sandbox's data (`--data`, a catalog folder) as the price feed
 * reads it: through the gate every price source passes (gate.ts `gateSeries`): what its
 * series.json states, its rows' spacing, prices and clock against EUR_USD M1 (or the instrument
 * read). A mislabelled series (another instrument's prices, H1 candles filed as M1, times in
 * another zone) is refused as `fxflow data import` refuses the file, naming the series folder.
 */
export function feedCandles(
  catalog: Catalog,
  instruments: InstrumentRegistry,
  instrument: string,
  period: { from: UnixMs; to?: UnixMs },
): AsyncIterable<readonly Candle[]> {
  return gateSeries(
    catalog.candles({ instrument, granularity: 'M1', ...period }),
    join(catalog.root, instrument, 'M1'),
    catalog.meta(instrument, 'M1'),
    { instrument, granularity: 'M1', instruments, read: 'UTC', fix: 'catalog' },
  );
}

/** The replay clock reads its first week through the gate before the sandbox starts: a refused series stops the start. */
const REPLAY_CHECKED = 7 * 86_400_000;

/**
 * How the market's prices come: `replay` plays the catalog's M1 candles at `speed` (returned, to
 * start once the server listens); `manual` opens with the catalog's prices (unless `feed` is false)
 * and then moves only through the control. Either reads the catalog through the gate
 * (`feedCandles`): the replay its first week before it is returned, and the rest as it plays.
 */
export async function priceFeed(
  market: SandboxMarket,
  o: {
    clock: 'manual' | 'replay';
    speed: number;
    feed: boolean;
    catalog: Catalog;
    instruments: InstrumentRegistry;
    start: UnixMs;
    log?: Logger | undefined;
  },
): Promise<Replay | undefined> {
  if (o.clock === 'replay') {
    for (const name of FEED_INSTRUMENTS) {
      if (!o.catalog.has(name, 'M1')) continue;
      for await (const _ of feedCandles(o.catalog, o.instruments, name, {
        from: o.start,
        to: o.start + REPLAY_CHECKED,
      }));
    }
    return new Replay({
      catalog: o.catalog,
      candles: (name, from) => feedCandles(o.catalog, o.instruments, name, { from }),
      start: o.start,
      speed: o.speed,
      instruments: FEED_INSTRUMENTS,
      tick: (p) => market.tick(p),
      advance: (t) => market.setTime(t),
      ...(o.log ? { log: o.log } : {}),
    });
  }
  if (o.feed) await market.open(o.catalog, FEED_INSTRUMENTS, o.log);
  return undefined;
}
