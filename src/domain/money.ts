/**
 * Exact money for the ledger: account amounts as integers of 1/10,000 of the currency unit, the
 * resolution of v20's AccountUnits ("102107.4442"). Sums and differences of such integers are exact
 * in a JS number up to ±2^53 (about ±900 billion currency units), which every operation checks.
 *
 * Products with a conversion factor go through BigInt: `convert` multiplies an exact quote-currency
 * amount by the factor's decimal digits and rounds half away from zero to 4 places, so every P/L and
 * cost is the exact decimal result rounded once, as v20 reports it. This keeps fills at a few
 * microseconds; decimal.js is used where a computation needs arbitrary precision and is rare
 * (daily financing).
 */
export type Amount = number;

/** Thrown when an amount is not a decimal with at most 4 places, or leaves the exact range. */
export class MoneyError extends Error {
  readonly code = 'MONEY' as const;
}

const MAX = Number.MAX_SAFE_INTEGER;

function safe(x: number): number {
  if (!(x <= MAX && x >= -MAX)) throw new MoneyError(`amount out of the exact range: ${x}`);
  return x;
}

/** Parses a v20 account amount ("-13.7000", "100000") into 1/10,000 units. */
export function amount(s: string): Amount {
  if (s === '0.0000') return 0;
  const n = s.length;
  let i = 0;
  let neg = false;
  const c0 = s.charCodeAt(0);
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i = 1;
  }
  let int = 0;
  let digits = 0;
  for (; i < n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d === -2) break; // '.'
    if (d < 0 || d > 9) throw new MoneyError(`not a decimal amount: "${s}"`);
    int = int * 10 + d;
    digits++;
  }
  let frac = 0;
  let places = 0;
  if (i < n) {
    for (i++; i < n; i++) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) throw new MoneyError(`not a decimal amount: "${s}"`);
      if (places < 4) {
        frac = frac * 10 + d;
        places++;
      } else if (d !== 0) throw new MoneyError(`more than 4 decimal places: "${s}"`);
    }
    if (places === 0 && digits === 0) throw new MoneyError(`not a decimal amount: "${s}"`);
  }
  if (digits === 0 && places === 0) throw new MoneyError(`not a decimal amount: "${s}"`);
  for (; places < 4; places++) frac *= 10;
  const v = int * 10_000 + frac;
  return safe(neg ? -v : v);
}

/** Formats 1/10,000 units as v20 does: exactly 4 decimals. */
export function formatAmount(x: Amount): string {
  if (x === 0) return '0.0000'; // the most common amount on a fill (commission, fees, P/L of an opening)
  const neg = x < 0;
  const a = Math.abs(x);
  const int = Math.floor(a / 10_000);
  const frac = a - int * 10_000;
  const f = frac >= 1000 ? `${frac}` : frac >= 100 ? `0${frac}` : frac >= 10 ? `00${frac}` : `000${frac}`;
  return neg && a !== 0 ? `-${int}.${f}` : `${int}.${f}`;
}

/** The amount as a plain number of currency units (for reports and decisions, not for the ledger). */
export function toUnits(x: Amount): number {
  return x / 10_000;
}

export function add(a: Amount, b: Amount): Amount {
  return safe(a + b);
}

/** A decimal string as an exact integer mantissa and its number of decimal places. */
export function scaled(s: string): { readonly int: bigint; readonly places: number } {
  const neg = s.charCodeAt(0) === 45;
  const body = neg || s.charCodeAt(0) === 43 ? s.slice(1) : s;
  const dot = body.indexOf('.');
  const digits = dot < 0 ? body : body.slice(0, dot) + body.slice(dot + 1);
  if (!/^\d+$/.test(digits)) throw new MoneyError(`not a decimal: "${s}"`);
  const int = BigInt(digits);
  return { int: neg ? -int : int, places: dot < 0 ? 0 : body.length - dot - 1 };
}

const POW10: bigint[] = Array.from({ length: 40 }, (_, i) => 10n ** BigInt(i));

/** Rounds `int × 10^-places` to 4 places, half away from zero, as 1/10,000 units. */
export function roundTo4(int: bigint, places: number): Amount {
  if (places <= 4) return safe(Number(int * POW10[4 - places]!));
  const div = POW10[places - 4]!;
  const neg = int < 0n;
  const a = neg ? -int : int;
  let q = a / div;
  if ((a % div) * 2n >= div) q += 1n;
  return safe(Number(neg ? -q : q));
}

