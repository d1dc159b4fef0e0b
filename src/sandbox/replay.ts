import type { Logger } from 'pino';
import type { Catalog } from '../adapters/catalog/index.ts';
import type { Candle } from '../domain/candle.ts';
import type { UnixMs } from '../domain/time.ts';

interface PendingTick {
  readonly at: UnixMs;
  readonly bid: number;
  readonly ask: number;
}

interface Feed {
  readonly instrument: string;
  readonly iter: AsyncIterator<readonly Candle[]>;
  batch: readonly Candle[];
  index: number;
  pending: PendingTick[];
  done: boolean;
}

/** Ticks per pump before yielding to the event loop (keeps the server responsive at high speeds). */
const MAX_PER_PUMP = 5000;

/** What a replay reads, where its ticks go, and how it moves the sandbox clock between ticks. */
export interface ReplayOptions {
  readonly catalog: Catalog;
  /** An instrument's M1 candles from `from` on (default the catalog's, as held). */
  readonly candles?: (instrument: string, from: UnixMs) => AsyncIterable<readonly Candle[]>;
  readonly start: UnixMs;
  readonly speed: number;
  readonly instruments: readonly string[];
  readonly tick: (p: { instrument: string; bid: number; ask: number; time: number }) => void;
  /** Moves the sandbox clock (expiries, financing, candle completeness) between ticks. */
  readonly advance?: (t: UnixMs) => void;
  readonly log?: Logger;
}

/**
 * The sandbox's replay clock: M1 candles from the catalog, streamed month by month (never a year in
 * memory), each turned into four ticks (open, nearer extreme, other extreme, close, spaced inside the
 * minute) and fed at `speed` simulated ms per real ms.
 */
export class Replay {
  readonly #o: ReplayOptions;
  #feeds: Feed[] = [];
  #running = false;
  #realStart = 0;
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(o: ReplayOptions) {
    this.#o = o;
  }

  /** The replay's simulated time now. */
  get now(): UnixMs {
    return this.#o.start + (Date.now() - this.#realStart) * this.#o.speed;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#realStart = Date.now();
    for (const instrument of this.#o.instruments) {
      if (!this.#o.catalog.has(instrument, 'M1')) {
        this.#o.log?.warn({ instrument }, 'replay: no M1 data in the catalog for this instrument');
        continue;
      }
      const source =
        this.#o.candles?.(instrument, this.#o.start) ??
        this.#o.catalog.candles({ instrument, granularity: 'M1', from: this.#o.start });
      const iter = source[Symbol.asyncIterator]();
      this.#feeds.push({ instrument, iter, batch: [], index: 0, pending: [], done: false });
    }
    this.#timer = setInterval(() => void this.#pump(), 20);
    this.#timer.unref();
  }

  stop(): void {
    this.#running = false;
    if (this.#timer) clearInterval(this.#timer);
    for (const f of this.#feeds) void f.iter.return?.();
  }

  async #fill(f: Feed): Promise<void> {
    while (f.pending.length === 0 && !f.done) {
      if (f.index >= f.batch.length) {
        const r = await f.iter.next();
        if (r.done) {
          f.done = true;
          this.#o.log?.info({ instrument: f.instrument }, 'replay: end of the catalog data');
          return;
        }
        f.batch = r.value;
        f.index = 0;
        continue;
      }
      const c = f.batch[f.index++]!;
      const lowFirst = c.bo - c.bl <= c.bh - c.bo;
      const step = (c.at - c.time) / 4;
      const spread = (c.ao - c.bo + c.ac - c.bc) / 2;
      const hi = { bid: c.bh, ask: Math.max(c.bh + spread, c.bh) };
      const lo = { bid: c.bl, ask: Math.max(c.bl + spread, c.bl) };
      const [first, second] = lowFirst ? [lo, hi] : [hi, lo];
      f.pending.push(
        { at: c.time, bid: c.bo, ask: c.ao },
        { at: c.time + step, bid: first.bid, ask: first.ask },
        { at: c.time + 2 * step, bid: second.bid, ask: second.ask },
        { at: c.time + 3 * step, bid: c.bc, ask: c.ac },
      );
    }
  }

  async #pump(): Promise<void> {
    if (this.#busy || !this.#running) return;
    this.#busy = true;
    try {
      const now = this.now;
      for (let n = 0; n < MAX_PER_PUMP && this.#running; n++) {
        let best: Feed | undefined;
        for (const f of this.#feeds) {
          await this.#fill(f);
          const head = f.pending[0];
          if (head && head.at <= now && (!best || head.at < best.pending[0]!.at)) best = f;
        }
        if (!best) {
          // Every tick up to `now` is out: the clock may move on to `now` itself.
          this.#o.advance?.(now);
          break;
        }
        const t = best.pending.shift()!;
        this.#o.tick({ instrument: best.instrument, bid: t.bid, ask: t.ask, time: t.at });
      }
    } catch (e) {
      this.#o.log?.error({ err: (e as Error).message }, 'replay failed; the clock stops');
      this.stop();
    } finally {
      this.#busy = false;
    }
  }
}
