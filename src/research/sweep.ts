import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ParamValue, Params } from '../strategy/api.ts';
import type { BacktestConfig } from '../app/config.ts';
import { objectiveValue, type ObjectiveFn, type ObjectiveName, type TrialMetrics } from './metrics.ts';
import { deflatedSharpe, pboCscv, sharpePerPeriod, type DeflatedSharpe, type Pbo } from './overfit.ts';
import { INFRASTRUCTURE_ATTEMPTS, isInfrastructureFailure } from './failure.ts';
import { WorkerPool, type Done, type TrialRunner } from './pool.ts';
import { makeSearch, toldBefore, type SearchName } from './search.ts';
import type { SharedSeries } from './shared-series.ts';
import type { Space } from './space.ts';
import { SweepStore, type TrialRecord } from './store.ts';
import { SWEEP_CONFIG_FILE, type SweepDataSource } from './trial-command.ts';
import type { TrialMode } from './trial.ts';

/** Canonical JSON (keys sorted at every level): the same value always hashes the same. */
export function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}

export const sha256 = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** A trial's identity: hash(strategy file content, params, data, config). */
export function trialId(strategyHash: string, params: Params, dataHash: string, configHash: string): string {
  return sha256(canonical({ strategy: strategyHash, params, data: dataHash, config: configHash })).slice(
    0,
    24,
  );
}

export interface SweepOptions {
  readonly strategyFile: string;
  readonly strategyName: string;
  readonly space: Space;
  readonly search: SearchName;
  readonly trials: number;
  readonly seed: number;
  readonly objective: ObjectiveName;
  readonly objectiveFn?: ObjectiveFn;
  readonly workers: number;
  /** Trials per proposal and how many of the latest trials a proposal may not see (see search.ts). */
  readonly batch: number;
  readonly lag: number;
  readonly config: BacktestConfig;
  readonly series: readonly SharedSeries[];
  readonly dataHash: string;
  /** Where the data was read (recorded in sweep.json; a trial's own command reads the same). */
  readonly data?: SweepDataSource;
  /** A member sweep's portfolio (optimize --portfolio --member: cli/optimize.ts portfolioKey), recorded in sweep.json. */
  readonly portfolio?: Readonly<Record<string, unknown>>;
  /** The sweep folder; a folder holding some of this sweep's trials is resumed. */
  readonly dir: string;
  /** CSCV blocks for PBO (even); default 16, fewer for short series. */
  readonly pboBlocks?: number;
  readonly instrumentsPath?: string;
  /**
   * A pool started by the caller (e.g. before decoding the data, so the workers' start overlaps
   * it); the sweep shares the series with it and closes it. Default: started when a trial needs it.
   */
  readonly pool?: Promise<TrialRunner>;
  /** Leave the pool open at the end (walk-forward reuses it across windows). */
  readonly keepPool?: boolean;
  /** The mode that assembles each trial: 'optimize' (default), or 'walkforward' for a walk-forward's training sweeps. */
  readonly mode?: TrialMode;
  readonly onProgress?: (p: {
    done: number;
    total: number;
    ran: number;
    failed: number;
    elapsedMs: number;
  }) => void;
}

export interface RankedTrial {
  readonly trial: number;
  readonly id: string;
  readonly params: Readonly<Record<string, ParamValue>>;
  readonly objective: number;
  readonly metrics: TrialMetrics;
}

export interface SweepResult {
  readonly dir: string;
  readonly strategy: string;
  readonly search: SearchName;
  readonly seed: number;
  readonly objective: ObjectiveName;
  /** Valid points of the space (after constraints). */
  readonly spaceSize: number;
  readonly trials: number;
  /** Trials run now (the others were in the folder already). */
  readonly ran: number;
  readonly resumed: number;
  readonly failed: number;
  readonly failures: readonly {
    trial: number;
    params: Readonly<Record<string, ParamValue>>;
    error: string;
  }[];
  readonly best: RankedTrial | null;
  readonly top: readonly RankedTrial[];
  readonly overfitting: {
    readonly deflatedSharpe: DeflatedSharpe | null;
    readonly pbo: SweepPbo | null;
    readonly note?: string;
  };
  readonly workers: number;
  readonly workerStartMs: readonly number[];
  readonly wallMs: number;
  readonly trialsPerSecond: number;
}

