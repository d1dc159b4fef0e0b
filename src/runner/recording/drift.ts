import { parseTime } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import {
  breachedTolerance,
  type DriftMeasures,
  type DriftTolerances,
  formatDuration,
} from '../../domain/drift-tolerances.ts';

// The tolerances' reading and checking live in the domain (the config reads them too); re-exported
// here for the runner's other users.
export * from '../../domain/drift-tolerances.ts';

/** One fill that drifted: its intent's client ID and what differs. */
export interface DriftedFill {
  readonly clientID: string;
  readonly instrument: string;
  /** 'price' (both filled, further apart than the tolerance) or 'missed' (one side only). */
  readonly what: 'price' | 'missed';
  readonly live?: string;
  readonly sim?: string;
  readonly pips?: number;
  /** For 'missed': the side that filled, and what the other did. */
  readonly filled?: 'live' | 'sim';
  readonly other?: string;
}

/** The breach that halted the run: which tolerance, its measure, and the fills behind it. */
export interface DriftBreach {
  readonly tolerance: 'price' | 'fills' | 'pl';
  readonly limit: number;
  readonly value: number;
  /** Client IDs (or transaction IDs of fills without one) behind the breach. */
  readonly fills: readonly string[];
  /** Price time of the breach (epoch ms). */
  readonly at: number;
  /** One line: the halt's reason in the journal, the report and the status page. */
  readonly why: string;
}

/** One side's record of an intent: a fill or a final outcome without one. */
interface SideOutcome {
  readonly outcome: 'FILLED' | 'REJECTED' | 'CANCELLED';
  readonly price?: string;
  readonly time: number;
  readonly instrument: string;
  readonly pl?: number;
}

/** One side (the account, or the simulator): client IDs by order, and each intent's outcome. */
class Side {
  readonly byOrder = new Map<string, { cid: string; instrument: string }>();
  readonly outcomes = new Map<string, SideOutcome>();
}

/** A short name for a fill in a list of fills. */
export function describeDriftedFill(f: DriftedFill): string {
  if (f.what === 'price')
    return `${f.clientID} ${f.instrument}: live ${f.live} sim ${f.sim} (${f.pips!.toFixed(1)} pips)`;
  return `${f.clientID} ${f.instrument}: filled ${f.filled === 'live' ? `at the account @${f.live}` : `in the simulator @${f.sim}`}, ${f.other}`;
}

/**
 * The guard: fed the account's transactions (`live`), the simulator's (`sim`) and the price time
 * (`priced`), it keeps the measures, the fills that drifted, and calls `onBreach` once, at the
 * first tolerance passed. Intents the runner's own risk gate refused (a reject with a synthetic ID)
 * are left out of the missed fills: the simulator is not behind that gate.
 */
export class DriftGuard {
  readonly #live = new Side();
  readonly #sim = new Side();
  /** Fills waiting for their counterpart: client ID → the fill's price time. */
  readonly #waiting = new Map<string, number>();
  readonly #excluded = new Set<string>();
  readonly #missedIds = new Set<string>();
  readonly #expected = new Set<string>();
  readonly #compared = new Set<string>();
  /** Each settled intent's P/L gap (account − simulator) in the window, oldest first, and their sum. */
  readonly #pl: { at: number; gap: number; cid: string }[] = [];
  #plSum = 0;
  readonly drifted: DriftedFill[] = [];
  compared = 0;
  pricePips = 0;
  missed = 0;
  plGap = 0;
  now = Number.NEGATIVE_INFINITY;
  breach: DriftBreach | undefined;

  constructor(
    readonly tolerances: DriftTolerances,
    readonly pip: (instrument: string) => number,
    readonly onBreach: (b: DriftBreach) => void = () => undefined,
  ) {}

  live(t: Transaction): void {
    this.#add(this.#live, t, true);
  }

  sim(t: Transaction): void {
    this.#add(this.#sim, t, false);
  }

