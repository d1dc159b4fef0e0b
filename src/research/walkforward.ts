import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import type { ParamValue } from '../strategy/api.ts';
import type { BacktestConfig } from '../app/config.ts';
import type { TrialMetrics } from './metrics.ts';
import { objectiveValue } from './metrics.ts';
import { sharpePerPeriod } from './overfit.ts';
import type { TrialRunner } from './pool.ts';
import {
  canonical,
  runSweep,
  sha256,
  sweepHashes,
  trialId,
  type SweepOptions,
  type SweepResult,
} from './sweep.ts';

/** A walk-forward setting that cannot be used. */
export class WalkForwardError extends Error {
  readonly code = 'WALKFORWARD' as const;
}

/** A calendar length: `6mo`, `1mo`, `2w`, `30d`, `1y`. */
export interface Span {
  readonly months?: number;
  readonly days?: number;
}

export function parseSpan(flag: string, s: string): Span {
  const m = /^(\d+)\s*(y|mo|w|d)$/.exec(s.trim());
  if (!m || Number(m[1]) <= 0)
    throw new WalkForwardError(`--${flag} '${s}' must be a length such as 6mo, 1mo, 2w, 30d or 1y`);
  const n = Number(m[1]);
  return m[2] === 'y'
    ? { months: 12 * n }
    : m[2] === 'mo'
      ? { months: n }
      : m[2] === 'w'
        ? { days: 7 * n }
        : { days: n };
}

const add = (t: number, s: Span, times = 1): number =>
  DateTime.fromMillis(t, { zone: 'utc' })
    .plus({ months: (s.months ?? 0) * times, days: (s.days ?? 0) * times })
    .toMillis();

export interface Window {
  readonly index: number;
  readonly trainFrom: number;
  readonly trainTo: number;
  readonly testFrom: number;
  readonly testTo: number;
}

/**
 * The windows of a walk-forward over [from, to): training [from + k·step, … + train) (anchored: from
 * `from` every time), then testing the next `test`; windows whose test would end after `to` are left
 * out, so every out-of-sample period is complete and they follow each other without overlap when
 * step = test.
 */
export function windows(
  from: number,
  to: number,
  train: Span,
  test: Span,
  step: Span,
  anchored: boolean,
): Window[] {
  const out: Window[] = [];
  for (let k = 0; ; k++) {
    const trainTo = add(add(from, train), step, k);
    const testTo = add(trainTo, test);
    if (testTo > to) break;
    out.push({
      index: k,
      trainFrom: anchored ? from : add(from, step, k),
      trainTo,
      testFrom: trainTo,
      testTo,
    });
    if (k > 10_000) throw new WalkForwardError('more than 10,000 windows: use a larger --step');
  }
  return out;
}

export interface WindowResult {
  readonly window: Window;
  readonly params: Readonly<Record<string, ParamValue>>;
  readonly inSample: TrialMetrics;
  readonly outOfSample: TrialMetrics | null;
  readonly isObjective: number;
  readonly oosObjective: number | null;
  /** Annualised OOS return / annualised IS return (Pardo): above ~0.5 the edge carries over. Null where it means nothing (`efficiencyWhyNot`). */
  readonly efficiency: number | null;
  /** Why `efficiency` is null (an in-sample CAGR that is not a gain, or a CAGR missing). */
  readonly efficiencyWhyNot?: string;
  readonly error?: string;
  readonly sweepDir: string;
  readonly dsr: number | null;
  readonly pbo: number | null;
  /** Daily out-of-sample returns this window adds to the stitched curve (where it starts and ends on it). */
  readonly oosDays?: number;
}

/** A point of the stitched out-of-sample curve. */
export interface OosPoint {
  /** RFC 3339 (UTC, milliseconds), as equity.csv writes times. */
  readonly time: string;
  readonly nav: number;
  /** The window (1-based) whose test period the point belongs to. */
  readonly window: number;
}

/**
 * Stitches test windows' daily NAV returns into one curve starting at 1, by date. A window's
 * return k runs from `times[k]` to `times[k + 1]`; a point at or before the curve's last time (test
 * periods that overlap, when --step is shorter than --test) is left out with its return, so every
 * day counts once, from the earliest window that has it. Returns the curve, the returns it
 * compounds, and how many each window added.
 */
