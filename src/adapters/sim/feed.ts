import type { Candle } from '../../domain/candle.ts';
import type { Tick } from '../../domain/tick.ts';
import type { UnixMs } from '../../domain/time.ts';
import { ambiguous, match, type Book } from './book.ts';
import { advance } from './clock.ts';
import { checkMargin } from './closeout.ts';
import { highFirst, pathPoint, untouched } from './pricing.ts';
import type { SimState } from './state.ts';

/**
 * What a price does to the simulator: which series drives each instrument's matching, the quick
 * path (a candle no order can touch and whose worst prices leave the margin safe only moves the
 * quote), the walk of a candle's path points (pricing.ts `highFirst`, `pathPoint`) or a tick, each
 * point matched against the book (book.ts `match`) and followed by the margin check (closeout.ts).
 */

/** The book of an instrument the simulator can trade; undefined (after moving the clock) for others. */
function bookOf(s: SimState, instrument: string, at: UnixMs): Book | undefined {
  const last = s.lastBook;
  if (last !== undefined && last.instrument.name === instrument) return last;
  const book = s.books.get(instrument);
  if (book !== undefined) return (s.lastBook = book);
  if (s.instruments.has(instrument)) return s.book(instrument);
  advance(s, at);
  return undefined;
}

/** A candle: matched on its path points when it is its instrument's driving series and complete; else it only moves the clock. */
export function candle(s: SimState, c: Candle): void {
  const book = bookOf(s, c.instrument, c.at);
  if (book === undefined) return;
  if (book.driver === undefined) book.driver = c.granularity;
  if (book.driver !== c.granularity || !c.complete) {
    advance(s, c.at);
    return;
  }
  advance(s, c.time);
  if (book.lastTick >= c.time && s.opts.path === 'exact') {
    // Exact replay: the ticks inside this candle already did the matching, price by price.
    advance(s, c.at);
    return;
  }
  const watchMargin = s.ledger.trades.size > 0 && (s.marginCall || s.account.mayCall(c, book.instrument));
  if (
    book.market.length === 0 &&
    !watchMargin &&
    (book.orders.length === 0 || (s.opts.quickPath !== false && quickUntouched(s, book, c)))
  ) {
    // Nothing can fill and the margin is safe at this candle's worst prices: only the quote moves
    // (and trailing stops follow, in quickUntouched).
    s.setQuote(c.instrument, c.bc, c.ac);
    // Expiries inside the candle are stamped at their own times (advance moves the clock to c.at).
    advance(s, c.at);
    return;
  }
  const high = highFirst(c, s.opts.path, s.opts.path === 'worst' ? net(s, c.instrument) : 0);
  s.inAmbiguous = ambiguous(book, c, s.ledger.trades.values(), s.ledger.pendingOrders);
  if (s.inAmbiguous) s.stats.ambiguousCandles++;
  const pt = s.point;
  for (let p = 0; p < 4; p++) {
    pathPoint(c, p, high, pt);
    const { bid, ask, t } = pt;
    // The expiries and rollovers inside the candle happen before the points after them (the
    // close point stands for the last price before c.at: what is due at c.at comes after it).
    if (p === 1 || p === 2) advance(s, t);
    s.now = t;
    s.setQuote(c.instrument, bid, ask);
    matchPoint(s, book, bid, ask, t, p === 0);
    if (watchMargin) checkMargin(s, book.instrument.name);
  }
  s.inAmbiguous = false;
  advance(s, c.at);
}

/** A tick: the quote, and matching when ticks drive its instrument (or the exact path model), with its liquidity. */
export function tick(s: SimState, k: Tick): void {
  const book = bookOf(s, k.instrument, k.at);
  if (book === undefined) return;
  if (book.driver === undefined) book.driver = 'TICK';
  advance(s, k.at);
  s.now = k.at;
  s.setQuote(k.instrument, k.bid, k.ask);
  book.lastTick = k.at;
  if (book.driver !== 'TICK' && s.opts.path !== 'exact') return;
  s.liquidity.bid = k.bidLiquidity ?? Infinity;
  s.liquidity.ask = k.askLiquidity ?? Infinity;
  if (book.market.length > 0 || book.orders.length > 0) matchPoint(s, book, k.bid, k.ask, k.at, true);
  s.liquidity.bid = Infinity;
  s.liquidity.ask = Infinity;
  if (s.ledger.trades.size > 0) checkMargin(s, k.instrument);
}

/** Whether no resting order of `book` can trigger in candle `c` (pricing.ts `untouched`). */
function quickUntouched(s: SimState, book: Book, c: Candle): boolean {
  if (s.trailTo.length < book.orders.length) s.trailTo = new Float64Array(book.orders.length * 2);
  return untouched(book.orders, c, s.trailTo);
}

/** The net units of `instrument`'s position (the worst path model's side). */
function net(s: SimState, instrument: string): number {
  const { long, short } = s.ledger.position(instrument);
  return long + short;
}

/** One price point matched against `book` (book.ts `match`): fills and FOK/IOC expiries come back through `s.sink`. */
function matchPoint(s: SimState, book: Book, bid: number, ask: number, t: UnixMs, gap: boolean): void {
  match(book, bid, ask, t, gap, s.snapshot, s.sink);
}
