/**
 * The strategy API: everything a strategy module imports.
 *
 * A strategy is a plain object built with `defineStrategy` and exported as the module's default.
 * Handlers are pure and synchronous: they read `ctx` (the event, the clock, positions, indicators,
 * a logger) and return the next state and the order intents. They never await, read `Date.now()`
 * or do I/O, so one file behaves the same in backtest, paper and live runs.
 *
 * ```ts
 * export default defineStrategy({
 *   params: { fast: 10, slow: 30, units: 10_000 },
 *   subscribe: { candles: ['EUR_USD:H1'] },
 *   init: () => ({ above: false }),
 *   onCandle(ctx, s) {
 *     const fast = ctx.sma(ctx.params.fast), slow = ctx.sma(ctx.params.slow);
 *     if (fast === undefined || slow === undefined) return;
 *     const above = fast > slow;
 *     return { state: { above }, intents: above && !s.above ? [ctx.market('EUR_USD', ctx.params.units)] : [] };
 *   },
 * });
 * ```
 */
import type { Candle, PriceComponent } from '../domain/candle.ts';
import type { CalendarEvent, CotEvent, SignalEvent, SpreadEvent, TimerEvent } from '../domain/events.ts';
import type { Granularity } from '../domain/granularity.ts';
import type { OrderIntent } from '../domain/intents.ts';
import type { Tick } from '../domain/tick.ts';
import type { UnixMs } from '../domain/time.ts';
import type {
  ClientExtensions,
  OrderPositionFill,
  OrderTriggerCondition,
  TimeInForce,
  Transaction,
} from '../domain/v20/index.ts';

export type { OrderIntent } from '../domain/intents.ts';
export type { Candle, PriceComponent } from '../domain/candle.ts';
export type { Tick } from '../domain/tick.ts';
export type { Transaction } from '../domain/v20/index.ts';

/** Parameter values a strategy declares; the CLI's `--param k=v` overrides them by name. */
export type ParamValue = number | string | boolean;
export type Params = Readonly<Record<string, ParamValue>>;

/**
 * What a strategy listens to.
 * - candles: `'INSTRUMENT:GRANULARITY'` or `'INSTRUMENT:GRANULARITY:COMPONENT'` (M mid, B bid, A ask;
 *   default M). The component decides what `ctx.close`, `ctx.sma()` etc. read.
 * - ticks: instrument names.
 * - signals: instrument names whose labs signals are wanted.
 * - calendar: currencies whose economic calendar releases are wanted.
 * - spreads: instrument names whose OANDA labs spread intervals (min/avg/max pips) are wanted.
 * - cot: instrument names whose Commitments of Traders reports are wanted.
 * - timers: `{ name, everyMs }`, fired on the engine clock (virtual in backtests).
 */
export interface Subscriptions {
  readonly candles?: readonly string[];
  readonly ticks?: readonly string[];
  readonly signals?: readonly string[];
  readonly calendar?: readonly string[];
  readonly spreads?: readonly string[];
  readonly cot?: readonly string[];
  readonly timers?: readonly { readonly name: string; readonly everyMs: number }[];
}

/** A parsed candle subscription. */
export interface CandleSeries {
  readonly key: string;
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly component: PriceComponent;
}

/** What a handler returns: nothing, a list of intents, or the next state and intents. */
export type Step<S> =
  | void
  | undefined
  | readonly OrderIntent[]
  | { readonly state?: S; readonly intents?: readonly OrderIntent[] };

/** Read-only view of one open trade. Numbers are for decisions; the ledger keeps exact decimals. */
export interface TradeView {
  readonly id: string;
  readonly instrument: string;
  /** Signed current units (negative = short). */
  readonly units: number;
  readonly price: number;
  readonly openTime: UnixMs;
  readonly unrealizedPL: number;
  readonly takeProfitOrderID?: string;
  readonly stopLossOrderID?: string;
  readonly trailingStopLossOrderID?: string;
  readonly clientExtensions?: ClientExtensions;
}

/** Read-only view of one pending order. */
export interface OrderView {
  readonly id: string;
  readonly type: string;
  readonly instrument?: string;
  readonly units?: number;
  readonly price?: number;
  readonly tradeID?: string;
  readonly clientExtensions?: ClientExtensions;
}

/** Net position of one instrument. */
export interface PositionView {
  readonly instrument: string;
  readonly long: number;
  readonly short: number;
  /** long + short (short is negative). */
  readonly net: number;
  readonly unrealizedPL: number;
}

/** Account figures in the home currency, marked to the latest prices. */
export interface AccountView {
  readonly currency: string;
  readonly balance: number;
  readonly nav: number;
  readonly unrealizedPL: number;
  readonly marginUsed: number;
  readonly marginAvailable: number;
  readonly openTradeCount: number;
}