export function stitchOos(
  parts: readonly { window: number; returns: readonly number[]; times: readonly number[] }[],
): { points: OosPoint[]; returns: number[]; days: number[] } {
  const points: OosPoint[] = [];
  const returns: number[] = [];
  const days: number[] = [];
  let nav = 1;
  let last = -Infinity;
  for (const p of parts) {
    if (p.times.length !== p.returns.length + 1)
      throw new WalkForwardError(
        `window ${p.window}: the out-of-sample run gave ${p.returns.length} daily returns but ${p.times.length} times (expected one more): the worker runs another fxflow version`,
      );
    let n = 0;
    if (points.length === 0 && p.times.length > 0) {
      points.push({ time: iso(p.times[0]!), nav, window: p.window });
      last = p.times[0]!;
    }
    for (let k = 0; k < p.returns.length; k++) {
      const at = p.times[k + 1]!;
      if (at <= last) continue;
      nav *= 1 + p.returns[k]!;
      points.push({ time: iso(at), nav, window: p.window });
      returns.push(p.returns[k]!);
      last = at;
      n++;
    }
    days.push(n);
  }
  return { points, returns, days };
}

export interface WalkForwardResult {
  readonly dir: string;
  /**
   * What identifies the walk-forward (a hash of the strategy file, config, data, space, search and
   * windows; absent in a walkforward.json of an older fxflow) and its settings in words: a rerun
   * into the same folder compares them (finishedWalkForward).
   */
  readonly id?: string;
  readonly settings?: WalkForwardSettings;
  readonly windows: readonly WindowResult[];
  /**
   * Stitched out-of-sample NAV (compounded daily returns of every test window, in order), starting at
   * 1, each point at the RFC 3339 time it was marked (the equity.csv convention: a day's last mark).
   */
  readonly oosEquity: readonly OosPoint[];
  readonly oosReturnPct: number;
  /** Sharpe of the stitched out-of-sample daily returns, annualised with √252. */
  readonly oosSharpe: number | null;
  /** Mean annualised OOS return / mean annualised IS return over the windows; null where it means nothing (`efficiencyWhyNot`). */
  readonly efficiency: number | null;
  /** Why `efficiency` is null: the mean in-sample CAGR is not a gain, or no window has both CAGRs. */
  readonly efficiencyWhyNot?: string;
  /** Per swept param: the values chosen, how many distinct, the share of the most chosen, and for numbers sd/mean. */
  readonly stability: Readonly<
    Record<string, { values: ParamValue[]; distinct: number; modeShare: number; cv: number | null }>
  >;
}

const iso = (t: number): string => new Date(t).toISOString();

/**
 * Walk-forward efficiency (after Pardo): the annualised out-of-sample return over the annualised
 * in-sample return, how much of an in-sample gain carries over. It means something only when the
 * in-sample return is a gain: over an in-sample loss (or zero) the ratio's sign and size say
 * nothing (-15 for a loss of 1% followed by a gain of 15%), so it is not given and `whyNot` says
 * why. A negative efficiency over an in-sample gain is meaningful: the edge reversed.
 */
export function walkForwardEfficiency(
  isCagrPct: number | null | undefined,
  oosCagrPct: number | null | undefined,
): { value: number | null; whyNot?: string } {
  if (isCagrPct === null || isCagrPct === undefined || !Number.isFinite(isCagrPct))
    return { value: null, whyNot: 'no in-sample CAGR' };
  if (oosCagrPct === null || oosCagrPct === undefined || !Number.isFinite(oosCagrPct))
    return { value: null, whyNot: 'no out-of-sample CAGR' };
  if (isCagrPct <= 0)
    return {
      value: null,
      whyNot: `in-sample CAGR ${isCagrPct.toFixed(2)}% is not a gain: there is no edge to carry over, so OOS / IS means nothing`,
    };
  return { value: oosCagrPct / isCagrPct };
}

/** A walk-forward's settings as the user gave them, saved in walkforward.json to say what differs on a rerun. */
export interface WalkForwardSettings {
  readonly strategy: string;
  readonly from: string;
  readonly to: string;
  readonly train: string;
  readonly test: string;
  readonly step: string;
  readonly anchored: boolean;
  readonly params: unknown;
  readonly search: string;
  readonly objective: string;
}

/**
 * What a walk-forward folder already holds before a run into it: null when it holds no finished
 * walk-forward (none yet, or one killed before its end: the run resumes it window by window); the
 * saved result when it finished with the same `id` (the rerun has nothing to do); otherwise a
 * WalkForwardError saying what differs and how to run the new one (its files would mix with the
 * old ones: window folders of other periods, trials of another space).
 */
