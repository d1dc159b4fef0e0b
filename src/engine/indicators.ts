import { createRequire } from 'node:module';

// technicalindicators is one 150 KB CommonJS file that every backtest would compile at start-up;
// most strategies use only Sma/Ema (below), so it is required on the first TiIndicator instead.
const require = createRequire(import.meta.url);
let tiExports: Record<string, TiClass> | undefined;
const ti = (): Record<string, TiClass> =>
  (tiExports ??= require('technicalindicators') as Record<string, TiClass>);

/**
 * A streaming indicator: fed one value (or bar) at a time, O(1) per update.
 * `value` is undefined until the indicator has seen enough input.
 */
export interface StreamingIndicator<V = number> {
  update(close: number, high: number, low: number, open: number, volume: number): void;
  readonly value: V | undefined;
}

/**
 * Simple moving average on a ring buffer. The running sum is recomputed every 4096 updates to stop
 * drift. The value is kept in a number field that is NaN until ready (a field that starts
 * `undefined` would box every new value in a fresh heap number: one allocation per update).
 */
export class Sma implements StreamingIndicator {
  readonly #buf: Float64Array;
  #i = 0;
  #n = 0;
  #sum = 0;
  #sinceExact = 0;
  #value = Number.NaN;
  constructor(readonly period: number) {
    if (!Number.isInteger(period) || period < 1)
      throw new RangeError(`SMA period must be a positive integer, got ${period}`);
    this.#buf = new Float64Array(period);
  }
  get value(): number | undefined {
    return this.#n === this.period ? this.#value : undefined;
  }
  update(x: number): void {
    const p = this.period;
    const old = this.#buf[this.#i]!;
    this.#buf[this.#i] = x;
    this.#i = this.#i + 1 === p ? 0 : this.#i + 1;
    if (this.#n < p) {
      this.#n++;
      this.#sum += x;
    } else {
      this.#sum += x - old;
    }
    if (++this.#sinceExact === 4096) {
      this.#sinceExact = 0;
      let s = 0;
      for (let k = 0; k < this.#n; k++) s += this.#buf[k]!;
      this.#sum = s;
    }
    this.#value = this.#sum / p;
  }
}

/** Exponential moving average seeded with the SMA of the first `period` values (the usual convention). */
export class Ema implements StreamingIndicator {
  readonly #k: number;
  #n = 0;
  #seed = 0;
  /** NaN until `period` values were seen (a number field: updates do not allocate). */
  #value = Number.NaN;
  constructor(readonly period: number) {
    if (!Number.isInteger(period) || period < 1)
      throw new RangeError(`EMA period must be a positive integer, got ${period}`);
    this.#k = 2 / (period + 1);
  }
  get value(): number | undefined {
    return this.#n >= this.period ? this.#value : undefined;
  }
  update(x: number): void {
    if (this.#n >= this.period) {
      this.#value += (x - this.#value) * this.#k;
      return;
    }
    this.#seed += x;
    if (++this.#n === this.period) this.#value = this.#seed / this.period;
  }
}

type TiClass = new (input: Record<string, unknown>) => { nextValue(v: unknown): unknown };

/**
 * How `ctx.indicator` drives each technicalindicators class: its input (`value`: the close; `bar`:
 * open, high, low, close and volume), its required and optional options (`b`: a boolean, else a
 * number), and the type of its value (for the error messages and docs/strategies.md; the types
 * themselves are `IndicatorCatalog` in src/strategy/api.ts). The property test in
 * indicators.test.ts checks every entry against the class's own `calculate`.
 */
export const INDICATORS: Readonly<
  Record<
    string,
    {
      readonly input: 'value' | 'bar';
      readonly required: readonly string[];
      readonly optional?: readonly string[];
      readonly returns: string;
    }
  >
> = {
  SMA: { input: 'value', required: ['period'], returns: 'number' },
  EMA: { input: 'value', required: ['period'], returns: 'number' },
  WMA: { input: 'value', required: ['period'], returns: 'number' },
  WEMA: { input: 'value', required: ['period'], returns: 'number' },
  MACD: {
    input: 'value',
    required: ['fastPeriod', 'slowPeriod', 'signalPeriod'],
    optional: ['b:SimpleMAOscillator', 'b:SimpleMASignal'],
    returns: '{ MACD?, signal?, histogram? }',
  },
  RSI: { input: 'value', required: ['period'], returns: 'number' },
  BollingerBands: { input: 'value', required: ['period', 'stdDev'], returns: '{ middle, upper, lower, pb }' },
  ADX: { input: 'bar', required: ['period'], returns: '{ adx, pdi, mdi }' },
  ATR: { input: 'bar', required: ['period'], returns: 'number' },
  TrueRange: { input: 'bar', required: [], returns: 'number' },
  ROC: { input: 'value', required: ['period'], returns: 'number' },
  KST: {
    input: 'value',
    required: [
      'ROCPer1',
      'ROCPer2',
      'ROCPer3',
      'ROCPer4',
      'SMAROCPer1',
      'SMAROCPer2',
      'SMAROCPer3',
      'SMAROCPer4',
      'signalPeriod',
    ],
    returns: '{ kst, signal? }',
  },
  PSAR: { input: 'bar', required: ['step', 'max'], returns: 'number' },
  Stochastic: { input: 'bar', required: ['period', 'signalPeriod'], returns: '{ k, d? }' },
  WilliamsR: { input: 'bar', required: ['period'], returns: 'number' },
  ADL: { input: 'bar', required: [], returns: 'number' },
  OBV: { input: 'bar', required: [], returns: 'number' },
  TRIX: { input: 'value', required: ['period'], returns: 'number' },
  ForceIndex: { input: 'bar', required: ['period'], returns: 'number' },
  CCI: { input: 'bar', required: ['period'], returns: 'number' },
  AwesomeOscillator: { input: 'bar', required: ['fastPeriod', 'slowPeriod'], returns: 'number' },
  VWAP: { input: 'bar', required: [], returns: 'number' },
  MFI: { input: 'bar', required: ['period'], returns: 'number' },
  StochasticRSI: {
    input: 'value',
    required: ['rsiPeriod', 'stochasticPeriod', 'kPeriod', 'dPeriod'],
    returns: '{ stochRSI, k, d }',
  },
  AverageGain: { input: 'value', required: ['period'], returns: 'number' },
  AverageLoss: { input: 'value', required: ['period'], returns: 'number' },
  SD: { input: 'value', required: ['period'], returns: 'number' },
  Highest: { input: 'value', required: ['period'], returns: 'number' },
  Lowest: { input: 'value', required: ['period'], returns: 'number' },
  Sum: { input: 'value', required: ['period'], returns: 'number' },
  HeikinAshi: { input: 'bar', required: [], returns: '{ open, high, low, close, volume? }' },
  IchimokuCloud: {
    input: 'bar',
    required: ['conversionPeriod', 'basePeriod', 'spanPeriod', 'displacement'],
    returns: '{ conversion, base, spanA, spanB }',
  },
  KeltnerChannels: {
    input: 'bar',
    required: ['maPeriod', 'atrPeriod', 'b:useSMA', 'multiplier'],
    returns: '{ middle, upper, lower }',
  },
  ChandelierExit: { input: 'bar', required: ['period', 'multiplier'], returns: '{ exitLong, exitShort }' },
};

/** Classes of technicalindicators that are not one series' streaming indicator, and why. */
const NOT_STREAMING: Readonly<Record<string, string>> = {
  CrossUp: 'it compares two lines: compare two values yourself (e.g. the previous and current ctx.sma)',
  CrossDown: 'it compares two lines: compare two values yourself (e.g. the previous and current ctx.sma)',
  VolumeProfile: 'it is computed over a whole range, not one candle at a time',
};

/** An indicator name or its options that `ctx.indicator` cannot use: names the valid ones. */
export class IndicatorError extends Error {
  readonly code = 'INDICATOR' as const;
  constructor(message: string) {
    super(message);
    this.name = 'IndicatorError';
  }
}

const optionName = (o: string): string => (o.startsWith('b:') ? o.slice(2) : o);

/** Checks an indicator's name and options; returns its spec. Throws IndicatorError naming what is valid. */
export function checkIndicator(name: string, options: unknown): (typeof INDICATORS)[string] {
  const spec = Object.hasOwn(INDICATORS, name) ? INDICATORS[name] : undefined;
  if (spec === undefined) {
    const why = Object.hasOwn(NOT_STREAMING, name)
      ? ` (${name} is not available: ${NOT_STREAMING[name]})`
      : '';
    throw new IndicatorError(
      `unknown indicator '${name}'${why}; ctx.indicator knows: ${Object.keys(INDICATORS).join(', ')}`,
    );
  }
  const all = [...spec.required, ...(spec.optional ?? [])];
  const usage =
    all.length === 0
      ? '{}'
      : `{ ${all.map((o) => `${optionName(o)}${spec.required.includes(o) ? '' : '?'}: ${o.startsWith('b:') ? 'boolean' : 'number'}`).join(', ')} }`;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new IndicatorError(`indicator '${name}' needs an options object ${usage}`);
  }
  const opts = options as Record<string, unknown>;
  for (const k of Object.keys(opts)) {
    if (!all.some((o) => optionName(o) === k))
      throw new IndicatorError(`indicator '${name}': unknown option '${k}'; its options are ${usage}`);
  }
  for (const o of all) {
    const k = optionName(o);
    const v = opts[k];
    if (v === undefined) {
      if (spec.required.includes(o))
        throw new IndicatorError(`indicator '${name}': option '${k}' is missing; its options are ${usage}`);
      continue;
    }
    if (o.startsWith('b:')) {
      if (typeof v !== 'boolean')
        throw new IndicatorError(
          `indicator '${name}': option '${k}' must be true or false (got ${JSON.stringify(v)})`,
        );
    } else if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw new IndicatorError(
        `indicator '${name}': option '${k}' must be a number > 0 (got ${JSON.stringify(v)})`,
      );
    }
  }
  return spec;
}

