import { Decimal } from '../decimal.ts';

/**
 * Request bodies as OANDA reads them. v20 defines `DecimalNumber`, `PriceValue` and `AccountUnits`
 * as decimal strings, but the service also takes them as JSON numbers (a recorded request to OANDA,
 * `PUT …/trades/{id}/close` with `{"units": 100}`, got its 200), and its users write numbers for units
 * all the time. The sandbox takes both and answers with strings, as OANDA does.
 */

/** The request fields v20 types as DecimalNumber, PriceValue or AccountUnits (wherever they appear). */
const DECIMAL_FIELDS: ReadonlySet<string> = new Set([
  'units',
  'price',
  'priceBound',
  'distance',
  'longUnits',
  'shortUnits',
  'marginRate',
  'amount',
]);

/**
 * A finite JSON number as the decimal string it denotes: `100` → "100", `1.1` → "1.1", `1e-7` →
 * "0.0000001" (never exponent notation, which no v20 decimal has). The shortest string that reads
 * back as the same double, so `1.1` is "1.1", not the binary expansion.
 */
export function decimalText(n: number): string {
  const s = String(n);
  if (!s.includes('e')) return s;
  return new Decimal(s).toFixed();
}

/**
 * A copy of a request body in which every decimal field (`units`, `price`, `priceBound`,
 * `distance`, `longUnits`, `shortUnits`, `marginRate`, `amount`) given as a finite JSON number
 * is its decimal string, at any depth (on-fill details, dependent orders). Everything else is kept
 * as it is, so a wrong value still reaches the validator and is refused there, with its field named.
 * Returns `v` itself when it holds no number in such a field.
 */
export function decimalsAsStrings<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = decimalsAsStrings(v[i] as unknown);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return (out ?? v) as T;
  }
  const o = v as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  // for-in with an own-property check: Object.keys' order without its array (every order request
  // of a backtest passes here, with its on-fill details and client extensions).
  for (const k in o) {
    if (!hasOwn.call(o, k)) continue;
    const x = o[k];
    let y: unknown = x;
    if (typeof x === 'number') {
      if (DECIMAL_FIELDS.has(k) && Number.isFinite(x)) y = decimalText(x);
    } else if (typeof x === 'object' && x !== null) {
      y = decimalsAsStrings(x);
    }
    if (y !== x) {
      out ??= copyOwn(o);
      out[k] = y;
    }
  }
  return (out ?? v) as T;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** A plain copy of `o`'s own enumerable fields, in order (define, never assign: `__proto__` stays data). */
function copyOwn(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o))
    Object.defineProperty(out, k, { value: o[k], enumerable: true, writable: true, configurable: true });
  return out;
}
