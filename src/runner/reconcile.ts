import type { OrderIntent } from '../domain/intents.ts';
import { parseTime } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { divergences, outcomesOf, type Divergence, type Outcome } from './shadow.ts';

// The reconciliation of a live run with its replay through the simulator (`fxflow replay`): the
// decisions compared in order, the fills compared intent by intent (the shadow book's comparison,
// shadow.ts), each difference with a cause, and the money totals. Pure functions over what the
// replay collected; src/app/replay.ts composes them.

/** A decision: an intent, the input record it followed, and the engine time. */
export interface Decision {
  readonly intent: OrderIntent;
  /** Sequence number of the input record (tick, candle, labs event, transaction) it followed. */
  readonly after: number;
  readonly at: number;
}

/** An input record, as the reconciliation names it: its kind, time and place. */
export interface EventRef {
  readonly seq: number;
  readonly kind: string;
  readonly time: string;
  readonly where: string;
}

export interface DecisionDiff {
  /** Position of the decision (0-based) in each list. */
  readonly index: number;
  readonly live?: { readonly id: string; readonly intent: string; readonly after?: EventRef };
  readonly replay?: { readonly id: string; readonly intent: string; readonly after?: EventRef };
  /** 'content' (a different order), 'event' (the same order after another event), 'live-only', 'replay-only'. */
  readonly what: 'content' | 'event' | 'live-only' | 'replay-only';
}

/** Causes a difference is attributed to. */
export type Cause = 'next-price' | 'latency' | 'slippage' | 'spread' | 'fill-price' | 'rejection-live-only' | 'rejection-replay-only' | 'missed-or-late-event' | 'restart' | 'earlier-difference';

export interface FillDiff {
  readonly liveID: string;
  readonly replayID: string;
  readonly live: Outcome;
  readonly replay: Outcome;
  readonly differs: readonly string[];
  readonly priceDiff?: number;
  readonly timeDiffMs?: number;
  readonly cause: Cause;
  /** One sentence: what the two did and why they part. */
  readonly explanation: string;
}

export interface MoneyTotals {
  readonly realizedPL: string;
  readonly financing: string;
  readonly commission: string;
  readonly balance: string;
  readonly fills: number;
}

/** A recorded quote (bid, ask) at a time. */
export interface Quote {
  readonly t: number;
  readonly b: number;
  readonly a: number;
}

/** The recorded prices of one instrument in time order, with the two lookups attribution needs. */
export class QuoteTrack {
  readonly #t: number[] = [];
  readonly #b: number[] = [];
  readonly #a: number[] = [];
  add(t: number, b: number, a: number): void {
    this.#t.push(t);
    this.#b.push(b);
    this.#a.push(a);
  }
  #at(i: number): Quote | undefined {
    return i >= 0 && i < this.#t.length ? { t: this.#t[i]!, b: this.#b[i]!, a: this.#a[i]! } : undefined;
  }
  /** The last quote at or before `t`. */
  atOrBefore(t: number): Quote | undefined {
    let lo = 0, hi = this.#t.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#t[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return this.#at(lo - 1);
  }
  /** The first quote after `t`. */
  after(t: number): Quote | undefined {
    let lo = 0, hi = this.#t.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#t[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return this.#at(lo);
  }
}

/** An intent without its client ID: what the strategy decided. */
export function describeIntent(i: OrderIntent): string {
  const { id: _id, ...rest } = i as OrderIntent & { request?: { clientExtensions?: unknown } };
  if ('request' in rest && rest.request !== undefined) {
    const { clientExtensions: _c, ...req } = rest.request as Record<string, unknown>;
    return JSON.stringify({ ...rest, request: req });
  }
  return JSON.stringify(rest);
}

/**
 * Compares the decisions in order. The first pair that differs is where the two part; the
 * remaining pairs are compared as they are (a parting usually shifts everything after it).
 */
export function compareDecisions(live: readonly Decision[], replay: readonly Decision[], ref: (seq: number) => EventRef | undefined): { diffs: DecisionDiff[]; first?: DecisionDiff } {
  const diffs: DecisionDiff[] = [];
  const n = Math.max(live.length, replay.length);
  const side = (d: Decision | undefined) => {
    if (d === undefined) return undefined;
    const after = ref(d.after);
    return { id: d.intent.id, intent: describeIntent(d.intent), ...(after !== undefined ? { after } : {}) };
  };
  for (let k = 0; k < n; k++) {
    const l = live[k];
    const r = replay[k];
    let what: DecisionDiff['what'] | undefined;
    if (l === undefined) what = 'replay-only';
    else if (r === undefined) what = 'live-only';
    else if (describeIntent(l.intent) !== describeIntent(r.intent)) what = 'content';
    else if (l.after !== r.after) what = 'event';
    if (what === undefined) continue;
    const ls = side(l);
    const rs = side(r);
    diffs.push({ index: k, what, ...(ls !== undefined ? { live: ls } : {}), ...(rs !== undefined ? { replay: rs } : {}) });
  }
  return { diffs, ...(diffs[0] !== undefined ? { first: diffs[0] } : {}) };
}

