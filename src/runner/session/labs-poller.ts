import {
  calendarItemEvent,
  cotItemEvent,
  LabsIdentity,
  ownTime,
  signalItemEvent,
  spreadItemEvent,
  type LabsItem,
} from '../../adapters/catalog/labs-items.ts';
import {
  AUTOCHARTIST_PERIODS,
  coveringPeriod,
  LABS_PERIODS,
  type AutochartistResponse,
  type LabsCalendarEntry,
  type LabsCotEntry,
  type LabsSpreads,
} from '../../adapters/v20/labs.ts';
import type { CalendarEvent, CotEvent, SignalEvent, SpreadEvent } from '../../domain/events.ts';
import type { UnixMs } from '../../domain/time.ts';

/** The labs calls the poller makes (V20Labs implements them). */
export interface LabsEndpoints {
  calendarEntries(instrument: string | undefined, period: number): Promise<LabsCalendarEntry[]>;
  autochartist(o: { instrument?: string; period?: number }): Promise<AutochartistResponse>;
  spreads(instrument: string, period: number): Promise<LabsSpreads>;
  commitmentsOfTraders(instrument: string): Promise<readonly LabsCotEntry[]>;
  /** The server's time when it sent the latest answer (its Date header), if it said. */
  serverTime?(): UnixMs | undefined;
}

export interface LabsPollerOptions {
  readonly labs: LabsEndpoints;
  /** Currencies whose calendar releases are wanted (one request for all of them per poll). */
  readonly calendar?: readonly string[];
  /** Instruments whose Autochartist signals are wanted (one request per instrument per poll). */
  readonly signals?: readonly string[];
  /** Instruments whose spread history is polled (one request per instrument per poll). */
  readonly spreads?: readonly string[];
  /** Instruments whose COT reports are polled (one request per instrument per poll). */
  readonly cot?: readonly string[];
  /** The wall clock the schedule and the rate budget run on (default Date.now). */
  readonly now?: () => UnixMs;
  /**
   * The time an item is stamped as known (default: the server's time when it sent the answer that
   * brought the item, its Date header; `now` when it gives none). The runner passes its event
   * clock (the time of the latest price), so that labs events fall in line with the prices a
   * strategy sees.
   */
  readonly stamp?: () => UnixMs;
  /** How often each kind is polled (ms). Defaults: calendar 60 s, signals 5 min, spreads 15 min, COT 6 h. */
  readonly every?: Partial<Record<'calendar' | 'signals' | 'spreads' | 'cot', number>>;
  /** At most this many labs requests per minute (default 20), whatever is due: the rest wait for the next round. */
  readonly requestsPerMinute?: number;
  /** A request slower than this counts as failed (default 10 s); its answer, if it comes, is ignored. */
  readonly timeoutMs?: number;
  /** Identities already delivered (a restart: from the journal or the catalog); default empty. */
  readonly identity?: LabsIdentity;
}

export interface LabsPollerStats {
  polls: number;
  items: number;
  failures: number;
  /** Requests due but put off by the rate budget. */
  deferred: number;
  lastError: string | undefined;
}

/** `lastOk` and `due` are on the server's clock once it has said its time (else the wall clock); `dueWall` on the wall clock. */
type Task = {
  kind: 'calendar' | 'signals' | 'spreads' | 'cot';
  instrument: string | undefined;
  lastOk: number;
  due: number;
  dueWall: number;
};

/**
 * Polls the OANDA labs endpoints a strategy subscribes to and turns each answer into new items
 * only (by identity: a calendar entry whose actual arrives later is an update, a pattern seen
 * again is nothing), each stamped with the time it became known. Every period sent is one the
 * endpoint accepts (the smallest that covers the time since the last good answer of that
 * request), and a rate budget caps requests per minute.
 *
 * A poll never throws and never blocks the caller: `poll()` is awaited by the poller's own timer
 * (`start`), failures and timeouts are counted (`stats`) and that request is tried again next
 * round. Items are handed over in time order, each once.
 */