/**
 * PBO with what it may be compared with. CSCV asks how often the in-sample best lands in the
 * out-of-sample bottom half among the trials run: a grid or a random sample spreads them over the
 * space, an adaptive search (tpe) clusters them near its optimum, where neighbours rank alike and
 * PBO reads higher (0.34–0.75 against 0.17–0.22 on the same space). So a tpe sweep's PBO is
 * marked not comparable with a grid's or a random search's.
 */
export type SweepPbo = Omit<Pbo, 'logits'> & {
  /** The search whose trials it was computed on. */
  readonly search: SearchName;
  readonly comparable: boolean;
  /** What the figure may be compared with, in words. */
  readonly label: string;
};

export function pboLabel(search: SearchName): { comparable: boolean; label: string } {
  return search === 'tpe'
    ? {
        comparable: false,
        label:
          'on the trials of an adaptive search (tpe), which cluster near its optimum: not comparable with the PBO of a grid or random search (it reads higher); run a random search over the same space to compare',
      }
    : {
        comparable: true,
        label: `on the trials of a ${search} search: comparable with other grid and random searches`,
      };
}

/**
 * The hashes that identify a sweep's trials; computed once. A member sweep's strategy is its
 * portfolio (every member's code, params and limits: `portfolio`), not the portfolio file alone.
 */
export function sweepHashes(
  strategyFile: string,
  config: BacktestConfig,
  portfolio?: Readonly<Record<string, unknown>>,
): { strategyHash: string; configHash: string } {
  return {
    strategyHash: sha256(portfolio ? canonical(portfolio) : readFileSync(strategyFile)),
    configHash: sha256(canonical(config)),
  };
}

/**
 * Runs a sweep: the search proposes points on the fixed (batch, lag) schedule, each point's trial
 * id is looked up in the folder (recorded trials are not run again), the rest run on the worker
 * pool, and every result is appended to the folder as it finishes. Results are told to the search
 * in trial order, so the trials and figures do not depend on the number of workers or on which
 * trials were already recorded.
 */