  /** The latest price time: fills waiting longer than `wait` count as missed; the P/L window moves. */
  priced(at: number): void {
    if (!(at > this.now)) return;
    this.now = at;
    if (this.#waiting.size > 0) {
      for (const [cid, t] of this.#waiting)
        if (at - t > this.tolerances.waitMs)
          this.#miss(cid, `nothing ${Math.round((at - t) / 1000)} s after it`);
    }
    if (this.#pl.length > 0) {
      const from = at - this.tolerances.windowMs;
      let moved = false;
      while (this.#pl.length > 0 && this.#pl[0]!.at < from) {
        this.#plSum -= this.#pl.shift()!.gap;
        moved = true;
      }
      if (moved) this.#checkPl();
    }
  }

  /** The measures now. */
  get measures(): DriftMeasures {
    return { pricePips: this.pricePips, missed: this.missed, plGap: this.plGap };
  }

  #add(side: Side, t: Transaction, live: boolean): void {
    const x = t as {
      type: string;
      id: string;
      orderID?: string;
      price?: string;
      time: string;
      instrument?: string;
      pl?: string;
      clientExtensions?: { id?: string };
    };
    const cid = x.clientExtensions?.id;
    if (x.type.endsWith('_REJECT')) {
      if (cid === undefined) return;
      // The runner's own risk gate (its rejects carry synthetic IDs, `<id>.<n>`): not the account's doing.
      if (live && x.id.includes('.')) {
        this.#excluded.add(cid);
        this.#waiting.delete(cid);
        return;
      }
      this.#outcome(side, cid, {
        outcome: 'REJECTED',
        time: parseTime(x.time),
        instrument: x.instrument ?? '',
      });
      return;
    }
    if (x.type.endsWith('_ORDER')) {
      if (cid !== undefined) side.byOrder.set(x.id, { cid, instrument: x.instrument ?? '' });
      return;
    }
    if (x.type === 'ORDER_FILL') {
      const owner = x.orderID !== undefined ? side.byOrder.get(x.orderID) : undefined;
      if (owner !== undefined)
        this.#outcome(side, owner.cid, {
          outcome: 'FILLED',
          price: x.price ?? '',
          time: parseTime(x.time),
          instrument: x.instrument ?? owner.instrument,
          pl: Number(x.pl ?? 0),
        });
      return;
    }
    if (x.type === 'ORDER_CANCEL') {
      const owner = x.orderID !== undefined ? side.byOrder.get(x.orderID) : undefined;
      if (owner !== undefined)
        this.#outcome(side, owner.cid, {
          outcome: 'CANCELLED',
          time: parseTime(x.time),
          instrument: owner.instrument,
        });
    }
  }

  /**
   * An intent sent to both sides (the runner: once the simulator took it). Only these are compared:
   * an order of an earlier process, replayed at a restart, never reached this simulator.
   */
  expect(cid: string): void {
    this.#expected.add(cid);
    this.#evaluate(cid);
  }

  #outcome(side: Side, cid: string, o: SideOutcome): void {
    if (side.outcomes.get(cid)?.outcome === 'FILLED') return;
    side.outcomes.set(cid, o);
    this.#evaluate(cid);
  }

  #evaluate(cid: string): void {
    if (!this.#expected.has(cid)) return;
    const l = this.#live.outcomes.get(cid);
    const s = this.#sim.outcomes.get(cid);
    if (l?.outcome === 'FILLED' && s?.outcome === 'FILLED') {
      if (this.#compared.has(cid)) return;
      this.#compared.add(cid);
      this.#waiting.delete(cid);
      this.compared++;
      const pips = Math.abs(Number(l.price) - Number(s.price)) / this.pip(l.instrument || s.instrument);
      if (pips > this.pricePips) this.pricePips = pips;
      const f: DriftedFill = {
        clientID: cid,
        instrument: l.instrument || s.instrument,
        what: 'price',
        live: l.price!,
        sim: s.price!,
        pips,
      };
      this.#addPl(Math.max(l.time, s.time), (l.pl ?? 0) - (s.pl ?? 0), cid);
      if (breachedTolerance(this.tolerances, { pricePips: pips }) === 'price') {
        this.drifted.push(f);
        this.#breach('price', this.tolerances.price!, pips, [cid], `fill of ${describeDriftedFill(f)}`);
      }
      return;
    }
    if (this.#excluded.has(cid) || this.#missedIds.has(cid)) return;
    const filled = l?.outcome === 'FILLED' ? l : s?.outcome === 'FILLED' ? s : undefined;
    if (filled === undefined) return;
    const other = filled === l ? s : l;
    if (other === undefined) this.#waiting.set(cid, filled.time);
    else this.#miss(cid, other.outcome);
  }

  #miss(cid: string, other: string): void {
    this.#waiting.delete(cid);
    if (this.#missedIds.has(cid) || this.#excluded.has(cid)) return;
    this.#missedIds.add(cid);
    this.missed++;
    const l = this.#live.outcomes.get(cid);
    const s = this.#sim.outcomes.get(cid);
    const filledLive = l?.outcome === 'FILLED';
    const f: DriftedFill = {
      clientID: cid,
      instrument: (l ?? s)?.instrument ?? '',
      what: 'missed',
      filled: filledLive ? 'live' : 'sim',
      ...(l?.price !== undefined ? { live: l.price } : {}),
      ...(s?.price !== undefined ? { sim: s.price } : {}),
      other: `${filledLive ? 'the simulator' : 'the account'}: ${other}`,
    };
    this.drifted.push(f);
    this.#addPl(
      Math.max(this.now, (l ?? s)?.time ?? this.now),
      filledLive ? (l?.pl ?? 0) : -(s?.pl ?? 0),
      cid,
    );
    if (breachedTolerance(this.tolerances, { missed: this.missed }) === 'fills') {
      this.#breach(
        'fills',
        this.tolerances.fills!,
        this.missed,
        [...this.#missedIds],
        `${this.missed} fill(s) on one side only: ${this.drifted
          .filter((d) => d.what === 'missed')
          .map(describeDriftedFill)
          .join('; ')}`,
      );
    }
  }

  /** One settled intent's P/L gap into the window (a fill older than the window is already out). */
  #addPl(at: number, gap: number, cid: string): void {
    if (this.tolerances.pl === undefined || gap === 0 || at < this.now - this.tolerances.windowMs) return;
    this.#pl.push({ at, gap, cid });
    this.#plSum += gap;
    this.#checkPl();
  }

  #checkPl(): void {
    const gap = Math.abs(this.#plSum);
    this.plGap = gap;
    if (breachedTolerance(this.tolerances, { plGap: gap }) === 'pl') {
      const names = [...new Set(this.#pl.map((p) => p.cid))];
      const each = this.#pl.slice(-10).map((p) => `${p.cid} ${p.gap > 0 ? '+' : ''}${p.gap.toFixed(2)}`);
      this.#breach(
        'pl',
        this.tolerances.pl!,
        gap,
        names,
        `realized P/L over the last ${formatDuration(this.tolerances.windowMs)}, account less simulator, intent by intent: ${this.#plSum.toFixed(2)} (${each.join(', ')}${this.#pl.length > 10 ? `; ${this.#pl.length - 10} earlier` : ''})`,
      );
    }
  }

  #breach(
    tolerance: 'price' | 'fills' | 'pl',
    limit: number,
    value: number,
    fills: readonly string[],
    detail: string,
  ): void {
    if (this.breach !== undefined) return;
    const v = tolerance === 'fills' ? String(value) : value.toFixed(tolerance === 'price' ? 1 : 2);
    const why = `drift guard: ${tolerance} ${v} past --max-drift ${tolerance}=${limit}: ${detail}`;
    this.breach = { tolerance, limit, value, fills, at: this.now, why };
    this.onBreach(this.breach);
  }
}