export function finishedWalkForward(
  dir: string,
  id: string,
  settings: WalkForwardSettings,
): WalkForwardResult | null {
  const file = join(dir, 'walkforward.json');
  if (!existsSync(file)) return null;
  let prior: WalkForwardResult;
  try {
    prior = JSON.parse(readFileSync(file, 'utf8')) as WalkForwardResult;
  } catch (e) {
    throw new WalkForwardError(
      `${file} is not a walk-forward result (${(e as Error).message}): give another --out folder, or delete ${dir} to run this walk-forward there`,
    );
  }
  if (prior.id === id) return prior;
  const was = prior.settings;
  const what = was
    ? (Object.keys(settings) as (keyof WalkForwardSettings)[])
        .filter((k) => JSON.stringify(was[k]) !== JSON.stringify(settings[k]))
        .map((k) => `${k} ${JSON.stringify(was[k])} there, ${JSON.stringify(settings[k])} now`)
    : [];
  const differs = !was
    ? 'made by an older fxflow, which did not record its settings'
    : what.length > 0
      ? `with other settings (${what.join('; ')})`
      : 'with another strategy file, configuration or data (the same flags)';
  throw new WalkForwardError(
    `${dir} holds a finished walk-forward ${differs}; running this one into it would mix the two. Give another --out folder (without --out, each walk-forward gets its own folder under runs/walkforward), or delete ${dir} to run this one there`,
  );
}

/** Window `index`'s sweep folder (window-01, window-02, …). */
export const windowDir = (dir: string, index: number): string =>
  join(dir, `window-${String(index + 1).padStart(2, '0')}`);

/**
 * Optimises each window's training period with a sweep (each window a sweep folder, so a killed
 * walk-forward resumes window by window), runs the chosen params on the next test period, and
 * stitches the out-of-sample results.
 */
