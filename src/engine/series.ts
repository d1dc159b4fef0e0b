import type { Candle, PriceComponent } from '../domain/candle.ts';
import type { Granularity } from '../domain/granularity.ts';
import type { RecentCandle } from '../strategy/api.ts';
import { Ema, Sma, TiIndicator, type StreamingIndicator } from './indicators.ts';
import type { IndicatorMemo, MemoIndicator } from './indicator-memo.ts';

/**
 * One candle series a strategy subscribed to (instrument × granularity × component): its recent
 * history in ring buffers and the indicators computed on it.
 *
 * Indicators are created on first use and warmed from the kept history, then updated on every
 * candle before the strategy's handler runs. Warm-up is exact for windowed indicators (SMA) whose
 * window fits in the history; recursive ones (EMA, RSI) start from the oldest kept candle.
 */
export class SeriesState {
  readonly key: string;
  readonly #o: Float64Array;
  readonly #h: Float64Array;
  readonly #l: Float64Array;
  readonly #c: Float64Array;
  readonly #v: Float64Array;
  /** Open time and both sides, for `candles(n)`: numbers in typed arrays, no candle object is kept. */
  readonly #t: Float64Array;
  readonly #bid: Float64Array;
  readonly #ask: Float64Array;
  #next = 0;
  #count = 0;
  readonly #all: StreamingIndicator<unknown>[] = [];
  readonly #smaList: Sma[] = [];
  readonly #ema = new Map<number, Ema>();
  readonly #custom = new Map<string, StreamingIndicator<unknown>>();
  open = Number.NaN;
  high = Number.NaN;
  low = Number.NaN;
  close = Number.NaN;
  last: Candle | undefined = undefined;

  constructor(
    readonly instrument: string,
    readonly granularity: Granularity,
    readonly component: PriceComponent,
    readonly capacity: number,
    /** Shares `indicator` values with other runs on the same candles (`scope` names the candles: see IndicatorMemo). */
    readonly memo?: { readonly memo: IndicatorMemo; readonly scope: string },
  ) {
    this.key = `${instrument}:${granularity}:${component}`;
    this.#o = new Float64Array(capacity);
    this.#h = new Float64Array(capacity);
    this.#l = new Float64Array(capacity);
    this.#c = new Float64Array(capacity);
    this.#v = new Float64Array(capacity);
    this.#t = new Float64Array(capacity);
    this.#bid = new Float64Array(capacity * 4);
    this.#ask = new Float64Array(capacity * 4);
  }

  /** Records a completed candle and updates every indicator of the series. */
  push(c: Candle): void {
    let o: number, h: number, l: number, cl: number;
    switch (this.component) {
      case 'B':
        o = c.bo;
        h = c.bh;
        l = c.bl;
        cl = c.bc;
        break;
      case 'A':
        o = c.ao;
        h = c.ah;
        l = c.al;
        cl = c.ac;
        break;
      default:
        o = (c.bo + c.ao) / 2;
        h = (c.bh + c.ah) / 2;
        l = (c.bl + c.al) / 2;
        cl = (c.bc + c.ac) / 2;
    }
    this.open = o;
    this.high = h;
    this.low = l;
    this.close = cl;
    this.last = c;
    const i = this.#next;
    this.#o[i] = o;
    this.#h[i] = h;
    this.#l[i] = l;
    this.#c[i] = cl;
    this.#v[i] = c.volume;
    this.#t[i] = c.time;
    const j = i * 4;
    const bid = this.#bid;
    const ask = this.#ask;
    bid[j] = c.bo;
    bid[j + 1] = c.bh;
    bid[j + 2] = c.bl;
    bid[j + 3] = c.bc;
    ask[j] = c.ao;
    ask[j + 1] = c.ah;
    ask[j + 2] = c.al;
    ask[j + 3] = c.ac;
    this.#next = i + 1 === this.capacity ? 0 : i + 1;
    if (this.#count < this.capacity) this.#count++;
    const all = this.#all;
    for (let k = 0; k < all.length; k++) all[k]!.update(cl, h, l, o, c.volume);
  }

  sma(period: number): number | undefined {
    // A strategy uses a few SMAs: a linear scan of them is cheaper than a map lookup per call.
    const list = this.#smaList;
    for (let i = 0; i < list.length; i++) {
      const x = list[i]!;
      if (x.period === period) return x.value;
    }
    const x = this.#register(new Sma(period));
    list.push(x);
    return x.value;
  }

  ema(period: number): number | undefined {
    let x = this.#ema.get(period);
    if (x === undefined) {
      x = this.#register(new Ema(period));
      this.#ema.set(period, x);
    }
    return x.value;
  }

  /** The last `n` candles, oldest first (objects made on this call). */
  candles(n: number): RecentCandle[] {
    const k = Math.max(0, Math.min(Math.floor(n), this.#count));
    const out = new Array<RecentCandle>(k);
    let i = (this.#next - k + this.capacity) % this.capacity;
    for (let j = 0; j < k; j++) {
      const b = i * 4;
      out[j] = {
        time: this.#t[i]!,
        open: this.#o[i]!,
        high: this.#h[i]!,
        low: this.#l[i]!,
        close: this.#c[i]!,
        volume: this.#v[i]!,
        bid: {
          open: this.#bid[b]!,
          high: this.#bid[b + 1]!,
          low: this.#bid[b + 2]!,
          close: this.#bid[b + 3]!,
        },
        ask: {
          open: this.#ask[b]!,
          high: this.#ask[b + 1]!,
          low: this.#ask[b + 2]!,
          close: this.#ask[b + 3]!,
        },
      };
      i = i + 1 === this.capacity ? 0 : i + 1;
    }
    return out;
  }

  indicator<T>(name: string, options: Readonly<Record<string, unknown>>): T | undefined {
    const key = `${name}${JSON.stringify(options)}`;
    let x = this.#custom.get(key);
    if (x === undefined) {
      const m = this.memo;
      // Memoised by where it starts: the series, the candle it is created at and the history it is warmed from.
      x = this.#register(
        m
          ? m.memo.create(
              `${m.scope}|${this.key}|${this.capacity}|${key}|${this.last?.time ?? ''}|${this.#count}`,
              name,
              options,
            )
          : new TiIndicator(name, options),
      );
      this.#custom.set(key, x);
    }
    return x.value as T | undefined;
  }

  /** The run ended normally: what its memoised indicators recorded is offered to the memo. */
  finish(): void {
    this.memo?.memo.finish(this.#custom.values() as Iterable<MemoIndicator>);
  }

  /** The last `n` closes, oldest first. */
  closes(n: number): number[] {
    const k = Math.max(0, Math.min(Math.floor(n), this.#count));
    const out = new Array<number>(k);
    let i = (this.#next - k + this.capacity) % this.capacity;
    for (let j = 0; j < k; j++) {
      out[j] = this.#c[i]!;
      i = i + 1 === this.capacity ? 0 : i + 1;
    }
    return out;
  }

  #register<I extends StreamingIndicator<unknown>>(ind: I): I {
    let i = (this.#next - this.#count + this.capacity) % this.capacity;
    for (let j = 0; j < this.#count; j++) {
      ind.update(this.#c[i]!, this.#h[i]!, this.#l[i]!, this.#o[i]!, this.#v[i]!);
      i = i + 1 === this.capacity ? 0 : i + 1;
    }
    this.#all.push(ind);
    return ind;
  }
}
