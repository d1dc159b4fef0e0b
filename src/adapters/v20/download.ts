import type { Catalog } from '../catalog/catalog.ts';
import { gateRows, gateStated, type GateAsk } from '../catalog/gate.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { Candle } from '../../domain/candle.ts';
import { candleClose, type Granularity } from '../../domain/granularity.ts';
import { parseTime, type UnixMs } from '../../domain/time.ts';
import type { Candlestick, CandlestickData } from '../../domain/v20/index.ts';
import type { V20Rest } from './rest.ts';

/** v20's maximum candles per request. */
export const MAX_PAGE = 5000;

/** A download that could not run or was stopped. Pages already written stay in the catalog. */
export class DownloadError extends Error {
  readonly code: 'DOWNLOAD' | 'DOWNLOAD_INTERRUPTED';
  constructor(code: DownloadError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DownloadError';
    this.code = code;
  }
}

/** The price components a catalog row needs: bid and ask (`BA`), or mid only (`M`, written as bid = ask). */
export type DownloadPrice = 'BA' | 'M';

export interface DownloadOptions {
  readonly rest: V20Rest;
  readonly catalog: Catalog;
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly price?: DownloadPrice;
  /** Inclusive start (candle open time). */
  readonly from: UnixMs;
  /** Exclusive end (candle open time). */
  readonly to: UnixMs;
  /** Candles per request, at most 5000 (the default). */
  readonly pageSize?: number;
  /** Ignore what the catalog already holds and fetch the whole range again (rows are replaced, never duplicated). */
  readonly restart?: boolean;
  /** Stops the download between pages (the pages written so far are kept). */
  readonly signal?: AbortSignal;
  /** Called after each page is written. */
  readonly onPage?: (p: DownloadProgress) => void;
  /**
   * The instruments fxflow knows: when the instrument is one of them, every page passes the gate
   * `data import` applies (catalog/gate.ts) before it is written. The CLI always gives them.
   */
  readonly instruments?: InstrumentRegistry;
}

export interface DownloadProgress {
  readonly pages: number;
  readonly written: number;
  /** Next candle time to fetch. */
  readonly cursor: UnixMs;
  /** Share of [from, to) covered, 0..1. */
  readonly fraction: number;
}

export interface DownloadResult {
  readonly pages: number;
  readonly written: number;
  /** Where this run started (after the last complete candle already in the catalog, or `from`). */
  readonly start: UnixMs;
  /** True when the catalog already held part of the range and the download carried on after it. */
  readonly resumed: boolean;
  /** Open time of the last candle written (or already held), if any. */
  readonly last?: UnixMs;
  /** True when it stopped at an incomplete candle (the present): run again later for the rest. */
  readonly reachedPresent: boolean;
}

function side(
  d: CandlestickData | undefined,
  which: string,
  instrument: string,
  time: string,
): [number, number, number, number] {
  if (d === undefined)
    throw new DownloadError(
      'DOWNLOAD',
      `${instrument} candle ${time} has no ${which} prices; the server ignored the price parameter`,
    );
  return [Number(d.o), Number(d.h), Number(d.l), Number(d.c)];
}

/** A v20 candlestick as a catalog candle (both sides; mid-only data gives bid = ask). */
export function toCandle(
  c: Candlestick,
  instrument: string,
  granularity: Granularity,
  price: DownloadPrice,
): Candle {
  const time = parseTime(c.time);
  if (Number.isNaN(time))
    throw new DownloadError(
      'DOWNLOAD',
      `${instrument} candle time "${c.time}" is not RFC 3339 or UNIX seconds`,
    );
  const [bo, bh, bl, bc] =
    price === 'BA' ? side(c.bid, 'bid', instrument, c.time) : side(c.mid, 'mid', instrument, c.time);
  const [ao, ah, al, ac] = price === 'BA' ? side(c.ask, 'ask', instrument, c.time) : [bo, bh, bl, bc];
  return {
    kind: 'candle',
    instrument,
    granularity,
    time,
    at: candleClose(granularity, time),
    bo,
    bh,
    bl,
    bc,
    ao,
    ah,
    al,
    ac,
    volume: c.volume,
    complete: c.complete,
  };
}

const MONTH = (t: UnixMs): { start: UnixMs; next: UnixMs } => {
  const d = new Date(t);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    next: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
};

/**
 * The open time of the last candle the catalog holds in [from, to), reading month files from the
 * end backwards (only the latest month with data is parsed). Undefined when it holds none.
 */
export async function lastHeld(
  catalog: Catalog,
  instrument: string,
  granularity: Granularity,
  from: UnixMs,
  to: UnixMs,
): Promise<UnixMs | undefined> {
  if (!catalog.has(instrument, granularity)) return undefined;
  for (let m = MONTH(to - 1); m.next > from; m = MONTH(m.start - 1)) {
    let last: UnixMs | undefined;
    for await (const batch of catalog.candles({
      instrument,
      granularity,
      from: Math.max(from, m.start),
      to: Math.min(to, m.next),
    })) {
      if (batch.length > 0) last = batch[batch.length - 1]!.time;
    }
    if (last !== undefined) return last;
  }
  return undefined;
}