/**
 * Every indicator `ctx.indicator` wraps (technicalindicators 3.1, driven through its streaming
 * `nextValue`), with its options and the type of its value. `value` is what `ctx.indicator(name, …)`
 * returns once the indicator has seen enough candles (undefined before). Value indicators read the
 * subscription's close; bar indicators the candle's open, high, low, close and volume.
 */
export interface IndicatorCatalog {
  SMA: { options: { period: number }; value: number };
  EMA: { options: { period: number }; value: number };
  WMA: { options: { period: number }; value: number };
  WEMA: { options: { period: number }; value: number };
  MACD: {
    options: {
      fastPeriod: number;
      slowPeriod: number;
      signalPeriod: number;
      SimpleMAOscillator?: boolean;
      SimpleMASignal?: boolean;
    };
    value: { readonly MACD?: number; readonly signal?: number; readonly histogram?: number };
  };
  RSI: { options: { period: number }; value: number };
  BollingerBands: {
    options: { period: number; stdDev: number };
    value: { readonly middle: number; readonly upper: number; readonly lower: number; readonly pb: number };
  };
  ADX: {
    options: { period: number };
    value: { readonly adx: number; readonly pdi: number; readonly mdi: number };
  };
  ATR: { options: { period: number }; value: number };
  TrueRange: { options: Record<string, never>; value: number };
  ROC: { options: { period: number }; value: number };
  KST: {
    options: {
      ROCPer1: number;
      ROCPer2: number;
      ROCPer3: number;
      ROCPer4: number;
      SMAROCPer1: number;
      SMAROCPer2: number;
      SMAROCPer3: number;
      SMAROCPer4: number;
      signalPeriod: number;
    };
    value: { readonly kst: number; readonly signal?: number };
  };
  PSAR: { options: { step: number; max: number }; value: number };
  Stochastic: {
    options: { period: number; signalPeriod: number };
    value: { readonly k: number; readonly d?: number };
  };
  WilliamsR: { options: { period: number }; value: number };
  ADL: { options: Record<string, never>; value: number };
  OBV: { options: Record<string, never>; value: number };
  TRIX: { options: { period: number }; value: number };
  ForceIndex: { options: { period: number }; value: number };
  CCI: { options: { period: number }; value: number };
  AwesomeOscillator: { options: { fastPeriod: number; slowPeriod: number }; value: number };
  VWAP: { options: Record<string, never>; value: number };
  MFI: { options: { period: number }; value: number };
  StochasticRSI: {
    options: { rsiPeriod: number; stochasticPeriod: number; kPeriod: number; dPeriod: number };
    value: { readonly stochRSI: number; readonly k: number; readonly d: number };
  };
  AverageGain: { options: { period: number }; value: number };
  AverageLoss: { options: { period: number }; value: number };
  SD: { options: { period: number }; value: number };
  Highest: { options: { period: number }; value: number };
  Lowest: { options: { period: number }; value: number };
  Sum: { options: { period: number }; value: number };
  HeikinAshi: {
    options: Record<string, never>;
    value: {
      readonly open: number;
      readonly high: number;
      readonly low: number;
      readonly close: number;
      readonly volume?: number;
    };
  };
  IchimokuCloud: {
    options: { conversionPeriod: number; basePeriod: number; spanPeriod: number; displacement: number };
    value: {
      readonly conversion: number;
      readonly base: number;
      readonly spanA: number;
      readonly spanB: number;
    };
  };
  KeltnerChannels: {
    options: { maPeriod: number; atrPeriod: number; useSMA: boolean; multiplier: number };
    value: { readonly middle: number; readonly upper: number; readonly lower: number };
  };
  ChandelierExit: {
    options: { period: number; multiplier: number };
    value: { readonly exitLong: number; readonly exitShort: number };
  };
}

/** The name of an indicator `ctx.indicator` knows. */
export type IndicatorName = keyof IndicatorCatalog;
/** The options of indicator `N`. */
export type IndicatorOptions<N extends IndicatorName> = IndicatorCatalog[N]['options'];
/** The value of indicator `N`. */
export type IndicatorValue<N extends IndicatorName> = IndicatorCatalog[N]['value'];

/** An instrument's definition (OANDA's, from the account's instrument list), as a strategy reads it. */
export interface InstrumentView {
  readonly name: string;
  readonly type: string;
  readonly displayName: string;
  readonly base: string;
  readonly quote: string;
  /** The pip is 10^pipLocation (EUR_USD -4, USD_JPY -2). */
  readonly pipLocation: number;
  /** 10^pipLocation: 0.0001 for EUR_USD, 0.01 for USD_JPY. */
  readonly pip: number;
  /** Decimal places of a price. */
  readonly displayPrecision: number;
  /** Decimal places of units (0: whole units). */
  readonly tradeUnitsPrecision: number;
  readonly minimumTradeSize: number;
  readonly maximumOrderUnits: number;
  /** The instrument's margin rate (the account's may be stricter: the stricter applies). */
  readonly marginRate: number;
  readonly minimumTrailingStopDistance: number;
  readonly maximumTrailingStopDistance: number;
}

