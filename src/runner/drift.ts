import { parseTime } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';

/**
 * The drift guard of `fxflow run --shadow --max-drift …`: tolerances on how far the account's fills
 * may part from the shadow simulator's before the run halts itself (the kill switch's halt, journaled).
 * Three measures, each optional:
 *
 * - `price`: the fill price of one intent at the account against the simulator's, in pips of its
 *   instrument (|live − sim| / pip).
 * - `fills`: fills one side made that the other did not (a fill against a reject or cancel, or against
 *   nothing `wait` of price time after it), counted over the run.
 * - `pl`: the gap between the realized P/L (v20's `pl`) of the account's fills and of the
 *   simulator's, intent by intent, summed over the last `window` of price time, in the account's
 *   currency. An intent counts once both sides have its outcome (a fill waiting for its counterpart
 *   is no gap yet: the simulator fills at the next price), or once it is counted missed (then its one
 *   fill's P/L is the gap). Fills without the strategy's client ID (take-profit, stop-loss and
 *   trailing-stop triggers) are not paired and not counted.
 *
 * A measure past its tolerance (strictly greater) breaches it; one at or below never does.
 */
export interface DriftTolerances {
  readonly price?: number;
  readonly fills?: number;
  readonly pl?: number;
  /** The P/L gap's window (ms of price time; default one hour). */
  readonly windowMs: number;
  /** How long a fill waits for its counterpart before it counts as missed (ms of price time; default 10 s). */
  readonly waitMs: number;
}

export const DRIFT_WINDOW_MS = 3_600_000;
export const DRIFT_WAIT_MS = 10_000;