/**
 * Converts an exact quote-currency amount (`int × 10^-places`) to the home currency with a
 * conversion factor given as a decimal string, rounding once to 4 places.
 */
export function convert(int: bigint, places: number, factor: string): Amount {
  if (factor === '1') return roundTo4(int, places);
  const f = scaled(factor);
  return roundTo4(int * f.int, places + f.places);
}

// ---------------------------------------------------------------------------------------------
// Number fast path. The fill path converts products of small integers (price ticks × units) many
// thousand times per run; BigInt costs ~10× more than number arithmetic there. Every function
// below gives exactly the BigInt result (pinned by property tests in money.test.ts) and falls back
// to the BigInt path whenever an intermediate value could leave the safe-integer range.

/** Powers of ten that are exact doubles (10^22 is the largest). */
const POW10N: number[] = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * Whether `p`, a double computed as the product of two integers, is that product exactly: when the
 * true product has magnitude 2^53 or more, its rounding does too (rounding is monotonic and 2^53 is
 * a double), so a rounded result within ±(2^53 - 1) means the true product was an integer below
 * 2^53, which a double holds exactly, and the rounding changed nothing.
 */
function exactProduct(p: number): boolean {
  return p <= MAX && p >= -MAX;
}

/**
 * `int × 10^-places` rounded to 4 places, half away from zero, for a safe integer `int`: as
 * `roundTo4(BigInt(int), places)`. Exact: `%` of doubles is exact, `a - r` is a multiple of `div`
 * below 2^53, and dividing it by `div` (an exact power of ten) gives an integer, so no step rounds.
 */
function roundTo4Safe(int: number, places: number): Amount {
  if (places <= 4) {
    if (4 - places >= POW10N.length) return roundTo4(BigInt(int), places);
    // Exact unless beyond ±MAX (see exactProduct), where `safe` throws as the BigInt path does.
    // `+ 0` turns a negative zero (0 × -n) into the +0 the BigInt path gives.
    return safe(int * POW10N[4 - places]! + 0);
  }
  if (places - 4 >= POW10N.length) return roundTo4(BigInt(int), places);
  const div = POW10N[places - 4]!;
  const neg = int < 0;
  const a = neg ? -int : int;
  const r = a % div;
  let q = (a - r) / div;
  if (r * 2 >= div) q += 1; // r * 2 < 2^54 and even: exact
  // No negative zero: the BigInt path gives +0.
  return neg && q !== 0 ? -q : q;
}

/** The last two factor strings parsed by `convertProduct` (a fill's gain and loss factors), as mantissa and places. */
const factorText = ['', ''];
const factorInt = [0, 0];
const factorPlaces = [0, 0];
let factorNext = 0;

/**
 * The cache slot holding a plain decimal factor ("1.0842", "0.0091234") parsed into a safe-integer
 * mantissa and its places, or -1 when it has a sign, an exponent, or more digits than a safe
 * integer holds (the caller then takes the BigInt path).
 */
function factorSlot(s: string): number {
  if (s === factorText[0]) return 0;
  if (s === factorText[1]) return 1;
  let int = 0;
  let places = -1;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46 && places < 0) {
      places = 0;
      continue;
    }
    const d = c - 48;
    if (d < 0 || d > 9) return -1;
    int = int * 10 + d;
    if (int !== 0 && ++digits > 15) return -1; // at most 15 significant digits: below 2^53, exact
    if (places >= 0) places++;
  }
  if (s.length === 0 || places === 0) return -1;
  const slot = factorNext;
  factorNext = 1 - slot;
  factorText[slot] = s;
  factorInt[slot] = int;
  factorPlaces[slot] = places < 0 ? 0 : places;
  return slot;
}

/**
 * `convert` of the product `a × b × 10^-places`, for safe integers `a` and `b` (e.g. price ticks
 * and units): exactly `convert(BigInt(a) * BigInt(b), places, factor)`, in plain numbers whenever
 * every intermediate product stays a safe integer, through BigInt otherwise.
 */
export function convertProduct(a: number, b: number, places: number, factor: string): Amount {
  if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b))
    throw new MoneyError(`not safe integers: ${a} × ${b}`);
  const p = a * b;
  if (exactProduct(p)) {
    if (factor === '1') return roundTo4Safe(p, places);
    const slot = factorSlot(factor);
    if (slot >= 0) {
      const q = p * factorInt[slot]!;
      if (exactProduct(q)) return roundTo4Safe(q, places + factorPlaces[slot]!);
    }
  }
  return convert(BigInt(a) * BigInt(b), places, factor);
}