/** What the attribution needs to know about the run. */
export interface AttributionContext {
  /** Recorded quotes per instrument. */
  readonly quotes: ReadonlyMap<string, QuoteTrack>;
  /** Engine time of each decision by live client ID. */
  readonly decidedAt: ReadonlyMap<string, number>;
  /** The replay filled market orders at the price current when they were decided ('current') or at the next price ('next'). */
  readonly fill: 'current' | 'next';
  /** Fill times further apart than this are a time difference (and a live fill later than this after its decision is late). */
  readonly toleranceMs: number;
  /** Times (ms) when a live session ended or a new one started: an outcome across one is a restart's. */
  readonly restarts: readonly number[];
  /** The live transactions by client ID of their order: fullPrice, instrument, units for the attribution. */
  readonly liveFills: ReadonlyMap<string, Transaction>;
}

const pips = (x: number, instrument: string): string => {
  const jpy = instrument.endsWith('_JPY') || instrument.startsWith('XAU') ? 100 : 10_000;
  return (x * jpy).toFixed(1);
};

/** Attributes one fill difference to a cause, with a sentence a trader can read. */
export function attribute(d: Divergence, replayID: string, ctx: AttributionContext): FillDiff {
  const base = { liveID: d.clientID, replayID, live: d.live, replay: d.sim, differs: d.differs, ...(d.priceDiff !== undefined ? { priceDiff: d.priceDiff } : {}), ...(d.timeDiffMs !== undefined ? { timeDiffMs: d.timeDiffMs } : {}) };
  const mk = (cause: Cause, explanation: string): FillDiff => ({ ...base, cause, explanation });
  const l = d.live;
  const r = d.sim;
  const decided = ctx.decidedAt.get(d.clientID);
  const crossesRestart = (t: number | undefined): boolean => decided !== undefined && ctx.restarts.some((x) => x >= decided && (t === undefined || x <= t));
  if (l.outcome !== r.outcome) {
    if ((l.outcome === 'REJECTED' || l.outcome === 'CANCELLED') && r.outcome === 'FILLED') return mk('rejection-live-only', `the account ${l.outcome === 'REJECTED' ? 'rejected' : 'cancelled'} it (${l.reason ?? '?'}); the simulator filled it at ${r.price}`);
    if ((r.outcome === 'REJECTED' || r.outcome === 'CANCELLED') && l.outcome === 'FILLED') return mk('rejection-replay-only', `the simulator ${r.outcome === 'REJECTED' ? 'rejected' : 'cancelled'} it (${r.reason ?? '?'}); the account filled it at ${l.price}`);
    if (l.outcome === 'PENDING') {
      if (crossesRestart(undefined)) return mk('restart', `its outcome at the account is not in the recording: the session stopped (or restarted) after the decision; the simulator: ${r.outcome}${r.price ? ` at ${r.price}` : ''}`);
      return mk('missed-or-late-event', `its outcome at the account never arrived in the recording (a missed or late transaction); the simulator: ${r.outcome}${r.price ? ` at ${r.price}` : ''}`);
    }
    if (r.outcome === 'PENDING') return mk('missed-or-late-event', `the simulator has no outcome for it (no recorded price after the decision reached it); the account: ${l.outcome}${l.price ? ` at ${l.price}` : ''}`);
    return mk('fill-price', `the account: ${l.outcome} (${l.reason ?? ''}); the simulator: ${r.outcome} (${r.reason ?? ''})`);
  }
  const fill = ctx.liveFills.get(d.clientID) as (Transaction & { instrument?: string; units?: string; fullPrice?: { bids?: { price: string }[]; asks?: { price: string }[] } }) | undefined;
  if (l.outcome === 'FILLED' && r.outcome === 'FILLED' && fill !== undefined && (d.differs.includes('price') || d.differs.includes('time'))) {
    const instrument = fill.instrument ?? '';
    const buy = Number(fill.units) > 0;
    const lp = Number(l.price);
    const rp = Number(r.price);
    const lt = parseTime(l.time ?? '');
    const track = ctx.quotes.get(instrument);
    const side = (q: Quote | undefined): number | undefined => (q === undefined ? undefined : buy ? q.a : q.b);
    if (crossesRestart(lt)) return mk('restart', `decided before a restart and filled at ${l.price} at ${l.time} after it; the simulator, running on, filled at ${r.price} at ${r.time}`);
    if (decided !== undefined && lt - decided > ctx.toleranceMs) {
      const q = side(track?.atOrBefore(lt));
      return mk('latency', `the account filled it ${lt - decided} ms after the decision (a late fill), at ${l.price}${q !== undefined && Math.abs(q - lp) < 1e-9 ? `, the recorded price at ${l.time}` : ''}; the simulator at ${r.price} when it was decided`);
    }
    const now = decided !== undefined ? side(track?.atOrBefore(decided)) : undefined;
    const next = decided !== undefined ? side(track?.after(decided)) : undefined;
    if (ctx.fill === 'next' && now !== undefined && next !== undefined && Math.abs(lp - now) < 1e-9 && Math.abs(rp - next) < 1e-9) {
      return mk('next-price', `OANDA filled it at ${l.price}, the price current when the order arrived; the simulator, like a backtest, at the next price ${r.price}`);
    }
    const q = decided !== undefined ? track?.atOrBefore(decided) : undefined;
    // The account's own quote at the fill (fullPrice): a spread other than the recorded one, and a fill at that quote, is the spread's doing.
    const bid = Number(fill.fullPrice?.bids?.[0]?.price);
    const ask = Number(fill.fullPrice?.asks?.[0]?.price);
    if (q !== undefined && bid > 0 && ask > 0 && Math.abs((buy ? ask : bid) - lp) < 1e-9 && Math.abs(ask - bid - (q.a - q.b)) > 1e-9) {
      return mk('spread', `the account's quote at the fill had a spread of ${pips(ask - bid, instrument)} pips (${fill.fullPrice?.bids?.[0]?.price}/${fill.fullPrice?.asks?.[0]?.price}), the recorded price ${pips(q.a - q.b, instrument)} pips (${q.b}/${q.a}): filled at ${l.price} vs ${r.price}`);
    }
    if (now !== undefined && (buy ? lp > now + 1e-9 : lp < now - 1e-9)) {
      return mk('slippage', `the account filled it ${pips(Math.abs(lp - now), instrument)} pips worse than the quote when it arrived (${buy ? 'ask' : 'bid'} ${now}): slippage; the simulator at ${r.price}`);
    }
    return mk('fill-price', `the account filled it at ${l.price} at ${l.time}, a price ${now !== undefined ? `other than the recorded ${buy ? 'ask' : 'bid'} ${now}` : 'with no recorded quote before it'}; the simulator at ${r.price} at ${r.time}`);
  }
  return mk('earlier-difference', `both ${l.outcome}, but the trades they opened, reduced or closed differ (live [${l.trades ?? ''}], simulator [${r.trades ?? ''}]): an earlier difference carried over`);
}