export async function runWalkForward(
  o: Omit<SweepOptions, 'dir' | 'config' | 'pool' | 'keepPool'> & {
    readonly dir: string;
    readonly config: BacktestConfig;
    readonly windows: readonly Window[];
    readonly pool: Promise<TrialRunner>;
    readonly onWindow?: (w: Window) => void;
    /** Saved in walkforward.json: what a rerun into the folder compares (finishedWalkForward). */
    readonly id?: string;
    readonly settings?: WalkForwardSettings;
  },
): Promise<WalkForwardResult> {
  mkdirSync(o.dir, { recursive: true });
  const results: WindowResult[] = [];
  const parts: { window: number; returns: readonly number[]; times: readonly number[] }[] = [];
  const pool = await o.pool;
  const { strategyHash } = sweepHashes(o.strategyFile, o.config, o.portfolio);
  try {
    for (const w of o.windows) {
      o.onWindow?.(w);
      const trainConfig: BacktestConfig = {
        ...o.config,
        run: { ...o.config.run, from: iso(w.trainFrom), to: iso(w.trainTo) },
      };
      const sweepDir = windowDir(o.dir, w.index);
      const s: SweepResult = await runSweep({
        ...o,
        config: trainConfig,
        dir: sweepDir,
        pool: Promise.resolve(pool),
        keepPool: true,
        // Each fold's training trials and its out-of-sample run are assembled as the walk-forward's.
        mode: 'walkforward',
      });
      if (!s.best) {
        results.push({
          window: w,
          params: {},
          inSample: null as unknown as TrialMetrics,
          outOfSample: null,
          isObjective: NaN,
          oosObjective: null,
          efficiency: null,
          error: 'no successful trial in the training period',
          sweepDir,
          dsr: null,
          pbo: null,
        });
        continue;
      }
      const testConfig: BacktestConfig = {
        ...o.config,
        run: { ...o.config.run, from: iso(w.testFrom), to: iso(w.testTo) },
      };
      // Keyed as a sweep's trials are (on a queue, its job id): strategy, params, data, the test period's config.
      const oosParams = { ...o.space.base, ...s.best.params };
      const oosId = trialId(strategyHash, oosParams, o.dataHash, sha256(canonical(testConfig)));
      const done = await pool.run(-1 - w.index, oosParams, testConfig, oosId, 'walkforward');
      let oos: TrialMetrics | null = null;
      let error: string | undefined;
      if (done.ok) {
        oos = done.metrics as TrialMetrics;
        parts.push({ window: w.index + 1, returns: done.returns, times: done.times });
      } else error = done.error;
      const eff = oos ? walkForwardEfficiency(s.best.metrics.cagrPct, oos.cagrPct) : { value: null };
      results.push({
        window: w,
        params: s.best.params,
        inSample: s.best.metrics,
        outOfSample: oos,
        isObjective: s.best.objective,
        oosObjective: oos ? objectiveValue(o.objective, oos, o.objectiveFn) : null,
        efficiency: eff.value,
        ...(eff.whyNot !== undefined ? { efficiencyWhyNot: eff.whyNot } : {}),
        ...(error ? { error } : {}),
        sweepDir,
        dsr: s.overfitting.deflatedSharpe?.dsr ?? null,
        pbo: s.overfitting.pbo?.pbo ?? null,
        oosDays: 0,
      });
    }
  } finally {
    await pool.close();
  }
  const stitched = stitchOos(parts);
  const oosReturns = stitched.returns;
  const equity = stitched.points;
  // Each window's count of days on the stitched curve (overlapping test periods count a day once).
  for (let i = 0, j = 0; i < results.length; i++)
    if (results[i]!.outOfSample) results[i] = { ...results[i]!, oosDays: stitched.days[j++]! };
  const ok = results.filter((r) => r.outOfSample && r.inSample);
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const isC = ok.map((r) => r.inSample.cagrPct).filter((x): x is number => x !== null);
  const oosC = ok.map((r) => r.outOfSample!.cagrPct).filter((x): x is number => x !== null);
  const efficiency =
    isC.length && oosC.length
      ? walkForwardEfficiency(mean(isC), mean(oosC))
      : { value: null, whyNot: 'no window has both an in-sample and an out-of-sample CAGR' };
  const efficiencyWhyNot = efficiency.whyNot?.replace(/^in-sample CAGR/, 'the mean in-sample CAGR');
  const stability: Record<
    string,
    { values: ParamValue[]; distinct: number; modeShare: number; cv: number | null }
  > = {};
  for (const d of o.space.dims) {
    const values = results.filter((r) => d.name in r.params).map((r) => r.params[d.name]!);
    const counts = new Map<ParamValue, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    const nums = values.filter((v): v is number => typeof v === 'number');
    let cv: number | null = null;
    if (nums.length === values.length && nums.length > 1) {
      const m = mean(nums);
      const sd = Math.sqrt(nums.reduce((a, x) => a + (x - m) ** 2, 0) / (nums.length - 1));
      cv = m !== 0 ? Math.round((sd / Math.abs(m)) * 1e4) / 1e4 : null;
    }
    stability[d.name] = {
      values,
      distinct: counts.size,
      modeShare: values.length ? Math.max(...counts.values()) / values.length : 0,
      cv,
    };
  }
  const sr = sharpePerPeriod(oosReturns);
  const result: WalkForwardResult = {
    dir: o.dir,
    ...(o.id !== undefined ? { id: o.id } : {}),
    ...(o.settings !== undefined ? { settings: o.settings } : {}),
    windows: results,
    oosEquity: equity,
    oosReturnPct: Math.round(((equity[equity.length - 1]?.nav ?? 1) - 1) * 1e6) / 1e4,
    oosSharpe: oosReturns.length > 2 ? Math.round(sr * Math.sqrt(252) * 1e4) / 1e4 : null,
    efficiency: efficiency.value === null ? null : Math.round(efficiency.value * 1e4) / 1e4,
    ...(efficiencyWhyNot !== undefined ? { efficiencyWhyNot } : {}),
    stability,
  };
  const names = o.space.dims.map((d) => d.name);
  const csv = [
    [
      'window',
      'trainFrom',
      'trainTo',
      'testFrom',
      'testTo',
      ...names,
      'isObjective',
      'oosObjective',
      'isNetPL',
      'oosNetPL',
      'isCagrPct',
      'oosCagrPct',
      'isSharpe',
      'oosSharpe',
      'isMaxDrawdownPct',
      'oosMaxDrawdownPct',
      'efficiency',
      'dsr',
      'pbo',
      'error',
    ].join(','),
    ...results.map((r) =>
      [
        r.window.index + 1,
        iso(r.window.trainFrom),
        iso(r.window.trainTo),
        iso(r.window.testFrom),
        iso(r.window.testTo),
        ...names.map((n) => r.params[n]),
        r.isObjective,
        r.oosObjective,
        r.inSample?.netPL,
        r.outOfSample?.netPL,
        r.inSample?.cagrPct,
        r.outOfSample?.cagrPct,
        r.inSample?.sharpe,
        r.outOfSample?.sharpe,
        r.inSample?.maxDrawdownPct,
        r.outOfSample?.maxDrawdownPct,
        r.efficiency,
        r.dsr,
        r.pbo,
        r.error ? `"${r.error.replace(/"/g, '""')}"` : '',
      ]
        .map((v) =>
          v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v)) ? '' : String(v),
        )
        .join(','),
    ),
  ];
  writeFileSync(join(o.dir, 'windows.csv'), `${csv.join('\n')}\n`);
  writeFileSync(
    join(o.dir, 'oos-equity.csv'),
    `${['time,window,nav,epochMs', ...equity.map((p) => `${p.time},${p.window},${p.nav},${Date.parse(p.time)}`)].join('\n')}\n`,
  );
  writeFileSync(join(o.dir, 'walkforward.json'), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