/**
 * Downloads candles into the catalog, page by page: each request asks for `pageSize` candles
 * (`from` + `count`, at most 5000) and the next page starts at the close of the last candle
 * received (open + granularity), so pages neither overlap nor leave a hole. Only complete candles
 * are written; an incomplete one (the present) ends the run. Requests go through `V20Http`, which
 * keeps to the rate limit and retries reads.
 *
 * Resumable: each page is merged into the catalog as soon as it arrives (whole month files are
 * replaced atomically), and a new run starts after the last candle the catalog already holds in
 * [from, to) (assumption: earlier runs filled the range from its start; `restart` refetches all).
 */
export async function downloadCandles(o: DownloadOptions): Promise<DownloadResult> {
  const pageSize = o.pageSize ?? MAX_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE)
    throw new DownloadError('DOWNLOAD', `page size ${pageSize} must be an integer from 1 to ${MAX_PAGE}`);
  if (!(o.to > o.from))
    throw new DownloadError(
      'DOWNLOAD',
      `--to (${new Date(o.to).toISOString()}) must be after --from (${new Date(o.from).toISOString()})`,
    );
  const price = o.price ?? 'BA';
  const held = o.restart ? undefined : await lastHeld(o.catalog, o.instrument, o.granularity, o.from, o.to);
  const start = held === undefined ? o.from : candleClose(o.granularity, held);
  let cursor = start;
  let pages = 0;
  let written = 0;
  let last = held;
  let reachedPresent = false;
  const span = o.to - o.from;
  // The gate every price source passes (catalog/gate.ts): what each answer says it holds, then
  // its rows' spacing, prices and clock, before a page is written.
  const label = `OANDA v20 /instruments/${o.instrument}/candles`;
  const ask: GateAsk | undefined = o.instruments?.has(o.instrument)
    ? {
        instrument: o.instrument,
        granularity: o.granularity,
        instruments: o.instruments,
        read: 'UTC',
        fix: 'import',
        decideAtBatch: 100,
      }
    : undefined;
  // The pages as they come; each is written (below) before the next is asked for.
  const fetched = async function* (): AsyncIterable<Candle[]> {
    while (cursor < o.to) {
      if (o.signal?.aborted) {
        throw new DownloadError(
          'DOWNLOAD_INTERRUPTED',
          `download of ${o.instrument} ${o.granularity} interrupted after ${pages} pages (${written} candles written); run the same command again to resume after ${last === undefined ? 'the start' : new Date(last).toISOString()}`,
        );
      }
      const res = await o.rest.candles(o.instrument, {
        price,
        granularity: o.granularity,
        from: cursor,
        count: pageSize,
      });
      if (ask) gateStated(label, { instrument: res.instrument, granularity: res.granularity }, ask);
      const page: Candle[] = [];
      let end = false;
      let lastSeen: UnixMs | undefined;
      for (const c of res.candles) {
        const candle = toCandle(c, o.instrument, o.granularity, price);
        // Defensive: a server that answers with a candle before the cursor would cause a duplicate.
        if (candle.time < cursor) continue;
        if (candle.time >= o.to) {
          end = true;
          break;
        }
        if (!candle.complete) {
          reachedPresent = true;
          end = true;
          break;
        }
        page.push(candle);
        lastSeen = candle.time;
      }
      yield page;
      pages++;
      if (end || lastSeen === undefined || res.candles.length < pageSize) {
        // Fewer candles than asked: the server has nothing later yet (the present or the end of its data).
        if (!end && lastSeen !== undefined) cursor = candleClose(o.granularity, lastSeen);
        o.onPage?.({ pages, written, cursor, fraction: 1 });
        return;
      }
      cursor = candleClose(o.granularity, lastSeen);
      o.onPage?.({ pages, written, cursor, fraction: Math.min(1, (cursor - o.from) / span) });
    }
  };
  for await (const page of ask ? gateRows(fetched(), label, ask) : fetched()) {
    if (page.length === 0) continue;
    written += (await o.catalog.write(o.instrument, o.granularity, [page], { replace: true })).written;
    last = page[page.length - 1]!.time;
  }
  if (written > 0) {
    await o.catalog.record(o.instrument, o.granularity, {
      synthetic: false,
      sides: price === 'BA' ? 'bid/ask' : 'mid',
      sources: [
        {
          file: `OANDA v20 /instruments/${o.instrument}/candles price=${price}`,
          sha256: '',
          bytes: 0,
          format: 'oanda-v20',
          rows: written,
          importedAt: new Date().toISOString(),
        },
      ],
    });
  }
  return {
    pages,
    written,
    start,
    resumed: held !== undefined,
    reachedPresent,
    ...(last !== undefined ? { last } : {}),
  };
}
