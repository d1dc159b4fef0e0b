import type { Candle } from '../domain/candle.ts';
import type { CalendarEvent, CotEvent, SignalEvent, SpreadEvent, TimerEvent } from '../domain/events.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import type { OrderIntent } from '../domain/intents.ts';
import type { Tick } from '../domain/tick.ts';
import { formatTime, parseUserTime, type UnixMs } from '../domain/time.ts';
import type { OrderRequest, Transaction } from '../domain/v20/index.ts';
import type {
  AccountView,
  CandleSeries,
  Ctx,
  IndicatorName,
  IndicatorOptions,
  IndicatorValue,
  InstrumentView,
  RecentCandle,
  OrderOptions,
  OrderView,
  Params,
  PlotOptions,
  PlotStyle,
  PositionView,
  StrategyLogger,
  Target,
  TradeView,
} from '../strategy/api.ts';
import type { Portfolio } from './portfolio.ts';
import type { SeriesState } from './series.ts';

/** Where `ctx.plot` values go: the event's time, the name, the value, the pane ('' = the price chart), the style, the instrument ('' = the first chart). */
export type PlotSink = (
  time: UnixMs,
  name: string,
  value: number,
  pane: string,
  style: PlotStyle,
  instrument: string,
) => void;

/**
 * The one `ctx` object of a strategy. The engine sets the event fields before each handler call and
 * clears them after, so no object is allocated per event. Order helpers only build intents; the
 * engine submits what the handler returns.
 */
export class StrategyContext<P extends Params> implements Ctx<P> {
  now: UnixMs = 0;
  candle: Candle | undefined = undefined;
  series: CandleSeries | undefined = undefined;
  tick: Tick | undefined = undefined;
  signal: SignalEvent | undefined = undefined;
  calendar: CalendarEvent | undefined = undefined;
  spread: SpreadEvent | undefined = undefined;
  cot: CotEvent | undefined = undefined;
  timer: TimerEvent | undefined = undefined;
  transaction: Transaction | undefined = undefined;
  /** The series state of the current candle (indicators default to it). */
  current: SeriesState | undefined = undefined;
  #seq = 0;
  /** Where `ctx.plot` writes; undefined: plots are dropped at the cost of one test (a sweep's trials, an unsaved run). */
  plotSink: PlotSink | undefined = undefined;
  /** Client IDs are `<idPrefix>-<n>` (the strategy name unless the engine is given a prefix). */
  idPrefix: string;

  constructor(
    readonly strategy: string,
    readonly params: P,
    readonly log: StrategyLogger,
    private readonly portfolio: Portfolio,
    private readonly instruments: InstrumentRegistry,
    private readonly seriesByKey: ReadonlyMap<string, SeriesState>,
    private readonly marginRate: number,
  ) {
    this.idPrefix = strategy;
  }

  get open(): number {
    return this.current?.open ?? Number.NaN;
  }
  get high(): number {
    return this.current?.high ?? Number.NaN;
  }
  get low(): number {
    return this.current?.low ?? Number.NaN;
  }
  get close(): number {
    return this.current?.close ?? Number.NaN;
  }

  /** Next client ID: `<strategy>-<n>`, deterministic for a given run. */
  get sequence(): number {
    return this.#seq;
  }
  set sequence(n: number) {
    this.#seq = n;
  }

