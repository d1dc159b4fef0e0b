import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Subject, type Subscription } from 'rxjs';
import { LabsWriter } from '../../adapters/catalog/labs-store.ts';
import { toCandle } from '../../adapters/v20/download.ts';
import type { V20Http } from '../../adapters/v20/http.ts';
import type { V20Rest } from '../../adapters/v20/rest.ts';
import { pricingStream, type StreamOptions, type StreamStats } from '../../adapters/v20/stream.ts';
import type { Candle } from '../../domain/candle.ts';
import type { MarketEvent } from '../../domain/events.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import { parseTime } from '../../domain/time.ts';
import { parseCandleSeries, type subscriptionsOf } from '../../engine/engine.ts';
import type { Portfolio } from '../../engine/portfolio.ts';
import type { Clock } from '../../ports/clock.ts';
import type { InputRecorder } from '../recording/input-recorder.ts';
import { LabsPoller, labsEvents, type LabsEndpoints, type LabsPollerOptions } from './labs-poller.ts';
import { CandleBuilder } from './live-candles.ts';
import { LiveCandleFeed, type LiveCandleSource } from './official-candles.ts';

/** A tick as the engine and the simulators get it. */
export interface LiveTick {
  readonly kind: 'tick';
  readonly instrument: string;
  readonly at: number;
  readonly bid: number;
  readonly ask: number;
}

/** A message of the pricing stream (a price or a heartbeat). */
type PriceMessage = {
  type?: string;
  instrument?: string;
  time?: string;
  bids?: { price: string; liquidity?: number }[];
  asks?: { price: string; liquidity?: number }[];
};

/** What the inputs read of the runner's options (`RunnerOptions` has every one of them, documented there). */
export interface MarketInputsOptions {
  readonly http: V20Http;
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly instruments: InstrumentRegistry;
  readonly journalDir: string;
  readonly candles?: LiveCandleSource;
  readonly candleWaitMs?: number;
  readonly streams?: StreamOptions;
  readonly recorder?: InputRecorder;
  readonly labs?: LabsEndpoints;
  readonly labsPoll?: Pick<LabsPollerOptions, 'every' | 'requestsPerMinute' | 'timeoutMs'> & {
    readonly tickMs?: number;
  };
  readonly onPrice?: (instrument: string, at: number) => void;
}

/** Where the inputs reach back into the runner: its account view, its clocked work, its simulators, its stop. */
export interface MarketInputsHooks {
  readonly clock: Clock;
  readonly log: Logger;
  readonly pricingStats: StreamStats;
  /** The portfolio a late candle marked at its close is marked again from the latest tick (the runner replaces it at start). */
  readonly portfolio: () => Portfolio;
  /** Every new price's time, first (before its candles): the summary's period, the risk gate's trading day. */
  readonly priced: (at: number) => void;
  /** Every new price, once recorded and before the strategy hears it: the simulators (--broker sim, --shadow). */
  readonly simulate: (tick: LiveTick) => void;
  /** The run is stopping: labs items polled now are not delivered (nor recorded as delivered). */
  readonly stopping: () => boolean;
  /** The pricing stream failed for good: the run stops with this reason. */
  readonly failed: (reason: string) => void;
}

/**
 * What the strategy hears of the market, in the order it hears it, as one stream of events the
 * engine runs on (`events`): the warm-up candles from the candles endpoint, then the pricing
 * stream's new prices, the live candles (built from them, or the endpoint's official candle when
 * a bucket ends, see `LiveCandleFeed`) and the labs items (`LabsPoller`). The runner owns the order
 * path and the transactions; it reaches in here for the latency mark of the price being handled
 * (`tickStart`) and the last price per instrument its strategy snapshot keeps.
 */