export class LabsPoller {
  readonly stats: LabsPollerStats = { polls: 0, items: 0, failures: 0, deferred: 0, lastError: undefined };
  readonly identity: LabsIdentity;
  readonly #o: LabsPollerOptions;
  readonly #now: () => UnixMs;
  readonly #tasks: Task[] = [];
  readonly #sent: number[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** The server's clock as last heard (its time and the wall time then), and how fast it runs against the wall clock. */
  #server: { t: number; wall: number } | undefined;
  #rate = 1;
  /** Rounds left in which every task polls, to learn how fast the server's clock runs (its rate needs two answers). */
  #probes = 2;
  #running = false;
  #stopped = false;
  /** The wall time of the latest round that had something due (asked, or put off by the budget). */
  #askedAt = -Infinity;

  constructor(o: LabsPollerOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.identity = o.identity ?? new LabsIdentity();
    if ((o.calendar ?? []).length > 0)
      this.#tasks.push({ kind: 'calendar', instrument: undefined, lastOk: -Infinity, due: 0, dueWall: 0 });
    for (const i of o.signals ?? [])
      this.#tasks.push({ kind: 'signals', instrument: i, lastOk: -Infinity, due: 0, dueWall: 0 });
    for (const i of o.spreads ?? [])
      this.#tasks.push({ kind: 'spreads', instrument: i, lastOk: -Infinity, due: 0, dueWall: 0 });
    for (const i of o.cot ?? [])
      this.#tasks.push({ kind: 'cot', instrument: i, lastOk: -Infinity, due: 0, dueWall: 0 });
  }