  #series(key: string | undefined, what: string): SeriesState {
    if (key === undefined) {
      if (this.current) return this.current;
      throw new Error(`ctx.${what}() outside onCandle needs a series, e.g. ctx.${what}(14, 'EUR_USD:H1')`);
    }
    const s = this.seriesByKey.get(key) ?? this.seriesByKey.get(`${key}:M`);
    if (!s)
      throw new Error(
        `ctx.${what}(): '${key}' is not a subscribed candle series (subscribed: ${[...this.seriesByKey.keys()].join(', ')})`,
      );
    return s;
  }

  quote(instrument: string): { readonly bid: number; readonly ask: number } | undefined {
    return this.portfolio.quote(instrument);
  }

  sma(period: number, series?: string): number | undefined {
    return (series === undefined && this.current ? this.current : this.#series(series, 'sma')).sma(period);
  }

  ema(period: number, series?: string): number | undefined {
    return (series === undefined && this.current ? this.current : this.#series(series, 'ema')).ema(period);
  }

  indicator<N extends IndicatorName>(
    name: N,
    options: IndicatorOptions<N>,
    series?: string,
  ): IndicatorValue<N> | undefined {
    return this.#series(series, 'indicator').indicator<IndicatorValue<N>>(
      name,
      options as Readonly<Record<string, unknown>>,
    );
  }

  candles(n: number, series?: string): readonly RecentCandle[] {
    return this.#series(series, 'candles').candles(n);
  }

  plot(name: string, value: number | undefined, options?: PlotOptions): void {
    const sink = this.plotSink;
    if (sink === undefined || value === undefined || !Number.isFinite(value)) return;
    // On the bar it belongs to, as the chart draws candles: at its open time (the event's is its close).
    sink(
      this.candle?.time ?? this.now,
      name,
      value,
      options?.pane ?? '',
      options?.style ?? 'line',
      options?.instrument ?? this.series?.instrument ?? this.tick?.instrument ?? '',
    );
  }

  readonly #instrumentViews = new Map<string, InstrumentView>();

  instrument(name: string): InstrumentView {
    let v = this.#instrumentViews.get(name);
    if (v === undefined) {
      const i = this.instruments.get(name);
      v = Object.freeze({
        name: i.name,
        type: i.type,
        displayName: i.displayName,
        base: i.base,
        quote: i.quote,
        pipLocation: i.pipLocation,
        pip: i.pip,
        displayPrecision: i.displayPrecision,
        tradeUnitsPrecision: i.tradeUnitsPrecision,
        minimumTradeSize: i.minimumTradeSize,
        maximumOrderUnits: i.maximumOrderUnits,
        marginRate: i.marginRate,
        minimumTrailingStopDistance: i.minimumTrailingStopDistance,
        maximumTrailingStopDistance: i.maximumTrailingStopDistance,
      });
      this.#instrumentViews.set(name, v);
    }
    return v;
  }

  pips(instrument: string, n: number): number {
    // 12 significant digits: 10 pips of EUR_USD is 0.001, not 0.0010000000000000002.
    return Number((n * this.instruments.get(instrument).pip).toPrecision(12));
  }

  toPips(instrument: string, distance: number): number {
    // A distance read off prices carries binary noise (1.1012 - 1.1002 = 0.0009999999999998899).
    return Number((distance / this.instruments.get(instrument).pip).toPrecision(12));
  }

  round(instrument: string, price: number): number {
    return this.instruments.get(instrument).snap(price);
  }

  closes(n: number, series?: string): readonly number[] {
    return this.#series(series, 'closes').closes(n);
  }

  /**
   * The position of an instrument, computed once per event: a handler that asks several times (or
   * several handlers of one event, until a fill changes the ledger) gets the same object. Cached by
   * the portfolio's mark count and the ledger's version; one instrument in a field, others in a Map.
   */
  position(instrument: string): PositionView {
    const p = this.portfolio;
    if (p.marks !== this.#posMarks || p.ledger.version !== this.#posVersion) {
      this.#posMarks = p.marks;
      this.#posVersion = p.ledger.version;
      this.#pos = undefined;
      this.#posMore?.clear();
    }
    const first = this.#pos;
    if (first !== undefined && first.instrument === instrument) return first;
    const more = this.#posMore?.get(instrument);
    if (more !== undefined) return more;
    const v = this.#computePosition(instrument);
    if (first === undefined) this.#pos = v;
    else (this.#posMore ??= new Map()).set(instrument, v);
    return v;
  }

  #posMarks = -1;
  #posVersion = -1;
  #pos: PositionView | undefined = undefined;
  #posMore: Map<string, PositionView> | undefined = undefined;

  #computePosition(instrument: string): PositionView {
    let long = 0;
    let short = 0;
    let unrealizedPL = 0;
    for (const t of this.portfolio.openTrades()) {
      if (t.instrument !== instrument) continue;
      if (t.unitsNum > 0) long += t.unitsNum;
      else short += t.unitsNum;
      unrealizedPL += this.portfolio.unrealized(t);
    }
    return { instrument, long, short, net: long + short, unrealizedPL };
  }

  trades(instrument?: string): readonly TradeView[] {
    const out: TradeView[] = [];
    for (const t of this.portfolio.openTrades()) {
      if (instrument !== undefined && t.instrument !== instrument) continue;
      const v: { -readonly [K in keyof TradeView]: TradeView[K] } = {
        id: t.id,
        instrument: t.instrument,
        units: t.unitsNum,
        price: t.priceNum,
        openTime: t.openMs,
        unrealizedPL: this.portfolio.unrealized(t),
      };
      if (t.takeProfitOrderID !== undefined) v.takeProfitOrderID = t.takeProfitOrderID;
      if (t.stopLossOrderID !== undefined) v.stopLossOrderID = t.stopLossOrderID;
      if (t.trailingStopLossOrderID !== undefined) v.trailingStopLossOrderID = t.trailingStopLossOrderID;
      if (t.clientExtensions !== undefined) v.clientExtensions = t.clientExtensions;
      out.push(v);
    }
    return out;
  }

  orders(instrument?: string): readonly OrderView[] {
    const out: OrderView[] = [];
    for (const o of this.portfolio.ledger.pendingOrders.values()) {
      if (o.type === 'MARKET') continue;
      const tradeInstrument =
        o.tradeID !== undefined ? this.portfolio.ledger.trades.get(o.tradeID)?.instrument : undefined;
      const inst = o.instrument ?? tradeInstrument;
      if (instrument !== undefined && inst !== instrument) continue;
      const c = o.created as { units?: string; price?: string };
      const v: { -readonly [K in keyof OrderView]: OrderView[K] } = { id: o.id, type: o.type };
      if (inst !== undefined) v.instrument = inst;
      if (c.units !== undefined) v.units = Number(c.units);
      if (c.price !== undefined) v.price = Number(c.price);
      if (o.tradeID !== undefined) v.tradeID = o.tradeID;
      if (o.clientExtensions !== undefined) v.clientExtensions = o.clientExtensions;
      out.push(v);
    }
    return out;
  }

  get account(): AccountView {
    const p = this.portfolio;
    const unrealizedPL = p.unrealizedTotal();
    const nav = p.balance + unrealizedPL;
    const marginUsed = p.marginUsed(this.marginRate);
    return {
      currency: p.currency,
      balance: p.balance,
      nav,
      unrealizedPL,
      marginUsed,
      marginAvailable: nav - marginUsed,
      openTradeCount: p.ledger.trades.size,
    };
  }

  // Order helpers ---------------------------------------------------------------------------------

  #id(opts?: OrderOptions): string {
    return opts?.clientId ?? `${this.idPrefix}-${++this.#seq}`;
  }

  #units(units: number | string): string {
    if (typeof units === 'string') return units;
    if (!Number.isFinite(units) || units === 0)
      throw new RangeError(`order units must be a non-zero finite number, got ${units}`);
    return String(units);
  }

  #gtd(t: UnixMs | string): string {
    const ms = typeof t === 'string' ? parseUserTime(t) : t;
    if (typeof ms !== 'number' || !Number.isFinite(ms)) {
      throw new RangeError(
        `order gtdTime must be a time in ms (e.g. ctx.time + 3_600_000) or an RFC 3339 string like "2024-03-01T17:00:00Z", got ${JSON.stringify(t)}`,
      );
    }
    return formatTime(ms);
  }

  #details(instrument: string, t: Target): { price?: string; distance?: string } {
    const inst = this.instruments.get(instrument);
    if (typeof t === 'number') return { price: inst.price(t) };
    if ('price' in t) return { price: inst.price(t.price) };
    return { distance: inst.price(t.distance) };
  }

  #build(
    type: 'MARKET' | 'LIMIT' | 'STOP' | 'MARKET_IF_TOUCHED',
    instrument: string,
    units: number | string,
    price: number | undefined,
    opts?: OrderOptions,
  ): OrderIntent {
    const inst = this.instruments.get(instrument);
    const id = this.#id(opts);
    const req: Record<string, unknown> = { type, instrument, units: this.#units(units) };
    if (price !== undefined) req.price = inst.price(price);
    if (opts?.timeInForce) req.timeInForce = opts.timeInForce;
    if (opts?.gtdTime !== undefined) {
      req.timeInForce = opts.timeInForce ?? 'GTD';
      req.gtdTime = this.#gtd(opts.gtdTime);
    }
    if (opts?.positionFill) req.positionFill = opts.positionFill;
    if (opts?.triggerCondition) req.triggerCondition = opts.triggerCondition;
    if (opts?.priceBound !== undefined) req.priceBound = inst.price(opts.priceBound);
    if (opts?.tp !== undefined) req.takeProfitOnFill = this.#details(instrument, opts.tp);
    if (opts?.sl !== undefined) req.stopLossOnFill = this.#details(instrument, opts.sl);
    if (opts?.gsl !== undefined) req.guaranteedStopLossOnFill = this.#details(instrument, opts.gsl);
    if (opts?.trailing !== undefined) req.trailingStopLossOnFill = { distance: inst.price(opts.trailing) };
    const ext: Record<string, string> = { id };
    if (opts?.tag) ext.tag = opts.tag;
    if (opts?.comment) ext.comment = opts.comment;
    req.clientExtensions = ext;
    return { kind: 'order', id, request: req as unknown as OrderRequest };
  }

  market(instrument: string, units: number | string, opts?: OrderOptions): OrderIntent {
    return this.#build('MARKET', instrument, units, undefined, opts);
  }
  limit(instrument: string, units: number | string, price: number, opts?: OrderOptions): OrderIntent {
    return this.#build('LIMIT', instrument, units, price, opts);
  }
  stop(instrument: string, units: number | string, price: number, opts?: OrderOptions): OrderIntent {
    return this.#build('STOP', instrument, units, price, opts);
  }
  marketIfTouched(
    instrument: string,
    units: number | string,
    price: number,
    opts?: OrderOptions,
  ): OrderIntent {
    return this.#build('MARKET_IF_TOUCHED', instrument, units, price, opts);
  }
  closeTrade(tradeId: string, units: number | string | 'ALL' = 'ALL'): OrderIntent {
    return {
      kind: 'closeTrade',
      id: this.#id(),
      tradeSpecifier: tradeId,
      units: typeof units === 'number' ? String(units) : units,
    };
  }
  closePosition(instrument: string, side: 'long' | 'short' | 'both' = 'both'): OrderIntent {
    const p = this.position(instrument);
    const intent: {
      kind: 'closePosition';
      id: string;
      instrument: string;
      longUnits?: string;
      shortUnits?: string;
    } = {
      kind: 'closePosition',
      id: this.#id(),
      instrument,
    };
    if ((side === 'long' || side === 'both') && (p.long !== 0 || side === 'long')) intent.longUnits = 'ALL';
    if ((side === 'short' || side === 'both') && (p.short !== 0 || side === 'short'))
      intent.shortUnits = 'ALL';
    return intent;
  }
  cancel(orderId: string): OrderIntent {
    return { kind: 'cancel', id: this.#id(), orderSpecifier: orderId };
  }
  setTradeOrders(
    tradeId: string,
    orders: { readonly tp?: number | null; readonly sl?: number | null; readonly trailing?: number | null },
  ): OrderIntent {
    const trade = this.portfolio.ledger.trades.get(tradeId);
    const inst = trade ? this.instruments.get(trade.instrument) : undefined;
    const fmt = (x: number): string => (inst ? inst.price(x) : String(x));
    const intent: {
      -readonly [K in keyof Extract<OrderIntent, { kind: 'tradeOrders' }>]: Extract<
        OrderIntent,
        { kind: 'tradeOrders' }
      >[K];
    } = {
      kind: 'tradeOrders',
      id: this.#id(),
      tradeSpecifier: tradeId,
    };
    if (orders.tp !== undefined)
      intent.takeProfit = orders.tp === null ? null : ({ price: fmt(orders.tp) } as never);
    if (orders.sl !== undefined)
      intent.stopLoss = orders.sl === null ? null : ({ price: fmt(orders.sl) } as never);
    if (orders.trailing !== undefined)
      intent.trailingStopLoss =
        orders.trailing === null ? null : ({ distance: fmt(orders.trailing) } as never);
    return intent;
  }

  /** Clears the per-event fields after a handler ran. */
  reset(): void {
    this.candle = undefined;
    this.series = undefined;
    this.tick = undefined;
    this.signal = undefined;
    this.calendar = undefined;
    this.spread = undefined;
    this.cot = undefined;
    this.timer = undefined;
    this.transaction = undefined;
    this.current = undefined;
  }
}
