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
import type { CalendarEvent, SignalEvent, TimerEvent } from '../domain/events.ts';
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
 * - timers: `{ name, everyMs }`, fired on the engine clock (virtual in backtests).
 */
export interface Subscriptions {
  readonly candles?: readonly string[];
  readonly ticks?: readonly string[];
  readonly signals?: readonly string[];
  readonly calendar?: readonly string[];
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
export type Step<S> = void | undefined | readonly OrderIntent[] | { readonly state?: S; readonly intents?: readonly OrderIntent[] };

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
  /** For GTD: expiry time in ms. */
  readonly gtdTime?: UnixMs;
  readonly triggerCondition?: OrderTriggerCondition;
  readonly tag?: string;
  readonly comment?: string;
  /** Client ID of the order; default: `<strategy>-<sequence>`, deterministic per run. */
  readonly clientId?: string;
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
  /** Any technicalindicators indicator by class name, e.g. `ctx.indicator('RSI', { period: 14 })`. */
  indicator<T = number>(name: string, options: Readonly<Record<string, unknown>>, series?: string): T | undefined;
  /** The last `n` closes of a series on its component, oldest first (at most the kept history). */
  closes(n: number, series?: string): readonly number[];

  position(instrument: string): PositionView;
  trades(instrument?: string): readonly TradeView[];
  orders(instrument?: string): readonly OrderView[];
  readonly account: AccountView;

  market(instrument: string, units: number | string, opts?: OrderOptions): OrderIntent;
  limit(instrument: string, units: number | string, price: number, opts?: OrderOptions): OrderIntent;
  stop(instrument: string, units: number | string, price: number, opts?: OrderOptions): OrderIntent;
  marketIfTouched(instrument: string, units: number | string, price: number, opts?: OrderOptions): OrderIntent;
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
  onTimer?(ctx: Ctx<P>, state: S): Step<S>;
  /** Every transaction of the account (fills, cancels, rejects, financing...), after the portfolio applied it. */
  onTransaction?(ctx: Ctx<P>, state: S): Step<S>;
  onStop?(ctx: Ctx<P>, state: S): Step<S>;
}

/** Declares a strategy with full type inference of params and state. */
export function defineStrategy<P extends Params, S>(def: Strategy<P, S>): Strategy<P, S> {
  return def;
}