/**
 * Fills compared intent by intent: the k-th live decision is paired with the k-th replayed one
 * (their client IDs differ when the replay's IDs do), then the shadow book's comparison.
 */
export function compareFills(live: readonly Transaction[], replay: readonly Transaction[], pairs: readonly (readonly [string, string])[], ctx: AttributionContext): { compared: number; diffs: FillDiff[] } {
  const lo = outcomesOf(live);
  const ro = outcomesOf(replay);
  const l = new Map<string, Outcome>();
  const r = new Map<string, Outcome>();
  const replayOf = new Map<string, string>();
  for (const [li, ri] of pairs) {
    const a = lo.get(li);
    const b = ro.get(ri);
    // Intents with no order on either side (closes, cancels: no client ID) are compared through the money.
    if (a === undefined && b === undefined) continue;
    if (a !== undefined) l.set(li, a);
    if (b !== undefined) r.set(li, b);
    replayOf.set(li, ri);
  }
  const diffs: FillDiff[] = [];
  const all = divergences(l, r, ctx.toleranceMs);
  for (const d of all) if (d.differs.length > 0) diffs.push(attribute(d, replayOf.get(d.clientID) ?? d.clientID, ctx));
  return { compared: all.length, diffs };
}

/** Realized P/L, financing, commission, the last balance and the number of fills of a transaction list (4 decimals, as v20). */
export function moneyOf(txs: readonly Transaction[], openingBalance: string): MoneyTotals {
  let pl = 0, fin = 0, com = 0, fills = 0;
  let balance = openingBalance;
  for (const t of txs) {
    const x = t as { type: string; pl?: string; financing?: string; commission?: string; accountBalance?: string };
    if (x.type === 'ORDER_FILL') {
      fills++;
      pl += Number(x.pl ?? 0);
      com += Number(x.commission ?? 0);
    }
    if (x.financing !== undefined) fin += Number(x.financing);
    if (x.accountBalance !== undefined) balance = x.accountBalance;
  }
  return { realizedPL: pl.toFixed(4), financing: fin.toFixed(4), commission: com.toFixed(4), balance, fills };
}
