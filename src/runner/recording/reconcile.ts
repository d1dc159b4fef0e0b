import type { OrderIntent } from '../../domain/intents.ts';
import { parseTime } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
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
export type Cause =
  | 'next-price'
  | 'latency'
  | 'slippage'
  | 'spread'
  | 'fill-price'
  | 'rejection-live-only'
  | 'rejection-replay-only'
  | 'missed-or-late-event'
  | 'restart'
  | 'earlier-difference';

export interface FillDiff {
  readonly liveID: string;
  readonly replayID: string;
  readonly live: Outcome;
  readonly replay: Outcome;
  readonly differs: readonly string[];
  readonly priceDiff?: number;
  readonly timeDiffMs?: number;
  /** The main cause (the largest part of a price difference), as `byCause` counts it. */
  readonly cause: Cause;
  /** Every cause named, the main one first (a fill may be both late and slipped). */
  readonly causes: readonly Cause[];
  /**
   * A price difference of two fills taken apart, in price units, signed so that positive is worse
   * for the account on the live side: `latency` (the market moved between the decision and the
   * live fill), `spread` (the account's own quote at the fill against the recorded one), `slippage`
   * (the live fill against the account's quote), `nextPrice` (the replay filled at a price other
   * than the one current at the decision, as a backtest does). live − replay = latency + spread +
   * slippage − nextPrice, for a buy; the negative of it for a sell.
   */
  readonly parts?: {
    readonly latency: number;
    readonly spread: number;
    readonly slippage: number;
    readonly nextPrice: number;
  };
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
    let lo = 0,
      hi = this.#t.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#t[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return this.#at(lo - 1);
  }
  /** The first quote after `t`. */
  after(t: number): Quote | undefined {
    let lo = 0,
      hi = this.#t.length;
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
export function compareDecisions(
  live: readonly Decision[],
  replay: readonly Decision[],
  ref: (seq: number) => EventRef | undefined,
): { diffs: DecisionDiff[]; first?: DecisionDiff } {
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
    diffs.push({
      index: k,
      what,
      ...(ls !== undefined ? { live: ls } : {}),
      ...(rs !== undefined ? { replay: rs } : {}),
    });
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
  /**
   * Fill times further apart than this are a time difference (and a live fill later than this after
   * its decision is late), unless the live fill reached the runner within this much wall time of its
   * decision (`wallDelayMs`): then the market time between them is the account's clock running on
   * during the round trip (a sandbox at speed 60 makes 30 ms of wall time 1.8 s), not a late fill.
   */
  readonly toleranceMs: number;
  /** Wall-clock ms from each live decision's record to its fill's record (by live client ID), as the runner received them. */
  readonly wallDelayMs?: ReadonlyMap<string, number>;
  /** Times (ms) when a live session ended or a new one started: an outcome across one is a restart's. */
  readonly restarts: readonly number[];
  /** The live transactions by client ID of their order: fullPrice, instrument, units for the attribution. */
  readonly liveFills: ReadonlyMap<string, Transaction>;
  /** The recorded quote in force (in arrival order) when each decision was made, by live client ID. */
  readonly quoteAtDecision?: ReadonlyMap<string, { readonly b: number; readonly a: number }>;
  /** The recorded quote in force (in arrival order) when each live fill arrived, by the fill's transaction ID. */
  readonly quoteAtFill?: ReadonlyMap<string, { readonly b: number; readonly a: number }>;
  /** The order path's recorded attempts by live client ID, in order (`attempt` records). */
  readonly attempts?: ReadonlyMap<string, readonly Attempt[]>;
}

/** One step of an intent's order path as recorded: a send (`n` 0 the first), its outcome, a look-up's answer. */
export interface Attempt {
  readonly n: number;
  readonly what: string;
  /** Wall-clock ms. */
  readonly rt: number;
}

const ORDINAL = ['first', 'second', 'third', 'fourth', 'fifth'];
const ordinal = (n: number): string => ORDINAL[n] ?? `${n + 1}th`;

/**
 * The order path of one intent in words, from its recorded attempts: "503 on the first send, looked
 * up (not found), resent after 1.2 s, answered on the second send".
 */
export function describeAttempts(list: readonly Attempt[]): string {
  const words: string[] = [];
  let lastSent: number | undefined;
  for (const a of list) {
    if (a.what === 'sent') {
      if (a.n > 0)
        words.push(`resent after ${lastSent !== undefined ? ((a.rt - lastSent) / 1000).toFixed(1) : '?'} s`);
      lastSent = a.rt;
    } else if (a.what === 'answered') {
      words.push(
        a.n > 0
          ? `answered on the ${ordinal(a.n)} send`
          : `answered ${lastSent !== undefined ? a.rt - lastSent : '?'} ms after the send`,
      );
    } else if (a.what === 'found' || a.what === 'not found') {
      words.push(`looked up (${a.what})`);
    } else if (a.what === 'timeout') {
      words.push(`the ${ordinal(a.n)} send timed out`);
    } else if (a.what === 'network error') {
      words.push(`the ${ordinal(a.n)} send got no answer (network error)`);
    } else {
      words.push(`${a.what} on the ${ordinal(a.n)} send`);
    }
  }
  return words.join(', ');
}

const pipFactor = (instrument: string): number =>
  instrument.endsWith('_JPY') || instrument.startsWith('XAU') ? 100 : 10_000;
/** Pips with a sign: +1.0 is worse for the account. */
const pipsSigned = (x: number, instrument: string): string =>
  `${x > 0 ? '+' : ''}${(x * pipFactor(instrument)).toFixed(1)}`;

/** Attributes one fill difference to a cause, with a sentence a trader can read. */
export function attribute(d: Divergence, replayID: string, ctx: AttributionContext): FillDiff {
  const base = {
    liveID: d.clientID,
    replayID,
    live: d.live,
    replay: d.sim,
    differs: d.differs,
    ...(d.priceDiff !== undefined ? { priceDiff: d.priceDiff } : {}),
    ...(d.timeDiffMs !== undefined ? { timeDiffMs: d.timeDiffMs } : {}),
  };
  const mk = (cause: Cause, explanation: string): FillDiff => ({
    ...base,
    cause,
    causes: [cause],
    explanation,
  });
  const l = d.live;
  const r = d.sim;
  const decided = ctx.decidedAt.get(d.clientID);
  const crossesRestart = (t: number | undefined): boolean =>
    decided !== undefined && ctx.restarts.some((x) => x >= decided && (t === undefined || x <= t));
  if (l.outcome !== r.outcome) {
    if ((l.outcome === 'REJECTED' || l.outcome === 'CANCELLED') && r.outcome === 'FILLED')
      return mk(
        'rejection-live-only',
        `the account ${l.outcome === 'REJECTED' ? 'rejected' : 'cancelled'} it (${l.reason ?? '?'}); the simulator filled it at ${r.price}`,
      );
    if ((r.outcome === 'REJECTED' || r.outcome === 'CANCELLED') && l.outcome === 'FILLED')
      return mk(
        'rejection-replay-only',
        `the simulator ${r.outcome === 'REJECTED' ? 'rejected' : 'cancelled'} it (${r.reason ?? '?'}); the account filled it at ${l.price}`,
      );
    if (l.outcome === 'PENDING') {
      if (crossesRestart(undefined))
        return mk(
          'restart',
          `its outcome at the account is not in the recording: the session stopped (or restarted) after the decision; the simulator: ${r.outcome}${r.price ? ` at ${r.price}` : ''}`,
        );
      return mk(
        'missed-or-late-event',
        `its outcome at the account never arrived in the recording (a missed or late transaction); the simulator: ${r.outcome}${r.price ? ` at ${r.price}` : ''}`,
      );
    }
    if (r.outcome === 'PENDING')
      return mk(
        'missed-or-late-event',
        `the simulator has no outcome for it (no recorded price after the decision reached it); the account: ${l.outcome}${l.price ? ` at ${l.price}` : ''}`,
      );
    return mk(
      'fill-price',
      `the account: ${l.outcome} (${l.reason ?? ''}); the simulator: ${r.outcome} (${r.reason ?? ''})`,
    );
  }
  const fill = ctx.liveFills.get(d.clientID) as
    | (Transaction & {
        id: string;
        instrument?: string;
        units?: string;
        fullPrice?: { bids?: { price: string }[]; asks?: { price: string }[] };
      })
    | undefined;
  if (
    l.outcome === 'FILLED' &&
    r.outcome === 'FILLED' &&
    fill !== undefined &&
    (d.differs.includes('price') || d.differs.includes('time'))
  ) {
    const instrument = fill.instrument ?? '';
    const buy = Number(fill.units) > 0;
    const lp = Number(l.price);
    const rp = Number(r.price);
    const lt = parseTime(l.time ?? '');
    if (crossesRestart(lt))
      return mk(
        'restart',
        `decided before a restart and filled at ${l.price} at ${l.time} after it; the simulator, running on, filled at ${r.price} at ${r.time}`,
      );
    const track = ctx.quotes.get(instrument);
    const sideOf = (q: { b: number; a: number } | undefined): number | undefined =>
      q === undefined ? undefined : buy ? q.a : q.b;
    // The quotes in force at the decision and when the fill arrived: in arrival order when known
    // (two records may share a time), else by time.
    const dq =
      ctx.quoteAtDecision?.get(d.clientID) ??
      (decided !== undefined ? track?.atOrBefore(decided) : undefined);
    const fq = ctx.quoteAtFill?.get(fill.id) ?? track?.atOrBefore(lt);
    // The account's own quote at the fill (fullPrice), when it says: where the market was as it filled.
    const ob = Number(fill.fullPrice?.bids?.[0]?.price);
    const oa = Number(fill.fullPrice?.asks?.[0]?.price);
    const own = ob > 0 && oa > 0 ? { b: ob, a: oa } : undefined;
    const atDecision = sideOf(dq);
    if (dq !== undefined && atDecision !== undefined) {
      // Worse for the account is positive: a higher price for a buy, a lower one for a sell.
      const sign = buy ? 1 : -1;
      const clean = (x: number): number => (Math.abs(x) < 1e-9 ? 0 : Number(x.toFixed(10)));
      const mid = (q: { b: number; a: number }): number => (q.a + q.b) / 2;
      const half = (q: { b: number; a: number }): number => (q.a - q.b) / 2;
      const market = own ?? fq ?? dq;
      const quote = sideOf(market)!;
      // A fill on time at the account's own quote: a quote other than the recorded one at the same
      // moment is the account's spread. A late one: the market's move (its mid) is the latency's,
      // the change of the half-spread the spread's.
      const onTime = own !== undefined && (decided === undefined || lt - decided <= ctx.toleranceMs);
      const parts = {
        latency: onTime ? 0 : clean(sign * (mid(market) - mid(dq))),
        spread: onTime ? clean(sign * (quote - atDecision)) : clean(half(market) - half(dq)),
        slippage: clean(sign * (lp - quote)),
        nextPrice: clean(sign * (rp - atDecision)),
      };
      const delay = decided !== undefined && lt - decided > ctx.toleranceMs ? lt - decided : undefined;
      // Late (with nothing else to show for it) only when the fill also took longer than the tolerance on the runner's clock.
      const wall = ctx.wallDelayMs?.get(d.clientID);
      const late =
        delay !== undefined && !(wall !== undefined && wall <= ctx.toleranceMs) ? delay : undefined;
      const where =
        own !== undefined ? "the account's quote at the fill" : 'the recorded quote when the fill arrived';
      const named: [Cause, number, string][] = [];
      if (
        parts.latency !== 0 ||
        (late !== undefined && parts.slippage === 0 && parts.spread === 0 && parts.nextPrice === 0)
      ) {
        named.push([
          'latency',
          parts.latency,
          `latency ${pipsSigned(parts.latency, instrument)} pips (the market moved from ${dq.b}/${dq.a} at the decision to ${market.b}/${market.a}, ${where}${wall !== undefined && delay !== undefined ? `, answered ${wall} ms after the decision on the runner's clock` : ''}${delay !== undefined ? `, ${delay} ms later` : ''})`,
        ]);
      }
      if (parts.spread !== 0)
        named.push([
          'spread',
          parts.spread,
          `spread ${pipsSigned(parts.spread, instrument)} pips (${where} ${market.b}/${market.a} is ${((market.a - market.b) * pipFactor(instrument)).toFixed(1)} pips wide, the recorded one at the decision ${((dq.a - dq.b) * pipFactor(instrument)).toFixed(1)})`,
        ]);
      if (parts.slippage !== 0)
        named.push([
          'slippage',
          parts.slippage,
          `slippage ${pipsSigned(parts.slippage, instrument)} pips (filled at ${l.price} against the ${buy ? 'ask' : 'bid'} ${quote}, ${where})`,
        ]);
      if (parts.nextPrice !== 0)
        named.push([
          ctx.fill === 'next' ? 'next-price' : 'fill-price',
          parts.nextPrice,
          `the simulator filled at ${r.price}, ${pipsSigned(parts.nextPrice, instrument)} pips from the ${buy ? 'ask' : 'bid'} at the decision${ctx.fill === 'next' ? ' (the next price, as a backtest does)' : ''}`,
        ]);
      if (named.length > 0) {
        const causes = [...named].sort((x, y) => Math.abs(y[1]) - Math.abs(x[1])).map((x) => x[0]);
        return {
          ...base,
          cause: causes[0]!,
          causes,
          parts,
          explanation: `the account filled it at ${l.price} at ${l.time}, the simulator at ${r.price}: ${named.map((x) => x[2]).join('; ')}`,
        };
      }
    }
    return mk(
      'fill-price',
      `the account filled it at ${l.price} at ${l.time}, a price ${atDecision !== undefined ? `other than the recorded ${buy ? 'ask' : 'bid'} ${atDecision}` : 'with no recorded quote before it'}; the simulator at ${r.price} at ${r.time}`,
    );
  }
  const what = d.differs.filter((x) => x !== 'outcome').join(' and ') || 'the outcome';
  const detail = d.differs.includes('trades')
    ? ` (the trades they opened, reduced or closed: live [${l.trades ?? ''}], simulator [${r.trades ?? ''}])`
    : '';
  return mk(
    'earlier-difference',
    `both ${l.outcome}, but their ${what} differ${detail}: an earlier difference carried over`,
  );
}

/**
 * Pairs each live decision with the replay's same decision: the same order (its content, the
 * client ID aside) after the same input record, preferring the same client ID. Never by position:
 * after a decision the two did not share, the k-th live order is another decision than the k-th
 * replayed one. A decision without its like on the other side is left unpaired (it is a decision
 * difference, reported as such), so no fill is ever compared with another decision's.
 */
export function pairDecisions(live: readonly Decision[], replay: readonly Decision[]): [string, string][] {
  const used = new Set<number>();
  const byKey = new Map<string, number[]>();
  replay.forEach((d, k) => {
    const key = `${d.after}|${describeIntent(d.intent)}`;
    let list = byKey.get(key);
    if (list === undefined) byKey.set(key, (list = []));
    list.push(k);
  });
  const pairs: [string, string][] = [];
  for (const d of live) {
    const content = describeIntent(d.intent);
    const same = (byKey.get(`${d.after}|${content}`) ?? []).filter((k) => !used.has(k));
    const k = same.find((x) => replay[x]!.intent.id === d.intent.id) ?? same[0];
    if (k === undefined) continue;
    used.add(k);
    pairs.push([d.intent.id, replay[k]!.intent.id]);
  }
  return pairs;
}

/**
 * Whether a time difference of a fill is the account's clock running on during the round trip:
 * the live fill reached the runner within the tolerance in wall time, and the replay's fill is no
 * further from it than the market time the live one took after its decision (plus the tolerance).
 */
function roundTrip(d: Divergence, ctx: AttributionContext): boolean {
  const wall = ctx.wallDelayMs?.get(d.clientID);
  const decided = ctx.decidedAt.get(d.clientID);
  if (
    wall === undefined ||
    wall > ctx.toleranceMs ||
    decided === undefined ||
    d.live.time === undefined ||
    d.timeDiffMs === undefined
  )
    return false;
  return Math.abs(d.timeDiffMs) <= Math.max(0, parseTime(d.live.time) - decided) + ctx.toleranceMs;
}

/** Fills compared intent by intent over the paired decisions (pairDecisions), then the shadow book's comparison. */
export function compareFills(
  live: readonly Transaction[],
  replay: readonly Transaction[],
  pairs: readonly (readonly [string, string])[],
  ctx: AttributionContext,
): { compared: number; diffs: FillDiff[] } {
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
  const all = divergences(l, r, ctx.toleranceMs).map((d) =>
    d.differs.includes('time') && roundTrip(d, ctx)
      ? { ...d, differs: d.differs.filter((x) => x !== 'time') }
      : d,
  );
  for (const d of all) {
    if (d.differs.length === 0) continue;
    const f = attribute(d, replayOf.get(d.clientID) ?? d.clientID, ctx);
    // A late fill, or one sent more than once: the order path's attempts name what delayed it.
    const path = ctx.attempts?.get(d.clientID);
    const resent = path !== undefined && path.some((a) => a.what === 'sent' && a.n > 0);
    diffs.push(
      path !== undefined && (resent || f.causes.includes('latency'))
        ? { ...f, explanation: `${f.explanation}; the order path: ${describeAttempts(path)}` }
        : f,
    );
  }
  return { compared: all.length, diffs };
}

/** Realized P/L, financing, commission, the last balance and the number of fills of a transaction list (4 decimals, as v20). */
export function moneyOf(txs: readonly Transaction[], openingBalance: string): MoneyTotals {
  let pl = 0,
    fin = 0,
    com = 0,
    fills = 0;
  let balance = openingBalance;
  for (const t of txs) {
    const x = t as {
      type: string;
      pl?: string;
      financing?: string;
      commission?: string;
      accountBalance?: string;
    };
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
