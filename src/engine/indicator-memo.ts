import { TiIndicator, type StreamingIndicator } from './indicators.ts';

/**
 * Indicator values shared between runs on the very same candles (a sweep's trials in one worker).
 *
 * A technicalindicators indicator (`ctx.indicator`) costs 0.25-2 µs an update, more than the
 * engine's whole cost per candle, and every trial of a sweep that asks for the same indicator with
 * the same options on the same series computes the same values. The first such run records them
 * (each update's value, and the close it was fed as a check); a later run that creates the same
 * indicator at the same point replays them: one array read an update.
 *
 * The key is the caller's scope (which candles: the decoded data and the run's period and data
 * options), the series, the indicator's name and options, the candle it was created at and the
 * history it was warmed from. A recording is offered only when its run ended normally (the engine's
 * `stop`); a replay that is fed another close than the one recorded throws, as a broken invariant.
 * The values are shared objects (BollingerBands gives `{ upper, middle, lower, pb }`): read them, as
 * every strategy does, and do not change them.
 *
 * SMA and EMA are not memoised: they cost a few nanoseconds an update, less than a lookup would.
 */
export class IndicatorMemo {
  readonly #done = new Map<string, Recording>();
  /** Indicators recorded and replayed (for tests and the bench). */
  readonly stats = { recorded: 0, replayed: 0 };

  /** At most `maxRecordings` are kept (each holds one value per candle of its run). */
  constructor(readonly maxRecordings = 32) {}

  /** The indicator for `key`: a replay of a finished recording, or a new one that records itself. */
  create(key: string, name: string, options: Readonly<Record<string, unknown>>): MemoIndicator {
    const done = this.#done.get(key);
    if (done) {
      this.stats.replayed++;
      return new Replay(key, done);
    }
    return new Recorder(key, new TiIndicator(name, options), this.#done.size < this.maxRecordings);
  }

  /** Offers what a run's indicators recorded (called when the run ended normally). */
  finish(indicators: Iterable<MemoIndicator>): void {
    for (const x of indicators) {
      if (
        !(x instanceof Recorder) ||
        !x.recording ||
        this.#done.has(x.key) ||
        this.#done.size >= this.maxRecordings
      )
        continue;
      this.#done.set(x.key, x.recording);
      this.stats.recorded++;
    }
  }
}

interface Recording {
  readonly closes: number[];
  readonly values: unknown[];
}

/** An indicator from the memo: computed and recorded, or replayed. */
export type MemoIndicator = StreamingIndicator<unknown> & { readonly key: string };

class Recorder implements MemoIndicator {
  readonly recording: Recording | undefined;
  constructor(
    readonly key: string,
    readonly inner: TiIndicator,
    record: boolean,
  ) {
    this.recording = record ? { closes: [], values: [] } : undefined;
  }
  get value(): unknown {
    return this.inner.value;
  }
  update(close: number, high: number, low: number, open: number, volume: number): void {
    this.inner.update(close, high, low, open, volume);
    const r = this.recording;
    if (r) {
      r.closes.push(close);
      r.values.push(this.inner.value);
    }
  }
}

class Replay implements MemoIndicator {
  value: unknown = undefined;
  #i = 0;
  constructor(
    readonly key: string,
    readonly rec: Recording,
  ) {}
  update(close: number): void {
    const i = this.#i++;
    if (i >= this.rec.closes.length || this.rec.closes[i] !== close) {
      throw new Error(
        `indicator memo: update ${i} of ${this.key} is fed ${close}, the recorded run was fed ${this.rec.closes[i]}: the runs sharing a memo must read the same candles`,
      );
    }
    this.value = this.rec.values[i];
  }
}
