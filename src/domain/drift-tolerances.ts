// The drift guard's tolerances as values: what `--max-drift` and the config's `drift` section hold, read,
// checked and written back, and the rule that says which one a set of measures is past. Values with no
// I/O, so the config reads them without loading the live runner (src/runner/recording/drift.ts is the guard).

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
    if (ms === undefined)
      throw new DriftSpecError(
        `${where}${joiner}${key} must be a duration like 30s, 15m, 1h or 1d (got ${JSON.stringify(v)})`,
      );
    return ms;
  }
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  const what =
    key === 'price'
      ? 'a number of pips >= 0, e.g. price=1'
      : key === 'fills'
        ? 'a whole number of fills >= 0, e.g. fills=0 (the first missed fill halts)'
        : 'an amount of the account currency >= 0, e.g. pl=50';
  if (!Number.isFinite(n) || n < 0 || (key === 'fills' && !Number.isInteger(n)))
    throw new DriftSpecError(`${where}${joiner}${key} must be ${what} (got ${JSON.stringify(v)})`);
  return n;
}

type Part = { -readonly [K in keyof DriftTolerances]?: DriftTolerances[K] };

/** The keys given, checked (`joiner` between `where` and a key: ': ' for a flag, '.' for a config section). */
function partOf(fields: Readonly<Record<string, unknown>>, where: string, joiner: string): Part {
  const out: Part = {};
  for (const [k, v] of Object.entries(fields)) {
    if (!(DRIFT_KEYS as readonly string[]).includes(k))
      throw new DriftSpecError(
        `${where}: ${JSON.stringify(k)} is not a drift tolerance; known: ${DRIFT_KEYS.join(', ')} (e.g. price=1,fills=0,pl=50,window=1h)`,
      );
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
    throw new DriftSpecError(
      `${where}: no tolerance given; say at least one of price=<pips>, fills=<count>, pl=<amount> (window and wait only shape them)`,
    );
  }
  return out;
}

/**
 * The tolerances from key/value pairs, checked: a config file's `drift` section (`where` the file
 * and `drift`, `joiner` '.': `my.json: drift.price must be …`), or the flag's parsed pairs.
 */
export function driftOf(
  fields: Readonly<Record<string, unknown>>,
  where: string,
  joiner = ': ',
): DriftTolerances {
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
        if (!Number.isFinite(Number(p)))
          throw new DriftSpecError(
            `--max-drift: ${JSON.stringify(p)} is neither key=value nor a number of pips; e.g. --max-drift 1, or --max-drift price=1,fills=0,pl=50,window=1h`,
          );
        fields.price = p;
      } else fields[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
    }
  }
  return complete({ ...base, ...partOf(fields, '--max-drift', ': ') }, '--max-drift');
}

/** A duration as the flag writes it (`1h`, `90s`). */
export function formatDuration(ms: number): string {
  return ms % 86_400_000 === 0
    ? `${ms / 86_400_000}d`
    : ms % 3_600_000 === 0
      ? `${ms / 3_600_000}h`
      : ms % 60_000 === 0
        ? `${ms / 60_000}m`
        : ms % 1000 === 0
          ? `${ms / 1000}s`
          : `${ms}ms`;
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
export function breachedTolerance(
  t: DriftTolerances,
  m: Partial<DriftMeasures>,
): 'price' | 'fills' | 'pl' | undefined {
  // A hair of rounding (prices are decimals read as floats) is not a drift.
  if (t.price !== undefined && m.pricePips !== undefined && m.pricePips > t.price + 1e-9) return 'price';
  if (t.fills !== undefined && m.missed !== undefined && m.missed > t.fills) return 'fills';
  if (t.pl !== undefined && m.plGap !== undefined && m.plGap > t.pl + 1e-9) return 'pl';
  return undefined;
}
