import { calendarItemEvent, LabsIdentity, ownTime, signalItemEvent, type LabsItem } from '../adapters/catalog/labs-items.ts';
import { AUTOCHARTIST_PERIODS, coveringPeriod, LABS_PERIODS, type AutochartistResponse, type LabsCalendarEntry, type LabsCotEntry, type LabsSpreads } from '../adapters/v20/labs.ts';
import type { CalendarEvent, SignalEvent } from '../domain/events.ts';
import type { UnixMs } from '../domain/time.ts';

/** The labs calls the poller makes (V20Labs implements them). */
export interface LabsEndpoints {
  calendarEntries(instrument: string | undefined, period: number): Promise<LabsCalendarEntry[]>;
  autochartist(o: { instrument?: string; period?: number }): Promise<AutochartistResponse>;
  spreads(instrument: string, period: number): Promise<LabsSpreads>;
  commitmentsOfTraders(instrument: string): Promise<readonly LabsCotEntry[]>;
}

export interface LabsPollerOptions {
  readonly labs: LabsEndpoints;
  /** Currencies whose calendar releases are wanted (one request for all of them per poll). */
  readonly calendar?: readonly string[];
  /** Instruments whose Autochartist signals are wanted (one request per instrument per poll). */
  readonly signals?: readonly string[];
  /** Instruments whose spread history is recorded (items only; no engine event). */
  readonly spreads?: readonly string[];
  /** Instruments whose COT reports are recorded (items only; no engine event). */
  readonly cot?: readonly string[];
  /** The wall clock the schedule and the rate budget run on (default Date.now). */
  readonly now?: () => UnixMs;
  /**
   * The time an item is stamped as known (default: `now`). The runner passes its event clock (the
   * time of the latest price), so that labs events fall in line with the prices a strategy sees.
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

type Task = { kind: 'calendar' | 'signals' | 'spreads' | 'cot'; instrument: string | undefined; lastOk: number; due: number };

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
  #running = false;
  #stopped = false;

  constructor(o: LabsPollerOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.identity = o.identity ?? new LabsIdentity();
    if ((o.calendar ?? []).length > 0) this.#tasks.push({ kind: 'calendar', instrument: undefined, lastOk: -Infinity, due: 0 });
    for (const i of o.signals ?? []) this.#tasks.push({ kind: 'signals', instrument: i, lastOk: -Infinity, due: 0 });
    for (const i of o.spreads ?? []) this.#tasks.push({ kind: 'spreads', instrument: i, lastOk: -Infinity, due: 0 });
    for (const i of o.cot ?? []) this.#tasks.push({ kind: 'cot', instrument: i, lastOk: -Infinity, due: 0 });
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
      return await Promise.race([p, new Promise<never>((_, reject) => { t = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms); t.unref?.(); })]);
    } finally {
      if (t) clearTimeout(t);
      p.catch(() => {}); // a late failure of an abandoned call is not unhandled
    }
  }

  /** Seconds to ask for: the smallest accepted period covering the time since the last good answer (at least one poll interval). */
  #period(task: Task, now: number, allowed: readonly number[]): number {
    const since = Number.isFinite(task.lastOk) ? now - task.lastOk : this.#every(task.kind);
    return coveringPeriod(Math.ceil(Math.max(since, this.#every(task.kind)) / 1000) + 60, allowed);
  }

  /** Polls what is due now; returns the new items, in the order they became known (then own time). Never throws. */
  async poll(): Promise<LabsItem[]> {
    const now = this.#now();
    const stamp = this.#o.stamp ?? this.#now;
    const out: LabsItem[] = [];
    const cal = new Set(this.#o.calendar ?? []);
    for (const task of this.#tasks) {
      if (task.due > now) continue;
      if (!this.#budget(now)) {
        this.stats.deferred++;
        continue;
      }
      this.stats.polls++;
      try {
        const l = this.#o.labs;
        switch (task.kind) {
          case 'calendar': {
            const entries = await this.#call(l.calendarEntries(undefined, this.#period(task, now, LABS_PERIODS)));
            for (const e of entries) {
              if (!cal.has(e.currency)) continue;
              const item = this.identity.calendar(e, stamp());
              if (item) out.push(item);
            }
            break;
          }
          case 'signals': {
            const res = await this.#call(l.autochartist({ instrument: task.instrument!, period: this.#period(task, now, AUTOCHARTIST_PERIODS) }));
            for (const s of res.signals) {
              if (s.instrument !== task.instrument) continue;
              const item = this.identity.signal(s, stamp());
              if (item) out.push(item);
            }
            break;
          }
          case 'spreads': {
            const sp = await this.#call(l.spreads(task.instrument!, this.#period(task, now, LABS_PERIODS)));
            for (let k = 0; k < sp.avg.length; k++) {
              const [t, avg] = sp.avg[k]!;
              const item = this.identity.spread(task.instrument!, t, sp.min[k]?.[1] ?? avg, avg, sp.max[k]?.[1] ?? avg, stamp());
              if (item) out.push(item);
            }
            break;
          }
          case 'cot': {
            for (const r of await this.#call(l.commitmentsOfTraders(task.instrument!))) {
              const item = this.identity.cot(task.instrument!, r, stamp());
              if (item) out.push(item);
            }
            break;
          }
        }
        task.lastOk = now;
        task.due = now + this.#every(task.kind);
      } catch (e) {
        this.stats.failures++;
        this.stats.lastError = `${task.kind}${task.instrument ? ` ${task.instrument}` : ''}: ${(e as Error).message}`;
        task.due = now + Math.min(this.#every(task.kind), 60_000);
      }
    }
    // Bounded memory: nothing older than the longest window asked for comes back. The cut is
    // taken from the data's own newest time, so a skewed local clock never forgets too much.
    this.identity.forget(this.identity.newest - 2 * LABS_PERIODS[LABS_PERIODS.length - 1]! * 1000);
    out.sort((a, b) => ownTime(a) - ownTime(b));
    this.stats.items += out.length;
    return out;
  }

  /**
   * Polls on a timer (every `tickMs`, default 5 s; the timer does not keep the process alive) and
   * hands each round's items to `deliver`. A poll in progress is never started twice; a slow labs
   * server delays only the next poll, not the caller.
   */
  start(deliver: (items: LabsItem[]) => void, tickMs = 5000): void {
    this.#stopped = false;
    const round = async (): Promise<void> => {
      if (this.#running || this.#stopped) return;
      this.#running = true;
      try {
        const items = await this.poll();
        if (items.length > 0 && !this.#stopped) deliver(items);
      } finally {
        this.#running = false;
        if (!this.#stopped) {
          this.#timer = setTimeout(() => void round(), tickMs);
          this.#timer.unref?.();
        }
      }
    };
    void round();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
  }
}

/** The engine events of polled items (calendar and signals; spreads and COT are recorded, not delivered). */
export function labsEvents(items: readonly LabsItem[]): (CalendarEvent | SignalEvent)[] {
  const out: (CalendarEvent | SignalEvent)[] = [];
  for (const i of items) {
    if (i.kind === 'calendar') out.push(calendarItemEvent(i));
    else if (i.kind === 'signals') out.push(signalItemEvent(i));
  }
  out.sort((a, b) => a.at - b.at);
  return out;
}