/** A bad --max-drift value or config `drift` field: the message names it and says what is expected. */
export class DriftSpecError extends Error {
  readonly code = 'RUNNER' as const;
  constructor(message: string) {
    super(message);
    this.name = 'DriftSpecError';
  }
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30s`, `15m`, `1h`, `1d`, `500ms` in ms; undefined when it is not one. */
export function durationMs(s: string): number | undefined {
  const m = DURATION.exec(s.trim());
  if (m === null) return undefined;
  const v = Number(m[1]) * UNIT_MS[m[2]!]!;
  return v > 0 && Number.isFinite(v) ? v : undefined;
}

export const DRIFT_KEYS = ['price', 'fills', 'pl', 'window', 'wait'] as const;
type Key = (typeof DRIFT_KEYS)[number];

/**
 * Checks one key and its value (as given: a flag's text or a config file's JSON value) and returns
 * it in the tolerances' units. `where` names the source in the message (`--max-drift`, `config.json: drift.price`).
 */
function valueOf(key: Key, v: unknown, where: string, joiner: string): number {
  if (key === 'window' || key === 'wait') {
    const ms = typeof v === 'string' ? durationMs(v) : undefined;
    if (ms === undefined) throw new DriftSpecError(`${where}${joiner}${key} must be a duration like 30s, 15m, 1h or 1d (got ${JSON.stringify(v)})`);
    return ms;
  }
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  const what = key === 'price' ? 'a number of pips >= 0, e.g. price=1' : key === 'fills' ? 'a whole number of fills >= 0, e.g. fills=0 (the first missed fill halts)' : 'an amount of the account currency >= 0, e.g. pl=50';
  if (!Number.isFinite(n) || n < 0 || (key === 'fills' && !Number.isInteger(n))) throw new DriftSpecError(`${where}${joiner}${key} must be ${what} (got ${JSON.stringify(v)})`);
  return n;
}

type Part = { -readonly [K in keyof DriftTolerances]?: DriftTolerances[K] };

/** The keys given, checked (`joiner` between `where` and a key: ': ' for a flag, '.' for a config section). */
function partOf(fields: Readonly<Record<string, unknown>>, where: string, joiner: string): Part {
  const out: Part = {};
  for (const [k, v] of Object.entries(fields)) {
    if (!(DRIFT_KEYS as readonly string[]).includes(k)) throw new DriftSpecError(`${where}: ${JSON.stringify(k)} is not a drift tolerance; known: ${DRIFT_KEYS.join(', ')} (e.g. price=1,fills=0,pl=50,window=1h)`);
    const n = valueOf(k as Key, v, where, joiner);
    if (k === 'window') out.windowMs = n;
    else if (k === 'wait') out.waitMs = n;
    else out[k as 'price' | 'fills' | 'pl'] = n;
  }
  return out;
}

/** At least one tolerance, and the defaults of window and wait. */
function complete(p: Part, where: string): DriftTolerances {
  const out = { windowMs: DRIFT_WINDOW_MS, waitMs: DRIFT_WAIT_MS, ...p };
  if (out.price === undefined && out.fills === undefined && out.pl === undefined) {
    throw new DriftSpecError(`${where}: no tolerance given; say at least one of price=<pips>, fills=<count>, pl=<amount> (window and wait only shape them)`);
  }
  return out;
}

/**
 * The tolerances from key/value pairs, checked: a config file's `drift` section (`where` the file
 * and `drift`, `joiner` '.': `my.json: drift.price must be …`), or the flag's parsed pairs.
 */
export function driftOf(fields: Readonly<Record<string, unknown>>, where: string, joiner = ': '): DriftTolerances {
  return complete(partOf(fields, where, joiner), where);
}

/**
 * `--max-drift` values (the flag may be given more than once): each `key=value[,key=value…]`, or a
 * bare number for `price` in pips (`--max-drift 1`). Later values override earlier ones, and all of
 * them the config file's (`base`).
 */
export function parseMaxDrift(values: readonly string[], base?: DriftTolerances): DriftTolerances {
  const fields: Record<string, unknown> = {};
  for (const value of values) {
    for (const part of String(value).split(',')) {
      const p = part.trim();
      if (p === '') continue;
      const eq = p.indexOf('=');
      if (eq < 0) {
        if (!Number.isFinite(Number(p))) throw new DriftSpecError(`--max-drift: ${JSON.stringify(p)} is neither key=value nor a number of pips; e.g. --max-drift 1, or --max-drift price=1,fills=0,pl=50,window=1h`);
        fields.price = p;
      } else fields[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
    }
  }
  return complete({ ...base, ...partOf(fields, '--max-drift', ': ') }, '--max-drift');
}

/** A duration as the flag writes it (`1h`, `90s`). */
export function formatDuration(ms: number): string {
  return ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** The tolerances as the flag writes them (`price=1,fills=0,window=1h`). */
export function formatDrift(t: DriftTolerances): string {
  const dur = formatDuration;
  const parts: string[] = [];
  if (t.price !== undefined) parts.push(`price=${t.price}`);
  if (t.fills !== undefined) parts.push(`fills=${t.fills}`);
  if (t.pl !== undefined) parts.push(`pl=${t.pl}`, `window=${dur(t.windowMs)}`);
  if (t.fills !== undefined) parts.push(`wait=${dur(t.waitMs)}`);
  return parts.join(',');
}

/** What the guard measures: each value against its tolerance. */
export interface DriftMeasures {
  /** The largest price difference of one intent's two fills so far, pips. */
  readonly pricePips: number;
  /** Fills missed on one side so far. */
  readonly missed: number;
  /** |account − simulator| realized P/L over the window. */
  readonly plGap: number;
}

/** The first tolerance a set of measures is past (strictly greater), in the order price, fills, pl. */
export function breachedTolerance(t: DriftTolerances, m: Partial<DriftMeasures>): 'price' | 'fills' | 'pl' | undefined {
  // A hair of rounding (prices are decimals read as floats) is not a drift.
  if (t.price !== undefined && m.pricePips !== undefined && m.pricePips > t.price + 1e-9) return 'price';
  if (t.fills !== undefined && m.missed !== undefined && m.missed > t.fills) return 'fills';
  if (t.pl !== undefined && m.plGap !== undefined && m.plGap > t.pl + 1e-9) return 'pl';
  return undefined;
}

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
  if (f.what === 'price') return `${f.clientID} ${f.instrument}: live ${f.live} sim ${f.sim} (${f.pips!.toFixed(1)} pips)`;
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

  constructor(readonly tolerances: DriftTolerances, readonly pip: (instrument: string) => number, readonly onBreach: (b: DriftBreach) => void = () => undefined) {}

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
      for (const [cid, t] of this.#waiting) if (at - t > this.tolerances.waitMs) this.#miss(cid, `nothing ${Math.round((at - t) / 1000)} s after it`);
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
    const x = t as { type: string; id: string; orderID?: string; price?: string; time: string; instrument?: string; pl?: string; clientExtensions?: { id?: string } };
    const cid = x.clientExtensions?.id;
    if (x.type.endsWith('_REJECT')) {
      if (cid === undefined) return;
      // The runner's own risk gate (its rejects carry synthetic IDs, `<id>.<n>`): not the account's doing.
      if (live && x.id.includes('.')) {
        this.#excluded.add(cid);
        this.#waiting.delete(cid);
        return;
      }
      this.#outcome(side, cid, { outcome: 'REJECTED', time: parseTime(x.time), instrument: x.instrument ?? '' });
      return;
    }
    if (x.type.endsWith('_ORDER')) {
      if (cid !== undefined) side.byOrder.set(x.id, { cid, instrument: x.instrument ?? '' });
      return;
    }
    if (x.type === 'ORDER_FILL') {
      const owner = x.orderID !== undefined ? side.byOrder.get(x.orderID) : undefined;
      if (owner !== undefined) this.#outcome(side, owner.cid, { outcome: 'FILLED', price: x.price ?? '', time: parseTime(x.time), instrument: x.instrument ?? owner.instrument, pl: Number(x.pl ?? 0) });
      return;
    }
    if (x.type === 'ORDER_CANCEL') {
      const owner = x.orderID !== undefined ? side.byOrder.get(x.orderID) : undefined;
      if (owner !== undefined) this.#outcome(side, owner.cid, { outcome: 'CANCELLED', time: parseTime(x.time), instrument: owner.instrument });
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
      const f: DriftedFill = { clientID: cid, instrument: l.instrument || s.instrument, what: 'price', live: l.price!, sim: s.price!, pips };
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
    const f: DriftedFill = { clientID: cid, instrument: (l ?? s)?.instrument ?? '', what: 'missed', filled: filledLive ? 'live' : 'sim', ...(l?.price !== undefined ? { live: l.price } : {}), ...(s?.price !== undefined ? { sim: s.price } : {}), other: `${filledLive ? 'the simulator' : 'the account'}: ${other}` };
    this.drifted.push(f);
    this.#addPl(Math.max(this.now, (l ?? s)?.time ?? this.now), filledLive ? (l?.pl ?? 0) : -(s?.pl ?? 0), cid);
    if (breachedTolerance(this.tolerances, { missed: this.missed }) === 'fills') {
      this.#breach('fills', this.tolerances.fills!, this.missed, [...this.#missedIds], `${this.missed} fill(s) on one side only: ${this.drifted.filter((d) => d.what === 'missed').map(describeDriftedFill).join('; ')}`);
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
      this.#breach('pl', this.tolerances.pl!, gap, names, `realized P/L over the last ${formatDuration(this.tolerances.windowMs)}, account less simulator, intent by intent: ${this.#plSum.toFixed(2)} (${each.join(', ')}${this.#pl.length > 10 ? `; ${this.#pl.length - 10} earlier` : ''})`);
    }
  }

  #breach(tolerance: 'price' | 'fills' | 'pl', limit: number, value: number, fills: readonly string[], detail: string): void {
    if (this.breach !== undefined) return;
    const v = tolerance === 'fills' ? String(value) : value.toFixed(tolerance === 'price' ? 1 : 2);
    const why = `drift guard: ${tolerance} ${v} past --max-drift ${tolerance}=${limit}: ${detail}`;
    this.breach = { tolerance, limit, value, fills, at: this.now, why };
    this.onBreach(this.breach);
  }
}
