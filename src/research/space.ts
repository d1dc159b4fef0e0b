import type { ParamValue, Params } from '../strategy/api.ts';
import { parseConstraint, type Constraint } from './constraint.ts';

/** A parameter space that cannot be used: names the flag and says how to fix it. */
export class SpaceError extends Error {
  readonly code = 'SPACE' as const;
  constructor(message: string) {
    super(message);
    this.name = 'SpaceError';
  }
}

/** One swept param: its name and its values, in order (ordered dimensions are sorted ascending). */
export interface Dimension {
  readonly name: string;
  readonly values: readonly ParamValue[];
  /** Numeric values in ascending order: neighbours are similar (the adaptive search uses this). */
  readonly ordered: boolean;
}

/** Decimal places of a number as written (`0.0005` → 4), for clean range values. */
const places = (x: number): number => {
  const s = String(x);
  const e = /e-(\d+)$/.exec(s);
  if (e) return Number(e[1]) + (s.split('e')[0]!.split('.')[1]?.length ?? 0);
  return s.split('.')[1]?.length ?? 0;
};

function coerce(name: string, raw: string, d: ParamValue, spec: string): ParamValue {
  if (typeof d === 'number') {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n))
      throw new SpaceError(`--param '${spec}': '${raw}' is not a number (param '${name}' defaults to ${d})`);
    return n;
  }
  if (typeof d === 'boolean') {
    if (raw !== 'true' && raw !== 'false')
      throw new SpaceError(
        `--param '${spec}': '${raw}' must be true or false (param '${name}' defaults to ${d})`,
      );
    return raw === 'true';
  }
  return raw;
}

/**
 * Parses one `--param` of a sweep, typed by the strategy's default for that param:
 * - `fast=5:50:5`: a range, from 5 to 50 inclusive in steps of 5 (numbers only);
 * - `slow=20,30,50,100`: a list (numbers, strings or true/false);
 * - `units=2000`: one value (the param is fixed for the sweep).
 */
export function parseDimension(spec: string, defaults: Params): Dimension {
  const eq = spec.indexOf('=');
  if (eq <= 0)
    throw new SpaceError(`--param '${spec}' must look like name=from:to:step, name=a,b,c or name=value`);
  const name = spec.slice(0, eq).trim();
  const body = spec.slice(eq + 1).trim();
  if (!(name in defaults))
    throw new SpaceError(
      `--param '${spec}': unknown param '${name}'; the strategy declares: ${Object.keys(defaults).join(', ') || '(none)'}`,
    );
  const d = defaults[name]!;
  let values: ParamValue[];
  if (body.includes(':')) {
    if (typeof d !== 'number')
      throw new SpaceError(
        `--param '${spec}': a range needs a number param ('${name}' defaults to ${JSON.stringify(d)}); give a list: ${name}=a,b,c`,
      );
    const parts = body.split(':');
    if (parts.length !== 3)
      throw new SpaceError(`--param '${spec}': a range is from:to:step, e.g. ${name}=5:50:5`);
    const [lo, hi, step] = parts.map((x) => coerce(name, x, d, spec) as number) as [number, number, number];
    if (!(step > 0)) throw new SpaceError(`--param '${spec}': the step must be greater than 0`);
    if (hi < lo) throw new SpaceError(`--param '${spec}': the range ends (${hi}) before it starts (${lo})`);
    const n = Math.floor((hi - lo) / step + 1e-9) + 1;
    if (n > 100_000) throw new SpaceError(`--param '${spec}': ${n} values; use a larger step`);
    const dp = Math.max(places(lo), places(step));
    const f = 10 ** dp;
    values = Array.from({ length: n }, (_, i) => Math.round((lo + i * step) * f) / f);
  } else {
    values = body.split(',').map((x) => coerce(name, x.trim(), d, spec));
  }
  const unique = [...new Set(values)];
  if (unique.length !== values.length) throw new SpaceError(`--param '${spec}': a value is listed twice`);
  const ordered = typeof d === 'number';
  if (ordered) unique.sort((a, b) => (a as number) - (b as number));
  return { name, values: unique, ordered };
}

/**
 * A finite parameter space: the product of the dimensions, minus the points a constraint rejects.
 * Points are indexed in mixed radix (the first dimension varies slowest), which is the grid order.
 */
export class Space {
  readonly size: number;
  constructor(
    readonly dims: readonly Dimension[],
    readonly constraints: readonly Constraint[],
    /** The strategy's other params (fixed in the sweep). */
    readonly base: Params,
  ) {
    const names = new Set<string>();
    for (const d of dims) {
      if (names.has(d.name)) throw new SpaceError(`--param ${d.name} is given twice`);
      names.add(d.name);
    }
    this.size = dims.reduce((n, d) => n * d.values.length, 1);
  }

  /** The digits of index `i` (one value index per dimension). */
  digits(i: number): number[] {
    const out = new Array<number>(this.dims.length);
    for (let k = this.dims.length - 1; k >= 0; k--) {
      const n = this.dims[k]!.values.length;
      out[k] = i % n;
      i = Math.floor(i / n);
    }
    return out;
  }

  index(digits: readonly number[]): number {
    let i = 0;
    for (let k = 0; k < this.dims.length; k++) i = i * this.dims[k]!.values.length + digits[k]!;
    return i;
  }

  /** The full params (fixed ones included) of point `i`. */
  params(i: number): Params {
    const out: Record<string, ParamValue> = { ...this.base };
    const dg = this.digits(i);
    for (let k = 0; k < this.dims.length; k++) out[this.dims[k]!.name] = this.dims[k]!.values[dg[k]!]!;
    return out;
  }

  /** Only the swept params of point `i`, in dimension order. */
  swept(i: number): Record<string, ParamValue> {
    const out: Record<string, ParamValue> = {};
    const dg = this.digits(i);
    for (let k = 0; k < this.dims.length; k++) out[this.dims[k]!.name] = this.dims[k]!.values[dg[k]!]!;
    return out;
  }

  valid(i: number): boolean {
    if (this.constraints.length === 0) return true;
    const p = this.params(i);
    return this.constraints.every((c) => c.test(p));
  }

  /** Every valid point, in grid order. */
  validPoints(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.size; i++) if (this.valid(i)) out.push(i);
    return out;
  }
}

/** Builds a space from `--param` and `--constraint` strings, typed by the strategy's defaults. */
export function buildSpace(
  defaults: Params,
  params: readonly string[],
  constraints: readonly string[],
): Space {
  const dims = params.map((p) => parseDimension(p, defaults));
  const base: Record<string, ParamValue> = { ...defaults };
  const swept = dims.filter((d) => d.values.length > 1);
  for (const d of dims) if (d.values.length === 1) base[d.name] = d.values[0]!;
  if (swept.length === 0)
    throw new SpaceError(
      'nothing to sweep: give at least one --param with several values, e.g. --param fast=5:50:5',
    );
  const known = Object.keys(defaults);
  const space = new Space(
    swept,
    constraints.map((c) => parseConstraint(c, known)),
    base,
  );
  if (space.size > 10_000_000)
    throw new SpaceError(`the space has ${space.size} points; narrow the ranges (at most 10,000,000)`);
  return space;
}
