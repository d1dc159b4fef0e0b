import { parentPort, workerData } from 'node:worker_threads';
import { loadInstruments } from '../domain/instrument.ts';
import type { Params } from '../strategy/api.ts';
import type { BacktestConfig } from '../app/config.ts';
import { loadStrategy } from '../app/load-strategy.ts';
import { loadMemberSpecs, type MemberSpec, type PortfolioSweep } from '../app/portfolio.ts';
import { seriesMap, type SharedSeries } from './shared-series.ts';
import { runTrial, type TrialMode } from './trial.ts';
import { CLAIMED } from './claims.ts';

/** What a worker is started with (structured clone; the series' buffers are shared, not copied). */
export interface WorkerInit {
  readonly strategyFile: string;
  readonly instrumentsPath?: string;
  /**
   * A member sweep (optimize --portfolio --member): the portfolio's members with their params, and
   * the swept member. The thread loads them all (strategyFile is then the portfolio file's name).
   */
  readonly portfolio?: {
    readonly members: readonly MemberSpec[];
    readonly sweep: PortfolioSweep;
  };
}

/** `data` hands over the sweep's shared series (before any `run`): workers start while the data is decoded. */
export type ToWorker =
  | { readonly type: 'data'; readonly series: readonly SharedSeries[] }
  | {
      readonly type: 'run';
      readonly trial: number;
      readonly params: Params;
      readonly config: BacktestConfig;
      readonly mode?: TrialMode;
      readonly claim: number;
      readonly ticket: number;
    }
  | { readonly type: 'stop' };
export type FromWorker =
  | { readonly type: 'ready'; readonly startMs: number }
  | { readonly type: 'fatal'; readonly error: string }
  | {
      readonly type: 'done';
      readonly trial: number;
      readonly ok: true;
      readonly metrics: unknown;
      readonly returns: number[];
      readonly times: number[];
      readonly wallMs: number;
    }
  | {
      readonly type: 'done';
      readonly trial: number;
      readonly ok: false;
      readonly error: string;
      readonly wallMs: number;
      /** The trial did not fail by itself: the thread running it died, its lock was lost, Redis went away. Run it again. */
      readonly infrastructure?: true;
    };

const port = parentPort!;
/** What the pool adds: when the thread was created, and the claims of the trials it is handed (pool.ts). */
export interface WorkerData extends WorkerInit {
  readonly t0: number;
  readonly claims: Int32Array;
}

const init = workerData as WorkerData;
const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

try {
  const loaded = init.portfolio
    ? {
        ...(await loadMemberSpecs(init.portfolio.members, init.strategyFile)),
        sweep: init.portfolio.sweep,
      }
    : await loadStrategy(init.strategyFile, []);
  const instruments = init.instrumentsPath ? loadInstruments(init.instrumentsPath) : loadInstruments();
  let series = new Map<string, SharedSeries>();
  // Trials run one at a time, in the order they came: the pool may hand over the next while one
  // runs (so the thread does not wait for a busy main thread to answer), and they wait here.
  const waiting: Extract<ToWorker, { type: 'run' }>[] = [];
  let running = false;
  const next = (): void => {
    let m = waiting.shift();
    // A trial the main thread took back (it had nothing else to do) is not run here, nor answered.
    while (m && Atomics.compareExchange(init.claims, m.claim, m.ticket, CLAIMED) !== m.ticket)
      m = waiting.shift();
    if (!m) {
      running = false;
      return;
    }
    running = true;
    const t0 = performance.now();
    runTrial({
      loaded,
      params: m.params,
      config: m.config,
      instruments,
      series,
      ...(m.mode !== undefined ? { mode: m.mode } : {}),
    })
      .then(
        (o) =>
          port.postMessage({
            type: 'done',
            trial: m.trial,
            ok: true,
            metrics: o.metrics,
            returns: o.returns,
            times: o.times,
            wallMs: o.wallMs,
          } satisfies FromWorker),
        (e: unknown) =>
          port.postMessage({
            type: 'done',
            trial: m.trial,
            ok: false,
            error: errorText(e),
            wallMs: performance.now() - t0,
          } satisfies FromWorker),
      )
      .then(next);
  };
  port.on('message', (m: ToWorker) => {
    if (m.type === 'stop') {
      port.close();
      return;
    }
    if (m.type === 'data') {
      series = seriesMap(m.series);
      return;
    }
    waiting.push(m);
    if (!running) next();
  });
  port.postMessage({ type: 'ready', startMs: Date.now() - init.t0 } satisfies FromWorker);
} catch (e) {
  port.postMessage({ type: 'fatal', error: errorText(e) } satisfies FromWorker);
}
