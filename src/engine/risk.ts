import { DateTime } from 'luxon';
// Observable alone, from its own module (as the simulator does): 'rxjs' itself loads all of rxjs,
// which a backtest does not otherwise need.
import { Observable } from 'rxjs/internal/Observable';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { toUnits } from '../domain/money.ts';
import { isReservedClientID, withClientID, type OrderIntent } from '../domain/intents.ts';
import { nextRollover } from '../domain/new-york.ts';
import { formatTime } from '../domain/time.ts';
import type { TransactionNote } from '../domain/transaction-note.ts';
import type { Transaction } from '../domain/v20/index.ts';
import type { Portfolio } from './portfolio.ts';
import type { Clock } from '../ports/clock.ts';
import type { Execution } from '../ports/execution.ts';

/**
 * Pre-trade limits. Every limit is optional; an absent one is not checked. Every order is split
 * into the part that reduces the current position and the part that opens new exposure
 * (`splitOrder`); the limits apply to the opening part of every order, a reversal's included.
 * Reducing parts and exits (reduce-only orders, trade and position closes, cancels, dependent TP/SL
 * orders) always pass, so a breached limit never traps a position: when an order's opening part is
 * refused, its reducing part is still sent (as a reduce-only order) and the refusal reported. (Every request, exits included, still goes through the HTTP client's request
 * budget: the token bucket under OANDA's published rate.)
 */
export interface RiskLimits {
  /** Largest worst-case net position per instrument, in units, counting pending and in-flight entries. */
  readonly maxUnits?: number;
  /** Largest number of open trades plus pending and in-flight entry orders. */
  readonly maxOpenTrades?: number;
  /** Orders with an opening part per sliding minute of engine time; orders that only reduce are not counted. */
  readonly maxOrdersPerMinute?: number;
  /** Largest fall of NAV (realized + unrealized, home currency) within a 17:00 New York trading day. */
  readonly maxDailyLoss?: number;
  /** Widest spread at entry, in pips, from the latest quote. */
  readonly maxSpreadPips?: number;
  /**
   * Most intents of every kind (exits included) the strategy may decide at one instant of engine
   * time: one event and what its transactions make the strategy do at once. The ones past it are
   * refused whole. The runner's own closes and cancels (kill switch, flatten) are not counted.
   */
  readonly maxIntentsPerEvent?: number;
}

/**
 * The limits every run has unless told otherwise (config/default.json `risk` holds the same
 * values; `0` turns one off). A strategy on candles places a handful of orders an hour; one that
 * works a grid of pending orders may place a few dozen at one instant; none needs more than one
 * opening order a second for a whole minute. Past these, a loop has gone wrong: 10,000 intents at
 * one event is a bug, not a trade.
 */
export const DEFAULT_RISK_LIMITS: Readonly<
  Pick<Required<RiskLimits>, 'maxOrdersPerMinute' | 'maxIntentsPerEvent'>
> = { maxOrdersPerMinute: 60, maxIntentsPerEvent: 50 };

/** The limits as given, a 0 (off) left out. */
export function activeLimits(l: RiskLimits): RiskLimits {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(l)) if (typeof v === 'number' && v > 0) out[k] = v;
  return out as RiskLimits;
}