/** One recent candle of a series: open time, the component's prices, volume, and both sides. */
export interface RecentCandle {
  /** Open time (ms). The candle was delivered at its close. */
  readonly time: UnixMs;
  /** On the subscription's component (M, B or A), as `ctx.open` … `ctx.close`. */
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
  readonly bid: {
    readonly open: number;
    readonly high: number;
    readonly low: number;
    readonly close: number;
  };
  readonly ask: {
    readonly open: number;
    readonly high: number;
    readonly low: number;
    readonly close: number;
  };
}

/** The structured logger strategies get (a pino child in every mode). */
export interface StrategyLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Price target on fill: an absolute price or a distance from the fill price (instrument units). */
export type Target = number | { readonly price: number } | { readonly distance: number };

/** Options of the order helpers. Prices are numbers; the helpers format them with the instrument's precision. */
export interface OrderOptions {
  /** Take profit on fill: price, or `{ distance }` from the fill price. */
  readonly tp?: Target;
  /** Stop loss on fill: price, or `{ distance }`. */
  readonly sl?: Target;
  /** Trailing stop loss on fill: distance in price units. */
  readonly trailing?: number;
  /** Guaranteed stop loss on fill: price, or `{ distance }`. */
  readonly gsl?: Target;
  /** Worst acceptable fill price (v20 `priceBound`). */
  readonly priceBound?: number;
  readonly positionFill?: OrderPositionFill;
  readonly timeInForce?: TimeInForce;
  /** For GTD (the default when given): expiry time in ms, or an RFC 3339 string ("2024-03-01T17:00:00Z", seconds optional); anything else stops the run with an error at once. */
  readonly gtdTime?: UnixMs | string;
  readonly triggerCondition?: OrderTriggerCondition;
  readonly tag?: string;
  readonly comment?: string;
  /** Client ID of the order; default: `<strategy>-<sequence>`, deterministic per run. */
  readonly clientId?: string;
}

/** How `ctx.plot` draws a value: a line (default), or a marker per value (arrow up, arrow down, dot). */
export type PlotStyle = 'line' | 'up' | 'down' | 'dot';

/** Where and how `ctx.plot` draws a value. */
export interface PlotOptions {
  /** A pane below the price chart, by name (plots that name the same pane share it); default: on the price chart. */
  readonly pane?: string;
  /** 'line' (default), or a marker at each value: 'up', 'down' (arrows), 'dot'. */
  readonly style?: PlotStyle;
  /** The instrument whose chart shows it; default: the instrument of the candle or tick being handled (else the first chart). */
  readonly instrument?: string;
}

/**
 * The handler context. One object per strategy, reused for every event: read it inside the handler,
 * do not keep references to it or to `ctx.candle` across events.
 */
export interface Ctx<P extends Params = Params> {
  readonly params: P;
  readonly strategy: string;
  /** Engine time (virtual in backtests): the time of the event being handled. */
  readonly now: UnixMs;
  readonly log: StrategyLogger;

  /** The candle being handled (in onCandle), else undefined. Delivered at its close, always complete. */
  readonly candle: Candle | undefined;
  /** The series of the candle being handled, e.g. `EUR_USD:H1:M`. */
  readonly series: CandleSeries | undefined;
  /** Open, high, low, close of the current candle on the subscription's component. */
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly tick: Tick | undefined;
  readonly signal: SignalEvent | undefined;
  readonly calendar: CalendarEvent | undefined;
  readonly spread: SpreadEvent | undefined;
  readonly cot: CotEvent | undefined;
  readonly timer: TimerEvent | undefined;
  readonly transaction: Transaction | undefined;

  /** Latest known bid/ask of an instrument (any series or tick), or undefined before the first price. */
  quote(instrument: string): { readonly bid: number; readonly ask: number } | undefined;