/**
 * One technicalindicators indicator (see `INDICATORS`), driven through its `nextValue`. Slower than
 * `Sma`/`Ema` (about 250 ns an update). `value` is the last value it gave (undefined before it gave one).
 */
export class TiIndicator<V = unknown> implements StreamingIndicator<V> {
  readonly #impl: { nextValue(v: unknown): unknown };
  readonly #bars: boolean;
  value: V | undefined = undefined;
  /**
   * What the last update gave, undefined included (a few technicalindicators classes give nothing
   * for some inputs after their warm-up, e.g. TRIX on flat prices; `value` then keeps the last one).
   */
  last: V | undefined = undefined;
  constructor(
    readonly name: string,
    options: Readonly<Record<string, unknown>>,
  ) {
    const spec = checkIndicator(name, options);
    const Ctor = ti()[name]!;
    this.#bars = spec.input === 'bar';
    const input: Record<string, unknown> = { ...options, values: [] };
    if (this.#bars) Object.assign(input, { high: [], low: [], close: [], open: [], volume: [] });
    this.#impl = new Ctor(input);
  }
  update(close: number, high: number, low: number, open: number, volume: number): void {
    const v = this.#bars
      ? this.#impl.nextValue({ close, high, low, open, volume })
      : this.#impl.nextValue(close);
    this.last = v as V | undefined;
    if (v !== undefined) this.value = v as V;
  }
}