export class MarketInputs {
  readonly events = new Subject<MarketEvent>();
  readonly feed: LiveCandleFeed;
  /** The labs poller, when the strategy subscribes to labs (`labs` in the status line). */
  labsPoller: LabsPoller | undefined;
  /** New prices handled. */
  ticks = 0;
  /** `performance.now()` when the latest price reached the runner (benchmarks measure from it). */
  tickReceivedAt = Number.NaN;
  /** `performance.now()` when the price being handled arrived; NaN between prices (the order latency counts from it). */
  tickStart = Number.NaN;
  /** Warm-up candles are being handed over: the strategy's candle handlers are not called for them. */
  warming = false;
  readonly #o: MarketInputsOptions;
  readonly #h: MarketInputsHooks;
  readonly #builders = new Map<string, CandleBuilder[]>();
  /** The price being handled while its builders complete candles (see the feed's deliver). */
  #closingTick: LiveTick | undefined;
  /** The last tick per instrument: the portfolio's mark again after a candle that arrived late. */
  readonly #lastTick = new Map<string, LiveTick>();
  /** The time of the last price handled per instrument (in this process, or restored). */
  readonly #lastPrice = new Map<string, number>();
  #priceSub: Subscription | undefined;

  constructor(o: MarketInputsOptions, h: MarketInputsHooks) {
    this.#o = o;
    this.#h = h;
    this.feed = new LiveCandleFeed({
      source: o.candles ?? 'endpoint',
      log: h.log,
      ...(o.candleWaitMs !== undefined ? { waitMs: o.candleWaitMs } : {}),
      fetch: (instrument, granularity, from, opts) =>
        o.rest.candles(instrument, { granularity, price: 'BA', from, count: 1 }, opts),
      deliver: (c, official) => {
        // The price that completed it, when the candle is delivered while that price is handled:
        // the market when the strategy decides on the candle (the replay's current price).
        o.recorder?.candle(c, official ? 'official' : 'ticks', Date.now(), this.#closingTick);
        this.events.next(c);
        // A candle that came after later ticks marked the portfolio at its close: the latest tick again.
        const t = this.#lastTick.get(c.instrument);
        if (t !== undefined && t.at >= c.at) h.portfolio().mark(t);
      },
    });
  }

  /** The last price per instrument the restored strategy state has seen: a price not newer is no news to it. */
  restorePrices(prices: Readonly<Record<string, number>> | undefined): void {
    for (const instrument in prices) {
      const at = prices[instrument];
      if (typeof at === 'number' && Number.isFinite(at)) this.#lastPrice.set(instrument, at);
    }
  }

  /** The time of the last price handled per instrument (a copy: the journal keeps the object); undefined before any. */
  pricesSeen(): Record<string, number> | undefined {
    if (this.#lastPrice.size === 0) return undefined;
    const prices: Record<string, number> = {};
    for (const [instrument, at] of this.#lastPrice) prices[instrument] = at;
    return prices;
  }

  /**
   * A builder per candle series the strategy subscribes to, and warm-up from the candles endpoint
   * (`count` complete candles per series, the same alignment as backtests; `warming` while they are
   * handed over, so its handlers are not called). Returns how many were handed over.
   */
  async warmUp(subs: ReturnType<typeof subscriptionsOf>, count: number): Promise<number> {
    const o = this.#o;
    const warmCandles: MarketEvent[] = [];
    for (const spec of subs.candles ?? []) {
      const s = parseCandleSeries(spec, o.instruments);
      const builders = this.#builders.get(s.instrument) ?? [];
      if (!builders.some((b) => b.granularity === s.granularity))
        builders.push(new CandleBuilder(s.instrument, s.granularity));
      this.#builders.set(s.instrument, builders);
      if (count <= 0) continue;
      const res = await o.rest.candles(s.instrument, { granularity: s.granularity, price: 'BA', count });
      for (const c of res.candles)
        if (c.complete) warmCandles.push(toCandle(c, s.instrument, s.granularity, 'BA'));
    }
    warmCandles.sort((a, b) => a.at - b.at);
    this.warming = true;
    try {
      for (const c of warmCandles) {
        o.recorder?.candle(c as Candle, 'warmup', Date.now());
        this.events.next(c);
      }
    } finally {
      this.warming = false;
    }
    return warmCandles.length;
  }

  /**
   * Subscribes to the pricing stream for the candle series' instruments, the subscribed ticks and
   * `held` (the instruments of open trades: their prices mark the portfolio). Returns the instruments.
   */
  subscribe(subs: ReturnType<typeof subscriptionsOf>, held: Iterable<string>): string[] {
    const o = this.#o;
    const instruments = new Set<string>([...this.#builders.keys(), ...(subs.ticks ?? [])]);
    for (const i of held) instruments.add(i);
    if (instruments.size > 0) {
      this.#priceSub = pricingStream(o.http, o.accountID, [...instruments], {
        ...o.streams,
        stats: this.#h.pricingStats,
      }).subscribe({
        next: (p) => this.#onPrice(p as PriceMessage),
        error: (e: unknown) => {
          this.#h.log.error({ err: e }, 'pricing stream failed');
          this.#h.failed('pricing stream failed');
        },
      });
    }
    return [...instruments];
  }

  #onPrice(p: PriceMessage): void {
    const received = performance.now();
    const at = p.time !== undefined ? parseTime(p.time) : this.#h.clock.now();
    if (p.type === 'HEARTBEAT' || p.instrument === undefined) {
      for (const list of this.#builders.values()) for (const b of list) this.#candle(b.heartbeat(at));
      return;
    }
    const bid = Number(p.bids?.[0]?.price);
    const ask = Number(p.asks?.[0]?.price);
    if (!(bid > 0 && ask > 0)) return;
    // A (re)connect's first message repeats the latest price: a price not newer than the last one
    // handled (in this process, or before a restart as the restored strategy snapshot records) is no news.
    const last = this.#lastPrice.get(p.instrument);
    if (last !== undefined && at <= last) return;
    this.#lastPrice.set(p.instrument, at);
    this.ticks++;
    this.tickStart = received;
    this.tickReceivedAt = received;
    this.#h.priced(at);
    const tick: LiveTick = { kind: 'tick', instrument: p.instrument, at, bid, ask };
    const list = this.#builders.get(p.instrument);
    if (list !== undefined) {
      // A candle this price completes may reach the strategy now, before the price itself (--candles ticks).
      this.#closingTick = tick;
      for (const b of list) this.#candle(b.tick(at, bid, ask));
      this.#closingTick = undefined;
    }
    this.#lastTick.set(p.instrument, tick);
    this.#o.recorder?.tick(
      p.instrument,
      at,
      bid,
      ask,
      Math.round((performance.timeOrigin + received) * 1000) / 1000,
    );
    this.#h.simulate(tick);
    this.events.next(tick);
    this.tickStart = Number.NaN;
    this.#o.onPrice?.(p.instrument, at);
  }

  #candle(c: Candle | undefined): void {
    // The simulators take ticks only: a candle is not fed to them twice.
    this.feed.add(c);
  }

  /**
   * Starts the labs poller when the strategy subscribes to `calendar`, `signals`, `spreads` or `cot`
   * and the run has labs. Items are stamped with the run's event clock; before the first price, with
   * the labs server's time (its Date header), never the machine's. The delivered items are kept in
   * `<journalDir>/labs/`, in the catalog's labs format: a restart remembers them (and repairs a cut line).
   */
  async startLabs(subs: ReturnType<typeof subscriptionsOf>): Promise<void> {
    const o = this.#o;
    const labs = o.labs;
    const calendar = subs.calendar ?? [];
    const signals = subs.signals ?? [];
    const spreads = subs.spreads ?? [];
    const cot = subs.cot ?? [];
    if (labs === undefined || calendar.length + signals.length + spreads.length + cot.length === 0) return;
    const clock = this.#h.clock;
    const delivered = await LabsWriter.open(join(o.journalDir, 'labs'));
    const poller = new LabsPoller({
      labs,
      calendar,
      signals,
      spreads,
      cot,
      identity: delivered.identity,
      stamp: () => (clock.now() > 0 ? clock.now() : (labs.serverTime?.() ?? Date.now())),
      ...o.labsPoll,
    });
    this.labsPoller = poller;
    poller.start((items) => {
      if (this.#h.stopping()) return;
      delivered.append(items); // recorded as delivered before the engine gets them: at most once
      const rec = o.recorder;
      for (const e of labsEvents(items)) {
        rec?.labs(e, Date.now());
        this.events.next(e);
      }
    }, o.labsPoll?.tickMs ?? 5000);
  }

  /** The stop: no more labs polls, prices or candle waits (`events` completes after the runner's last snapshot). */
  close(): void {
    this.labsPoller?.stop();
    this.#priceSub?.unsubscribe();
    this.feed.close();
  }
}