export async function runSweep(o: SweepOptions): Promise<SweepResult> {
  const t0 = performance.now();
  const { strategyHash, configHash } = sweepHashes(o.strategyFile, o.config, o.portfolio);
  const names = o.space.dims.map((d) => d.name);
  const store = new SweepStore(o.dir, names);
  const { records: known, returns } = store.load();
  // Rewrite what survived (drops a line cut by a kill, so appends start on a fresh line).
  const survivors = [...known.values()].sort((a, b) => a.trial - b.trial);
  store.rewriteJsonl(survivors, returns);
  store.writeCsv(survivors);
  writeFileSync(
    join(o.dir, 'sweep.json'),
    `${JSON.stringify({ strategy: o.strategyName, strategyFile: o.strategyFile, strategyHash, search: o.search, seed: o.seed, trials: o.trials, batch: o.batch, lag: o.lag, objective: o.objective, params: o.space.dims, constraints: o.space.constraints.map((c) => c.source), fixed: o.space.base, dataHash: o.dataHash, ...(o.data ? { data: o.data } : {}), ...(o.portfolio ? { portfolio: o.portfolio } : {}), configHash, config: o.config }, null, 2)}\n`,
  );
  // The whole configuration as `--config` reads it: a trial's own command (trial-command.ts) runs on it.
  writeFileSync(join(o.dir, SWEEP_CONFIG_FILE), `${JSON.stringify(o.config, null, 2)}\n`);

  const search = makeSearch(o.search, o.space, o.seed);
  const adaptive = o.search === 'tpe';
  const total = Math.min(o.trials, o.space.validPoints().length);
  const points: number[] = [];
  const ids: string[] = [];
  const done: (TrialRecord | undefined)[] = [];
  const value = (r: TrialRecord): number | null => (r.status === 'ok' ? r.objective : null);
  let told = 0;
  let exhausted = false;
  let ran = 0;
  let resumed = 0;
  let failed = 0;
  let finished = 0;
  const queue: number[] = [];
  let pool: TrialRunner | undefined;
  let slots = 1;
  let inFlight = 0;

  const objectiveOf = (m: TrialMetrics): number => objectiveValue(o.objective, m, o.objectiveFn);
  const propose = (): void => {
    for (;;) {
      if (exhausted || points.length >= total) return;
      // The next batch sees exactly trials 0 … need−1, told in order: never more (a fast worker
      // must not change what is proposed), so wait until all of them are done.
      const need = adaptive ? toldBefore(points.length, o.lag) : 0;
      while (told < need && done[told]) {
        search.tell(points[told]!, value(done[told]!));
        told++;
      }
      if (told < need) return;
      const batch = search.ask(Math.min(adaptive ? o.batch : 64, total - points.length));
      if (batch.length === 0) {
        exhausted = true;
        return;
      }
      for (const p of batch) {
        const i = points.length;
        points.push(p);
        const id = trialId(strategyHash, o.space.params(p), o.dataHash, configHash);
        ids.push(id);
        const rec = known.get(id);
        // A trial that failed because of what ran it (not the strategy) runs again.
        if (rec && !(rec.status === 'failed' && isInfrastructureFailure(rec))) {
          // Recorded before: reuse it as trial i (its figures do not depend on when it ran).
          done[i] = { ...rec, trial: i };
          resumed++;
          finished++;
          if (rec.status === 'failed') failed++;
        } else queue.push(i);
      }
    }
  };

  const report = (): void =>
    o.onProgress?.({ done: finished, total, ran, failed, elapsedMs: performance.now() - t0 });
  const attempts: number[] = [];
  const onDone = (i: number, m: Done): void => {
    const p = points[i]!;
    let rec: TrialRecord;
    if (m.ok) {
      const metrics = m.metrics as TrialMetrics;
      let obj: number;
      try {
        obj = objectiveOf(metrics);
      } catch (e) {
        rec = {
          trial: i,
          id: ids[i]!,
          status: 'failed',
          params: o.space.swept(p),
          objective: null,
          error: (e as Error).message,
        };
        failed++;
        done[i] = rec;
        store.append(rec, undefined);
        return;
      }
      rec = {
        trial: i,
        id: ids[i]!,
        status: 'ok',
        params: o.space.swept(p),
        objective: Number.isFinite(obj) ? obj : null,
        metrics,
      };
      returns.set(ids[i]!, m.returns ?? []);
    } else {
      rec = {
        trial: i,
        id: ids[i]!,
        status: 'failed',
        params: o.space.swept(p),
        objective: null,
        error: m.error,
        ...(m.infrastructure ? { infrastructure: true as const } : {}),
      };
      failed++;
    }
    done[i] = rec;
    store.append(rec, m.ok ? m.returns : undefined);
  };

  try {
    propose();
    report();
    await new Promise<void>((resolve, reject) => {
      const step = (): void => {
        propose();
        while (queue.length > 0) {
          if (!pool) {
            // Workers start only when some trial needs running (a finished sweep starts none).
            startPool().then(step, reject);
            return;
          }
          if (inFlight >= slots) break;
          const i = queue.shift()!;
          inFlight++;
          pool.run(i, o.space.params(points[i]!), o.config, ids[i], o.mode).then((m) => {
            inFlight--;
            if (
              !m.ok &&
              isInfrastructureFailure(m) &&
              (attempts[i] = (attempts[i] ?? 1) + 1) <= INFRASTRUCTURE_ATTEMPTS
            ) {
              // Not the trial's fault (its thread died, the queue lost it): it runs again, first in line.
              queue.unshift(i);
              step();
              return;
            }
            ran++;
            finished++;
            onDone(i, m);
            report();
            step();
          }, reject);
        }
        if (inFlight === 0 && queue.length === 0) {
          propose();
          if (queue.length === 0) resolve();
          else step();
        }
      };
      let starting: Promise<void> | undefined;
      const startPool = (): Promise<void> =>
        (starting ??= (
          o.pool ??
          WorkerPool.start(Math.max(1, o.workers), {
            strategyFile: o.strategyFile,
            ...(o.instrumentsPath ? { instrumentsPath: o.instrumentsPath } : {}),
          })
        ).then((p) => {
          p.share(o.series);
          pool = p;
          // Fixed at the start: a pool replacing a dead thread is one short for a moment.
          slots = Math.max(1, p.size);
        }));
      step();
    });
  } finally {
    if (!o.keepPool) await (pool ?? (o.pool ? await o.pool.catch(() => undefined) : undefined))?.close();
  }

  const records = done.filter((r): r is TrialRecord => r !== undefined);
  store.rewriteJsonl(records, returns);
  store.writeCsv(records);
  const result = summarizeSweep(o, records, returns, {
    ran,
    resumed,
    wallMs: performance.now() - t0,
    workerStartMs: pool?.startMs ?? [],
  });
  writeFileSync(join(o.dir, 'summary.json'), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/** Best trial, top 10, and the overfitting figures of a finished sweep. */
export function summarizeSweep(
  o: Pick<
    SweepOptions,
    'dir' | 'strategyName' | 'search' | 'seed' | 'objective' | 'space' | 'workers' | 'pboBlocks'
  >,
  records: readonly TrialRecord[],
  returns: ReadonlyMap<string, readonly number[]>,
  run: { ran: number; resumed: number; wallMs: number; workerStartMs: readonly number[] },
): SweepResult {
  const ok = records.filter((r) => r.status === 'ok' && r.metrics);
  const ranked: RankedTrial[] = ok
    .map((r) => ({
      trial: r.trial,
      id: r.id,
      params: r.params,
      objective: r.objective ?? -Infinity,
      metrics: r.metrics!,
    }))
    .sort((a, b) => b.objective - a.objective || a.trial - b.trial);
  const failures = records
    .filter((r) => r.status === 'failed')
    .map((r) => ({ trial: r.trial, params: r.params, error: r.error ?? '' }));
  let dsr: DeflatedSharpe | null = null;
  let pbo: Pbo | null = null;
  let note: string | undefined;
  const series = ranked.map((r) => returns.get(r.id) ?? []);
  const best = ranked[0];
  if (best && series[0]!.length >= 3 && ranked.length >= 2) {
    dsr = deflatedSharpe(
      series[0]!,
      series.map((s) => sharpePerPeriod(s)),
    );
    // PBO needs one return per period for every trial: trials of one sweep share the data, so their
    // daily curves have the same length; CSCV uses the common length.
    const T = Math.min(...series.map((s) => s.length));
    const S = o.pboBlocks ?? (T >= 64 ? 16 : Math.max(2, 2 * Math.floor(T / 8)));
    if (T >= 2 * S && S >= 2) pbo = pboCscv(series, S);
    else note = `PBO needs at least ${2 * S} daily returns per trial (${T} here)`;
  } else
    note = 'the overfitting figures need at least two successful trials with three or more daily returns';
  return {
    dir: o.dir,
    strategy: o.strategyName,
    search: o.search,
    seed: o.seed,
    objective: o.objective,
    spaceSize: o.space.validPoints().length,
    trials: records.length,
    ran: run.ran,
    resumed: run.resumed,
    failed: failures.length,
    failures,
    best: best ?? null,
    top: ranked.slice(0, 10),
    overfitting: {
      deflatedSharpe: dsr,
      pbo: pbo
        ? {
            pbo: pbo.pbo,
            blocks: pbo.blocks,
            splits: pbo.splits,
            medianLogit: pbo.medianLogit,
            search: o.search,
            ...pboLabel(o.search),
          }
        : null,
      ...(note ? { note } : {}),
    },
    workers: o.workers,
    workerStartMs: run.workerStartMs,
    wallMs: run.wallMs,
    trialsPerSecond: run.ran > 0 ? run.ran / (run.wallMs / 1000) : 0,
  };
}