/** The limits in a line, for a start banner or a report: `max-orders-per-minute 60, ...`, or `none`. */
export function describeLimits(l: RiskLimits): string {
  const parts = Object.entries(activeLimits(l)).map(
    ([k, v]) => `${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${v}`,
  );
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** The trading day the daily-loss limit counts from: when it ends, and the NAV it opened with (journaled live). */
export interface RiskDay {
  readonly dayEnd: number;
  readonly startNav: number;
}

/** Which limit refused an intent. */
export type RiskLimit =
  | 'maxUnits'
  | 'maxOpenTrades'
  | 'maxOrdersPerMinute'
  | 'maxDailyLoss'
  | 'maxSpreadPips'
  | 'maxIntentsPerEvent'
  | 'killSwitch';

/** The `rejectReason` a risk reject carries: v20's own where one fits, `RISK_*` otherwise. */
export const RISK_REJECT_REASON: Readonly<Record<RiskLimit, string>> = {
  maxUnits: 'UNITS_LIMIT_EXCEEDED',
  maxOpenTrades: 'OPEN_TRADES_ALLOWED_EXCEEDED',
  maxOrdersPerMinute: 'RISK_ORDER_RATE_EXCEEDED',
  maxDailyLoss: 'RISK_DAILY_LOSS_EXCEEDED',
  maxSpreadPips: 'RISK_SPREAD_TOO_WIDE',
  maxIntentsPerEvent: 'RISK_INTENTS_PER_EVENT_EXCEEDED',
  killSwitch: 'RISK_KILL_SWITCH_ENGAGED',
};

/** A refused intent, as logged. */
export interface RiskBreach {
  readonly limit: RiskLimit;
  readonly intent: OrderIntent;
  readonly message: string;
  /** An order refused in part: its opening part was refused, its reducing part sent (reduce-only). */
  readonly parts?: OrderParts;
}

/** An order as the part that reduces the current position and the part that opens new exposure. */
export interface OrderParts {
  /** Units that reduce the opposite position (the order's sign, or 0). */
  readonly reducing: number;
  /** Units that open or add exposure (the order's sign, or 0). reducing + opening = the order's units. */
  readonly opening: number;
}

/**
 * Splits an order of `units` (signed) into its reducing and opening parts, given how many units of
 * the opposite position are certain to be there when it fills (`reducible` >= 0): the reducing
 * part is at most that, the rest opens exposure. A reversal (-2000 while long 1000) is -1000 of
 * each.
 */
export function splitOrder(units: number, reducible: number): OrderParts {
  const r = Math.min(Math.abs(units), Math.max(0, reducible));
  const reducing = units < 0 ? -r : r;
  return { reducing, opening: units - reducing };
}

/** The logging a risk layer needs (pino's Logger fits). */
export interface RiskLogger {
  warn(obj: object, msg: string): void;
}

/** What the risk layer wraps and reads: the real execution, the limits, the portfolio and the engine clock. */
export interface RiskOptions {
  readonly inner: Execution;
  readonly limits: RiskLimits;
  readonly portfolio: Portfolio;
  readonly instruments: InstrumentRegistry;
  readonly clock: Clock;
  readonly accountID: string;
  /** Hedging account: every entry opens a trade, and each side (long, short) is limited on its own. */
  readonly hedging?: boolean;
  readonly log?: RiskLogger;
  /** The last transaction ID the account had when the layer was built (synthetic rejects are numbered after it). */
  readonly lastTransactionID?: string;
  /** Called for every refusal (the runner marks the journaled intent as settled). */
  readonly onReject?: (b: RiskBreach) => void;
  /** Keep every refusal in `breaches` (default true); a backtest counts them only (`refused`). */
  readonly keepBreaches?: boolean;
}

/** Order types that can open exposure (entries); TP/SL/trailing orders only reduce. */
export const ENTRY_TYPES = new Set(['MARKET', 'LIMIT', 'STOP', 'MARKET_IF_TOUCHED']);
const MINUTE = 60_000;

interface Entry {
  readonly instrument: string;
  readonly units: number;
}

/** The instrument and signed units of an order intent that can open exposure, or undefined. */
function entryOf(intent: OrderIntent): Entry | undefined {
  if (intent.kind !== 'order' && intent.kind !== 'replace') return undefined;
  const r = intent.request as { type?: string; instrument?: string; units?: string; positionFill?: string };
  if (r.type === undefined || !ENTRY_TYPES.has(r.type) || r.instrument === undefined || r.units === undefined)
    return undefined;
  if (r.positionFill === 'REDUCE_ONLY') return undefined;
  const units = Number(r.units);
  if (!Number.isFinite(units) || units === 0) return undefined;
  return { instrument: r.instrument, units };
}

/** Start of the 17:00 New York trading day that contains `t`. */
export function tradingDayStart(t: number): number {
  const ny = DateTime.fromMillis(t, { zone: 'America/New_York' });
  let start = ny.set({ hour: 17, minute: 0, second: 0, millisecond: 0 });
  if (start.toMillis() > t) start = start.minus({ days: 1 });
  return start.toMillis();
}

/**
 * The risk layer: an `Execution` decorator that checks every intent against `RiskLimits` before it
 * reaches the real execution (v20 or the simulator).
 *
 * Use it between the engine and the broker in every live or paper run. A refused intent is never
 * sent: it is logged and answered with a v20-shaped `<TYPE>_ORDER_REJECT` transaction (with
 * `rejectReason`, `errorMessage` and the intent's client ID) on `transactions$`, the path real
 * rejects take, so the strategy's `onTransaction` sees it like any other reject.
 *
 * A synthetic reject takes the ID `<last real ID>.<n>` (a number just above the last transaction
 * seen and below the next real one), so the ledger's in-order fold accepts it and still accepts the
 * next real transaction. It is never journaled as a broker transaction.
 *
 * Worst-case accounting: entries submitted but not yet seen on the transaction stream count toward
 * the unit and open-trade limits until their create (or reject) transaction arrives, so a burst of
 * intents cannot slip past a limit while the broker is answering.
 */
export class RiskExecution implements Execution {
  readonly transactions$: Observable<Transaction>;
  /** Every refusal, for reports and tests (unless `keepBreaches` is false). */
  readonly breaches: RiskBreach[] = [];
  /** Refusals by limit, for the run's report. */
  readonly refused: Partial<Record<RiskLimit, number>> = {};
  /** The same deliveries as the inner execution's `listen`, with the refusals (only when it has one). */
  readonly listen?: (listener: (tx: Transaction) => void) => () => void;
  /** The same deliveries as the inner execution's `listenNotes`, with the refusals (only when it has one). */
  readonly listenNotes?: (listener: (note: TransactionNote) => void) => () => void;
  readonly #txListeners = new Set<(tx: Transaction) => void>();
  readonly #noteListeners = new Set<(note: TransactionNote) => void>();
  readonly #o: RiskOptions;
  /** The subscribers of `transactions$`, who get the refusals too. */
  readonly #rejectSubs = new Set<(tx: Transaction) => void>();
  readonly #inFlight = new Map<string, Entry>();
  /** Engine times of accepted orders, oldest first (the sliding minute). */
  readonly #window: number[] = [];
  #lastID = '0';
  #lastIDNum = 0;
  #synthetic = 0;
  /** The instant (engine time) the intents counted in `#eventIntents` were decided at. */
  #eventAt = Number.NaN;
  #eventIntents = 0;
  #dayEnd = -Infinity;
  #dayStartNav = Number.NaN;
  #halted = false;

  constructor(o: RiskOptions) {
    this.#o = o;
    if (o.lastTransactionID !== undefined && o.lastTransactionID !== '') {
      this.#lastID = o.lastTransactionID;
      this.#lastIDNum = Number(o.lastTransactionID);
    }
    // The inner execution's transactions (seen on the way) and the refusals, merged.
    this.transactions$ = new Observable<Transaction>((sub) => {
      const next = (t: Transaction): void => sub.next(t);
      this.#rejectSubs.add(next);
      const inner = o.inner.transactions$.subscribe({
        next: (t) => {
          this.#seen(t.id, Number(t.id), t);
          sub.next(t);
        },
        error: (e: unknown) => sub.error(e),
      });
      return () => {
        inner.unsubscribe();
        this.#rejectSubs.delete(next);
      };
    });
    const { inner } = o;
    if (inner.listen !== undefined) {
      const listen = inner.listen.bind(inner);
      this.listen = (l) => {
        this.#txListeners.add(l);
        const stop = listen((t) => {
          this.#seen(t.id, Number(t.id), t);
          l(t);
        });
        return () => {
          stop();
          this.#txListeners.delete(l);
        };
      };
    }
    if (inner.listenNotes !== undefined) {
      const listenNotes = inner.listenNotes.bind(inner);
      this.listenNotes = (l) => {
        this.#noteListeners.add(l);
        const stop = listenNotes((n) => {
          // The note names the client ID its transaction carries: no object is asked for.
          this.#seenClientID(n.id, n.idNum, this.#inFlight.size === 0 ? undefined : n.clientExtensionsID);
          l(n);
        });
        return () => {
          stop();
          this.#noteListeners.delete(l);
        };
      };
    }
  }

  /** A transaction of the inner execution: the last real ID, and the entry it answers no longer in flight. */
  #seen(id: string, idNum: number, t: Transaction | undefined): void {
    this.#seenClientID(
      id,
      idNum,
      (t as { clientExtensions?: { id?: string } } | undefined)?.clientExtensions?.id,
    );
  }

  /** `#seen` of a note: `cid`, the client ID its transaction carries (clientExtensions.id), if any. */
  #seenClientID(id: string, idNum: number, cid: string | undefined): void {
    if (idNum > this.#lastIDNum) {
      this.#lastID = id;
      this.#lastIDNum = idNum;
      this.#synthetic = 0;
    }
    if (cid !== undefined) this.#inFlight.delete(cid);
  }

  /** Once halted (kill switch), every entry is refused; exits still pass. */
  get halted(): boolean {
    return this.#halted;
  }
  halt(): void {
    this.#halted = true;
  }

  /**
   * Call on every market event: rolls the trading day and records its opening NAV. Returns true
   * when a new trading day started (the runner journals it: see `day`).
   */
  observe(at: number): boolean {
    if (at < this.#dayEnd) return false;
    const start = tradingDayStart(at);
    this.#dayEnd = nextRollover(start); // 23 or 25 hours on the days daylight saving switches
    this.#dayStartNav = this.#nav();
    return true;
  }

  /** The current trading day of the daily-loss limit (undefined before the first event). */
  get day(): RiskDay | undefined {
    return Number.isNaN(this.#dayStartNav)
      ? undefined
      : { dayEnd: this.#dayEnd, startNav: this.#dayStartNav };
  }

  /**
   * Resumes a journaled trading day after a restart: while it lasts, the daily loss keeps counting
   * from the NAV it opened with, so restarting does not reset the limit. A day already over is
   * ignored (the next event opens a new one).
   */
  restoreDay(day: RiskDay): void {
    if (!(Number.isFinite(day.dayEnd) && Number.isFinite(day.startNav))) return;
    this.#dayEnd = day.dayEnd;
    this.#dayStartNav = day.startNav;
  }

  /** Today's loss so far (positive = loss), from the NAV at the first event of the trading day. */
  dailyLoss(): number {
    if (Number.isNaN(this.#dayStartNav)) return 0;
    return this.#dayStartNav - this.#nav();
  }

  /** Balance (from the ledger, whatever was marked) plus unrealized P/L at the latest quotes. */
  #nav(): number {
    const p = this.#o.portfolio;
    return toUnits(p.ledger.balance) + p.unrealizedTotal();
  }

  submit(intent: OrderIntent, decidedAt?: number): void {
    const cap = this.#o.limits.maxIntentsPerEvent;
    if (cap !== undefined && decidedAt !== undefined && !isReservedClientID(intent.id)) {
      if (decidedAt !== this.#eventAt) {
        this.#eventAt = decidedAt;
        this.#eventIntents = 0;
      }
      if (++this.#eventIntents > cap) {
        const breach: RiskBreach = {
          limit: 'maxIntentsPerEvent',
          intent,
          message: `more than ${cap} intents decided at ${formatTime(decidedAt)}; the limit is ${cap} per event (exits included)`,
        };
        this.#count(breach);
        // One line per event, not one per intent: a runaway loop would fill the log.
        if (this.#eventIntents === cap + 1)
          this.#o.log?.warn(
            { limit: breach.limit, intentId: intent.id, kind: intent.kind },
            `risk: ${breach.message}: this intent and the rest of this event's are refused`,
          );
        this.#o.onReject?.(breach);
        this.#reject(breach);
        return;
      }
    }
    const a = this.#assess(intent);
    const breach = a.breach;
    if (breach !== undefined) {
      this.#count(breach);
      const reducing = breach.parts?.reducing ?? 0;
      this.#o.log?.warn(
        {
          limit: breach.limit,
          intentId: intent.id,
          kind: intent.kind,
          ...(breach.parts !== undefined ? { reducing, opening: breach.parts.opening } : {}),
        },
        `risk: ${breach.message}`,
      );
      if (reducing === 0 || intent.kind !== 'order') {
        this.#o.onReject?.(breach);
        this.#reject(breach);
        return;
      }
      // The opening part is refused (and reported); the reducing part still goes, as a reduce-only order.
      this.#reject(breach);
      // Orders on fill (take profit, stop loss...) belong to the trade it would have opened: not on the close.
      const {
        takeProfitOnFill: _tp,
        stopLossOnFill: _sl,
        trailingStopLossOnFill: _ts,
        guaranteedStopLossOnFill: _gs,
        tradeClientExtensions: _tc,
        ...r
      } = intent.request as unknown as Record<string, unknown>;
      const close = {
        ...intent,
        request: { ...r, units: String(reducing), positionFill: 'REDUCE_ONLY' },
      } as unknown as typeof intent;
      this.#inFlight.set(intent.id, { instrument: a.entry!.instrument, units: reducing });
      this.#o.inner.submit(withClientID(close), decidedAt);
      return;
    }
    if (intent.kind === 'order' || intent.kind === 'replace') {
      const e = a.entry;
      if (e !== undefined) {
        if (a.parts !== undefined && a.parts.opening !== 0) this.#window.push(this.#o.clock.now());
        this.#inFlight.set(intent.id, e);
      }
      this.#o.inner.submit(withClientID(intent), decidedAt);
      return;
    }
    this.#o.inner.submit(intent, decidedAt);
  }

  #count(b: RiskBreach): void {
    if (this.#o.keepBreaches !== false) this.breaches.push(b);
    this.refused[b.limit] = (this.refused[b.limit] ?? 0) + 1;
  }

  /** The limit an intent's opening part would breach, or undefined when it may go whole. Changes nothing. */
  check(intent: OrderIntent): RiskBreach | undefined {
    return this.#assess(intent).breach;
  }

  /**
   * An order's reducing and opening parts against the current worst-case position (see
   * `splitOrder`), for the instrument it trades (undefined for intents that open nothing).
   */
  parts(intent: OrderIntent): OrderParts | undefined {
    const e = entryOf(intent);
    return e === undefined ? undefined : splitOrder(e.units, this.#reducible(e, intent));
  }

  #assess(intent: OrderIntent): { breach?: RiskBreach; entry?: Entry; parts?: OrderParts } {
    const { limits } = this.#o;
    const e = entryOf(intent);
    if (e === undefined) return {};
    const parts = splitOrder(e.units, this.#reducible(e, intent));
    if (parts.opening === 0) return { entry: e, parts }; // only reduces the position: an exit, never limited
    const refuse = (
      limit: RiskLimit,
      message: string,
    ): { breach: RiskBreach; entry: Entry; parts: OrderParts } => {
      const partly = parts.reducing !== 0;
      const said = partly
        ? `the opening part (${parts.opening} of ${e.units} units) is refused: ${message}; the reducing part (${parts.reducing} units) is sent as a reduce-only order`
        : message;
      return { breach: { limit, intent, message: said, ...(partly ? { parts } : {}) }, entry: e, parts };
    };
    if (this.#halted) return refuse('killSwitch', 'the kill switch is engaged: no new entries');
    const max = limits.maxOrdersPerMinute;
    if (max !== undefined) {
      const now = this.#o.clock.now();
      const w = this.#window;
      let drop = 0;
      while (drop < w.length && w[drop]! <= now - MINUTE) drop++;
      if (drop > 0) w.splice(0, drop);
      if (w.length >= max)
        return refuse(
          'maxOrdersPerMinute',
          `${w.length} orders opening exposure in the last minute; the limit is ${max} per minute (parts that only reduce a position are not limited)`,
        );
    }
    if (limits.maxUnits !== undefined) {
      const { worstAfter } = this.#worst(e);
      if (worstAfter > limits.maxUnits)
        return refuse(
          'maxUnits',
          `${e.instrument}: ${worstAfter} units after this order (worst case, pending orders included); the limit is ${limits.maxUnits}`,
        );
    }
    if (limits.maxOpenTrades !== undefined) {
      const open =
        this.#o.portfolio.ledger.trades.size +
        this.#pendingEntries() +
        this.#inFlight.size -
        this.#tradesClosedBy(e, parts);
      if (open + 1 > limits.maxOpenTrades)
        return refuse(
          'maxOpenTrades',
          `${open} open trades and entry orders; the limit is ${limits.maxOpenTrades}`,
        );
    }
    if (limits.maxDailyLoss !== undefined) {
      const loss = this.dailyLoss();
      if (loss >= limits.maxDailyLoss)
        return refuse(
          'maxDailyLoss',
          `lost ${loss.toFixed(2)} ${this.#o.portfolio.currency} this trading day (since 17:00 New York); the limit is ${limits.maxDailyLoss}`,
        );
    }
    if (limits.maxSpreadPips !== undefined) {
      const q = this.#o.portfolio.quote(e.instrument);
      if (q === undefined)
        return refuse('maxSpreadPips', `${e.instrument}: no quote yet, the spread cannot be checked`);
      const pips = (q.ask - q.bid) / this.#o.instruments.get(e.instrument).pip;
      if (pips > limits.maxSpreadPips + 1e-9)
        return refuse(
          'maxSpreadPips',
          `${e.instrument}: spread ${pips.toFixed(1)} pips; the limit is ${limits.maxSpreadPips}`,
        );
    }
    return { entry: e, parts };
  }

  /**
   * How many units of the opposite position are certain to be there when the order fills: the
   * position less every pending and in-flight order that could reduce it first. A hedging
   * account's orders open a trade of their own (0) unless they ask to reduce first.
   */
  #reducible(e: Entry, intent: OrderIntent): number {
    const exp = this.#exposure(e.instrument);
    const fill = (intent as { request?: { positionFill?: string } }).request?.positionFill;
    if (fill === 'OPEN_ONLY') return 0;
    if (this.#o.hedging === true) {
      if (fill !== 'REDUCE_FIRST') return 0;
      return e.units < 0 ? Math.max(0, exp.long + exp.sells) : Math.max(0, -(exp.short + exp.buys));
    }
    return e.units < 0 ? Math.max(0, exp.net + exp.sells) : Math.max(0, -(exp.net + exp.buys));
  }

  /** Trades of the instrument a netting order's reducing part closes whole (all of them when it takes the whole position). */
  #tradesClosedBy(e: Entry, parts: OrderParts): number {
    if (parts.reducing === 0 || this.#o.hedging === true) return 0;
    const p = this.#o.portfolio.ledger.position(e.instrument);
    if (Math.abs(parts.reducing) < Math.abs(p.long + p.short)) return 0;
    let n = 0;
    for (const t of this.#o.portfolio.ledger.trades.values()) if (t.instrument === e.instrument) n++;
    return n;
  }

  /** The worst-case position of the instrument before and after the order (in-flight and pending entries included). */
  #worst(e: Entry): { worstBefore: number; worstAfter: number } {
    const exp = this.#exposure(e.instrument);
    if (this.#o.hedging === true) {
      // Each side on its own: a sell opens a short trade instead of reducing the long one.
      const worstBefore = e.units > 0 ? exp.long + exp.buys : -(exp.short + exp.sells);
      return { worstBefore, worstAfter: worstBefore + Math.abs(e.units) };
    }
    return {
      worstBefore: Math.max(exp.net + exp.buys, -(exp.net + exp.sells), 0),
      worstAfter: Math.max(
        exp.net + exp.buys + Math.max(e.units, 0),
        -(exp.net + exp.sells + Math.min(e.units, 0)),
        0,
      ),
    };
  }

  /** Net position, and the sums of pending plus in-flight buy and sell entries, of one instrument. */
  #exposure(instrument: string): { net: number; long: number; short: number; buys: number; sells: number } {
    const ledger = this.#o.portfolio.ledger;
    const p = ledger.position(instrument);
    let buys = 0;
    let sells = 0;
    for (const o of ledger.pendingOrders.values()) {
      if (o.instrument !== instrument || !ENTRY_TYPES.has(o.type)) continue;
      const u = Number((o.created as { units?: string }).units ?? 0);
      if (u > 0) buys += u;
      else sells += u;
    }
    for (const f of this.#inFlight.values()) {
      if (f.instrument !== instrument) continue;
      if (f.units > 0) buys += f.units;
      else sells += f.units;
    }
    return { net: p.long + p.short, long: p.long, short: p.short, buys, sells };
  }

  #pendingEntries(): number {
    let n = 0;
    for (const o of this.#o.portfolio.ledger.pendingOrders.values()) if (ENTRY_TYPES.has(o.type)) n++;
    return n;
  }

  #reject(b: RiskBreach): void {
    this.#emitReject(
      b.intent,
      RISK_REJECT_REASON[b.limit],
      `fxflow risk limit ${b.limit}: ${b.message}`,
      b.parts?.opening,
    );
  }

  /**
   * Answers an intent the runner gives up on (never sent, or provably not at the broker) with a
   * reject transaction, as a risk refusal is answered: the strategy sees its outcome.
   */
  refuse(intent: OrderIntent, rejectReason: string, message: string): void {
    this.#inFlight.delete(intent.id);
    this.#emitReject(intent, rejectReason, `fxflow: ${message}`);
  }

  /** `units`: the refused part of an order refused in part (its opening part). */
  #emitReject(intent: OrderIntent, rejectReason: string, errorMessage: string, units?: number): void {
    const request =
      intent.kind === 'order' || intent.kind === 'replace'
        ? (intent.request as unknown as Record<string, unknown>)
        : {};
    const type =
      typeof request.type === 'string' ? request.type : intent.kind === 'cancel' ? undefined : 'MARKET';
    const id = `${this.#lastID}.${String(++this.#synthetic).padStart(6, '0')}`;
    const at = this.#o.clock.now();
    const tx = {
      ...request,
      id,
      batchID: id,
      time: formatTime(at),
      accountID: this.#o.accountID,
      type: type === undefined ? 'ORDER_CANCEL_REJECT' : `${type}_ORDER_REJECT`,
      reason: 'CLIENT_ORDER',
      clientExtensions: { ...(request.clientExtensions as object | undefined), id: intent.id },
      rejectReason,
      errorMessage,
      ...(units !== undefined ? { units: String(units) } : {}),
    } as unknown as Transaction;
    for (const next of this.#rejectSubs) next(tx);
    for (const l of this.#txListeners) l(tx);
    if (this.#noteListeners.size > 0) {
      const note: TransactionNote = {
        type: tx.type,
        id,
        idNum: Number(id),
        at,
        orderID: undefined,
        reason: 'CLIENT_ORDER',
        clientExtensionsID: intent.id,
        rejectReason,
        price: Number.NaN,
        transaction: () => tx,
      };
      for (const l of this.#noteListeners) l(note);
    }
  }
}