  #every(kind: Task['kind']): number {
    const d = { calendar: 60_000, signals: 300_000, spreads: 900_000, cot: 6 * 3_600_000 }[kind];
    return this.#o.every?.[kind] ?? d;
  }

  #budget(now: number): boolean {
    const limit = this.#o.requestsPerMinute ?? 20;
    while (this.#sent.length > 0 && this.#sent[0]! <= now - 60_000) this.#sent.shift();
    if (this.#sent.length >= limit) return false;
    this.#sent.push(now);
    return true;
  }

  async #call<T>(p: Promise<T>): Promise<T> {
    const ms = this.#o.timeoutMs ?? 10_000;
    let t: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        p,
        new Promise<never>((_, reject) => {
          t = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
          t.unref?.();
        }),
      ]);
    } finally {
      if (t) clearTimeout(t);
      p.catch(() => {}); // a late failure of an abandoned call is not unhandled
    }
  }

  /** Notes the server's time of the answer just received (and the rate of its clock); returns it. */
  #heard(wall: number): number | undefined {
    const t = this.#o.labs.serverTime?.();
    if (t === undefined) return undefined;
    const prev = this.#server;
    if (prev === undefined || t !== prev.t) {
      // The Date header has whole seconds: the rate is measured over at least a second of the server's clock.
      if (prev !== undefined && wall > prev.wall && Math.abs(t - prev.t) >= 1000) {
        this.#rate = Math.max(0, (t - prev.t) / (wall - prev.wall));
        this.#probes = 0;
      }
      this.#server = { t, wall };
    }
    return t;
  }

  /** The server's time now, as far as the poller can tell (undefined until it has said). */
  #serverNow(wall: number): number | undefined {
    return this.#server === undefined ? undefined : this.#server.t + (wall - this.#server.wall) * this.#rate;
  }

  /** How fast the server's clock runs against the wall clock, as measured (1 until measured). */
  get serverRate(): number {
    return this.#rate;
  }

  /**
   * Asks with the period covering the time since the last good answer; when the answer's own
   * time shows the server's clock ran further than that (a sandbox faster than the wall clock, a
   * long stall), asks again with the period that covers it: no item falls between two windows.
   */
  async #ask<T>(
    task: Task,
    nowS: number,
    allowed: readonly number[],
    call: (period: number) => Promise<T>,
    wall: number,
  ): Promise<{ res: T; at: number }> {
    const period = this.#period(task, nowS, allowed);
    let res = await this.#call(call(period));
    let at = this.#heard(this.#now()) ?? wall;
    if (Number.isFinite(task.lastOk) && (at - task.lastOk) / 1000 + 60 > period) {
      const wider = this.#period(task, at, allowed);
      if (wider > period && this.#budget(this.#now())) {
        this.stats.polls++;
        res = await this.#call(call(wider));
        at = this.#heard(this.#now()) ?? at;
      }
    }
    return { res, at };
  }

  /** Seconds to ask for: the smallest accepted period covering the time since the last good answer (at least one poll interval). */
  #period(task: Task, now: number, allowed: readonly number[]): number {
    const since = Number.isFinite(task.lastOk) ? now - task.lastOk : this.#every(task.kind);
    return coveringPeriod(Math.ceil(Math.max(since, this.#every(task.kind)) / 1000) + 60, allowed);
  }

  /**
   * Polls what is due now; returns the new items, in the order they became known (then own time).
   * Never throws. `probe`: poll the first task even if it is not due (start() does, to learn how
   * fast the server's clock runs).
   */
  async poll(o: { readonly probe?: boolean } = {}): Promise<LabsItem[]> {
    const wall = this.#now();
    const out: LabsItem[] = [];
    const cal = new Set(this.#o.calendar ?? []);
    let probing = o.probe === true;
    const deferred = this.stats.deferred;
    const polls = this.stats.polls;
    for (const task of this.#tasks) {
      // Due on the server's clock (a sandbox at speed 600 is due 600 times as often), or on the wall clock (a clock standing still).
      const nowS = this.#serverNow(this.#now());
      const due = probing || (nowS !== undefined && nowS >= task.due) || this.#now() >= task.dueWall;
      probing = false;
      if (!due) continue;
      if (!this.#budget(this.#now())) {
        this.stats.deferred++;
        continue;
      }
      this.stats.polls++;
      const asked = nowS ?? this.#now();
      try {
        const l = this.#o.labs;
        let at: number;
        switch (task.kind) {
          case 'calendar': {
            const r = await this.#ask(
              task,
              asked,
              LABS_PERIODS,
              (period) => l.calendarEntries(undefined, period),
              wall,
            );
            at = r.at;
            const stamp = this.#o.stamp ?? (() => at as UnixMs);
            for (const e of r.res) {
              if (!cal.has(e.currency)) continue;
              const item = this.identity.calendar(e, stamp());
              if (item) out.push(item);
            }
            break;
          }
          case 'signals': {
            const r = await this.#ask(
              task,
              asked,
              AUTOCHARTIST_PERIODS,
              (period) => l.autochartist({ instrument: task.instrument!, period }),
              wall,
            );
            at = r.at;
            const stamp = this.#o.stamp ?? (() => at as UnixMs);
            for (const s of r.res.signals) {
              if (s.instrument !== task.instrument) continue;
              const item = this.identity.signal(s, stamp());
              if (item) out.push(item);
            }
            break;
          }
          case 'spreads': {
            const r = await this.#ask(
              task,
              asked,
              LABS_PERIODS,
              (period) => l.spreads(task.instrument!, period),
              wall,
            );
            at = r.at;
            const stamp = this.#o.stamp ?? (() => at as UnixMs);
            const sp = r.res;
            for (let k = 0; k < sp.avg.length; k++) {
              const [t, avg] = sp.avg[k]!;
              const item = this.identity.spread(
                task.instrument!,
                t,
                sp.min[k]?.[1] ?? avg,
                avg,
                sp.max[k]?.[1] ?? avg,
                stamp(),
              );
              if (item) out.push(item);
            }
            break;
          }
          case 'cot': {
            const reports = await this.#call(l.commitmentsOfTraders(task.instrument!));
            at = this.#heard(this.#now()) ?? this.#now();
            const stamp = this.#o.stamp ?? (() => at as UnixMs);
            for (const r of reports) {
              const item = this.identity.cot(task.instrument!, r, stamp());
              if (item) out.push(item);
            }
            break;
          }
        }
        task.lastOk = at;
        task.due = at + this.#every(task.kind);
        task.dueWall = this.#now() + this.#every(task.kind);
      } catch (e) {
        this.stats.failures++;
        this.stats.lastError = `${task.kind}${task.instrument ? ` ${task.instrument}` : ''}: ${(e as Error).message}`;
        const retry = Math.min(this.#every(task.kind), 60_000);
        task.due = (this.#serverNow(this.#now()) ?? this.#now()) + retry;
        task.dueWall = this.#now() + retry;
      }
    }
    if (this.stats.polls !== polls || this.stats.deferred !== deferred) this.#askedAt = wall;
    // Bounded memory: nothing older than the longest window asked for comes back. The cut is
    // taken from the data's own newest time, so a skewed local clock never forgets too much.
    this.identity.forget(this.identity.newest - 2 * LABS_PERIODS[LABS_PERIODS.length - 1]! * 1000);
    out.sort((a, b) => ownTime(a) - ownTime(b));
    this.stats.items += out.length;
    return out;
  }

  /**
   * Polls on a timer and hands each round's items to `deliver`: each round is timed for the moment
   * the next request falls due (`#nextRound`), at least every `tickMs` (default 5 s; the timer does
   * not keep the process alive). A poll in progress is never started twice; a slow labs server
   * delays only the next poll, not the caller.
   */
  start(deliver: (items: LabsItem[]) => void, tickMs = 5000): void {
    this.#stopped = false;
    const round = async (): Promise<void> => {
      if (this.#running || this.#stopped) return;
      this.#running = true;
      try {
        // Until the server's clock rate is known (two answers a second of its clock apart), each
        // round asks once: a sandbox at speed 600 runs ten minutes a second, the schedule must know.
        const probe = this.#probes > 0 && this.#o.labs.serverTime !== undefined && this.#server !== undefined;
        if (probe) this.#probes--;
        const items = await this.poll({ probe });
        if (items.length > 0 && !this.#stopped) deliver(items);
      } finally {
        this.#running = false;
        if (!this.#stopped) {
          this.#timer = setTimeout(() => void round(), this.#nextRound(tickMs));
          this.#timer.unref?.();
        }
      }
    };
    void round();
  }

  /**
   * Wall ms until the next round: until the earliest request falls due, on the server's clock (its
   * due time less the server's time now, at the measured rate: a sandbox at speed 120 is due at
   * 0.5 s of wall time for a 60 s interval) or on the wall clock (a clock standing still), whichever
   * comes first. So a release just after a poll is asked for one interval later, not up to half an
   * interval after that as when rounds ticked at fixed fractions of the interval. At most `tickMs`
   * (a measured rate can change, a server clock can jump); while the rate is being learned, at most
   * a second. Never sooner than the request budget (OANDA's, on the wall clock) spaces rounds that
   * ask: `60 s × tasks / requestsPerMinute` after the latest one, so a request put off by the
   * budget is not retried in a busy loop.
   */
  #nextRound(tickMs: number): number {
    if (this.#probes > 0 && this.#o.labs.serverTime !== undefined) return Math.min(tickMs, 1000);
    const wall = this.#now();
    const serverNow = this.#serverNow(wall);
    let wait = tickMs;
    for (const t of this.#tasks) {
      let w = t.dueWall - wall;
      if (serverNow !== undefined && this.#rate > 0) w = Math.min(w, (t.due - serverNow) / this.#rate);
      if (w < wait) wait = w;
    }
    const budgetMs = (60_000 * this.#tasks.length) / (this.#o.requestsPerMinute ?? 20);
    // Whole milliseconds, rounded up: a timer a fraction early finds nothing due yet.
    return Math.ceil(Math.min(tickMs, Math.max(wait, this.#askedAt + budgetMs - wall, 0)));
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
  }
}

/** The engine events of polled items, in time order (the same events a backtest makes of the same items). */
export function labsEvents(
  items: readonly LabsItem[],
): (CalendarEvent | SignalEvent | SpreadEvent | CotEvent)[] {
  const out: (CalendarEvent | SignalEvent | SpreadEvent | CotEvent)[] = [];
  for (const i of items) {
    if (i.kind === 'calendar') out.push(calendarItemEvent(i));
    else if (i.kind === 'signals') out.push(signalItemEvent(i));
    else if (i.kind === 'spreads') out.push(spreadItemEvent(i));
    else out.push(cotItemEvent(i));
  }
  out.sort((a, b) => a.at - b.at);
  return out;
}
