import { readFileSync } from 'node:fs';

/**
 * Latency: the time between a decision and its order reaching the (simulated) server. An order
 * acts only on prices from its arrival on (`activeFrom` = decision time + delay): a market order
 * fills at the first price at or after its arrival, a resting order triggers only on later prices.
 * Orders the server creates itself (on-fill TP/SL, closeouts) have no delay. v20's own latency is
 * not part of its prices, so the default is `none`.
 */
export interface LatencyModel {
  /** How the model is named in the config, the report and config.json: `none`, `fixed:<ms>`, `file:<path>`. */
  readonly name: string;
  /** The delay of the next order, in ms (>= 0). */
  next(): number;
}

/** No delay: an order reaches the server at its decision. */
export const NO_LATENCY: LatencyModel = { name: 'none', next: () => 0 };

/** The same delay for every order. */
export function fixedLatency(ms: number): LatencyModel {
  if (!(ms >= 0 && Number.isFinite(ms)))
    throw new RangeError(`latency fixed:<ms> needs milliseconds >= 0, got ${ms}`);
  return { name: `fixed:${ms}`, next: () => ms };
}

/**
 * Delays drawn from recorded values, in their recorded order and again from the first when they run
 * out: a run is reproducible, and its delays have the recording's distribution.
 */
export function recordedLatency(values: readonly number[], name: string): LatencyModel {
  if (values.length === 0) throw new RangeError(`latency ${name}: no values`);
  let i = 0;
  return {
    name,
    next: () => {
      const v = values[i]!;
      i = i + 1 === values.length ? 0 : i + 1;
      return v;
    },
  };
}

/**
 * Reads recorded delays: numbers of milliseconds >= 0, separated by whitespace, commas or new lines
 * (a column of a CSV export works; `#` starts a comment). Errors name the file and the line.
 */
export function readLatencyFile(path: string): number[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new RangeError(
      `latency file ${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)}); give a file of recorded delays in ms, one per line`,
    );
  }
  const out: number[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.replace(/#.*/, '');
    for (const word of line.split(/[\s,;]+/)) {
      if (word === '') continue;
      const v = Number(word);
      if (!(v >= 0 && Number.isFinite(v)))
        throw new RangeError(`latency file ${path} line ${n + 1}: "${word}" is not a delay in ms >= 0`);
      out.push(v);
    }
  }
  if (out.length === 0)
    throw new RangeError(`latency file ${path}: no delays in it; give recorded delays in ms, one per line`);
  return out;
}

/** A latency model from its name (`none`, `fixed:<ms>`, `file:<path>`); RangeError saying what is expected otherwise. */
export function parseLatency(spec: string): LatencyModel {
  if (spec === 'none') return NO_LATENCY;
  if (spec.startsWith('fixed:') && /^\d+(\.\d+)?$/.test(spec.slice(6)))
    return fixedLatency(Number(spec.slice(6)));
  if (spec.startsWith('file:') && spec.length > 5)
    return recordedLatency(readLatencyFile(spec.slice(5)), spec);
  throw new RangeError(
    `latency must be none, fixed:<ms> (e.g. fixed:250) or file:<path of recorded delays in ms>, got "${spec}"`,
  );
}