  /**
   * Streaming indicators over a candle series (default: the current candle's series; pass `series`
   * outside onCandle). They are created on first use, warmed from the series' recent history, and
   * updated by the engine before each handler call. `undefined` until enough candles were seen.
   */
  sma(period: number, series?: string): number | undefined;
  ema(period: number, series?: string): number | undefined;
  /**
   * A technicalindicators indicator by class name, e.g. `ctx.indicator('RSI', { period: 14 })`: the
   * names, options and value types are in `IndicatorCatalog`. An unknown name, a missing or
   * unknown option, or an option of the wrong type stops the run with the valid ones named.
   */
  indicator<N extends IndicatorName>(
    name: N,
    options: IndicatorOptions<N>,
    series?: string,
  ): IndicatorValue<N> | undefined;
  /** The last `n` closes of a series on its component, oldest first (at most the kept history). */
  closes(n: number, series?: string): readonly number[];
  /** The last `n` candles of a series, oldest first (at most the kept history): OHLC, volume, bid and ask. */
  candles(n: number, series?: string): readonly RecentCandle[];

  /**
   * Draws a value of the strategy's own on report.html at the event's time (in onCandle: at the
   * candle's open time, on its bar, as TradingView does), under `name` (one line or
   * set of markers per name): on the price chart, or in a pane below it (`{ pane: 'rsi' }`); markers
   * for signals (`{ style: 'up' }`). `undefined` or NaN leaves a gap (`ctx.plot('sma', ctx.sma(20))`
   * needs no check). Saved as the run folder's plots.csv; costs nothing where nothing is saved (a
   * sweep's trials, `--no-save`).
   */
  plot(name: string, value: number | undefined, options?: PlotOptions): void;

  /** An instrument's definition: pip location, display precision, minimum trade size, margin rate… */
  instrument(name: string): InstrumentView;
  /** `n` pips of `instrument` as a price distance (EUR_USD: 10 → 0.001; USD_JPY: 10 → 0.1). */
  pips(instrument: string, n: number): number;
  /** A price distance of `instrument` in pips (EUR_USD: 0.001 → 10). */
  toPips(instrument: string, distance: number): number;
  /** A price rounded to the instrument's display precision (half away from zero). */
  round(instrument: string, price: number): number;

  position(instrument: string): PositionView;
  trades(instrument?: string): readonly TradeView[];
  orders(instrument?: string): readonly OrderView[];
  readonly account: AccountView;

  market(instrument: string, units: number | string, opts?: OrderOptions): OrderIntent;
  limit(instrument: string, units: number | string, price: number, opts?: OrderOptions): OrderIntent;
  stop(instrument: string, units: number | string, price: number, opts?: OrderOptions): OrderIntent;
  marketIfTouched(
    instrument: string,
    units: number | string,
    price: number,
    opts?: OrderOptions,
  ): OrderIntent;
  closeTrade(tradeId: string, units?: number | string | 'ALL'): OrderIntent;
  closePosition(instrument: string, side?: 'long' | 'short' | 'both'): OrderIntent;
  cancel(orderId: string): OrderIntent;
  /** Create, replace (object) or cancel (null) a trade's dependent orders. */
  setTradeOrders(
    tradeId: string,
    orders: { readonly tp?: number | null; readonly sl?: number | null; readonly trailing?: number | null },
  ): OrderIntent;
}

/** The strategy definition a module exports as default. */
export interface Strategy<P extends Params = Params, S = unknown> {
  readonly name?: string;
  readonly description?: string;
  readonly params: P;
  readonly subscribe: Subscriptions | ((params: P) => Subscriptions);
  /** How many candles of history each series keeps for indicator warm-up and `ctx.closes` (default 500). */
  readonly history?: number;
  init?(params: P): S;
  onStart?(ctx: Ctx<P>, state: S): Step<S>;
  onCandle?(ctx: Ctx<P>, state: S): Step<S>;
  onTick?(ctx: Ctx<P>, state: S): Step<S>;
  onSignal?(ctx: Ctx<P>, state: S): Step<S>;
  onCalendar?(ctx: Ctx<P>, state: S): Step<S>;
  onSpread?(ctx: Ctx<P>, state: S): Step<S>;
  onCot?(ctx: Ctx<P>, state: S): Step<S>;
  onTimer?(ctx: Ctx<P>, state: S): Step<S>;
  /** Every transaction of the account (fills, cancels, rejects, financing...), after the portfolio applied it. */
  onTransaction?(ctx: Ctx<P>, state: S): Step<S>;
  onStop?(ctx: Ctx<P>, state: S): Step<S>;
}

/** The event handlers a strategy may have (every `on…` of `Strategy`), in one list. */
export const HANDLER_NAMES = [
  'onStart',
  'onCandle',
  'onTick',
  'onSignal',
  'onCalendar',
  'onSpread',
  'onCot',
  'onTimer',
  'onTransaction',
  'onStop',
] as const satisfies readonly (keyof Strategy)[];

/** One of `HANDLER_NAMES`. */
export type HandlerName = (typeof HANDLER_NAMES)[number];

/** Declares a strategy with full type inference of params and state. */
export function defineStrategy<P extends Params, S>(def: Strategy<P, S>): Strategy<P, S> {
  return def;
}
