import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { codeFile, LAYOUT, PACKAGE_ROOT } from '../domain/package-root.ts';
import type { Params } from '../strategy/api.ts';
import type { BacktestConfig } from '../app/config.ts';
import type { LoadedStrategy } from '../app/load-strategy.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import { seriesMap, type SharedSeries } from './shared-series.ts';
import { runTrial, type TrialMode } from './trial.ts';
import { TAKEN_BACK } from './claims.ts';
import type { FromWorker, ToWorker, WorkerData, WorkerInit } from './worker.ts';

/** A finished trial: its figures, or why it failed. */
export type Done = Extract<FromWorker, { type: 'done' }>;

/**
 * Where a sweep's trials run: worker threads here (WorkerPool), or a queue other machines take
 * them from (queue.ts). `size` is how many trials it takes at once; `id` is the trial's identity.
 */
export interface TrialRunner {
  readonly size: number;
  readonly startMs: readonly number[];
  share(series: readonly SharedSeries[]): void;
  /** Runs one trial; `mode` is the one that assembles it ('optimize' unless given: a walk-forward gives 'walkforward'). */
  run(trial: number, params: Params, config: BacktestConfig, id?: string, mode?: TrialMode): Promise<Done>;
  close(): Promise<void>;
}

/** A worker thread could not start (the strategy failed to load there, or the thread died). */
export class WorkerStartError extends Error {
  readonly code = 'WORKER' as const;
}

/**
 * The thread that starts the pool as one of its slots: the strategy it has loaded already and the
 * instruments. Its trials run between its other work (one at a time, each started from the event
 * loop), so it pays no thread start and no second load of fxflow and the strategy; a strategy that
 * ends the process (process.exit, out of memory) ends the sweep with it, which a thread would not.
 */
export interface MainSlot {
  readonly loaded: LoadedStrategy;
  readonly instruments: InstrumentRegistry;
}

interface Job {
  /** Its cell in the pool's claims, and the ticket the cell holds until someone claims it (pool.ts). */
  claim: number;
  ticket: number;
  readonly trial: number;
  readonly params: Params;
  readonly config: BacktestConfig;
  readonly mode: TrialMode | undefined;
  readonly resolve: (d: Done) => void;
  readonly reject: (e: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  /** The trials handed to it, the running one first (the thread queues the rest in order). */
  readonly jobs: Job[];
}

/**
 * A worker thread's entry. Worker threads do not inherit the main thread's module hooks: run from
 * the TypeScript sources (vitest, or bin/fxflow.js without a current build), a worker registers tsx
 * itself (worker-boot.mjs); run from the build, it starts at the bundle's worker entry, which
 * shares its chunks with the command line's.
 */
const BOOT =
  LAYOUT === 'source' ? codeFile('research/worker-boot.mjs') : join(PACKAGE_ROOT, 'dist/bundle/worker.js');

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * A fixed set of trial slots: worker threads, each holding the strategy (loaded once) and the
 * sweep's shared series, and, given a MainSlot, the calling thread itself. Trials are queued and
 * handed to the first free slot. A worker that dies mid-trial fails that trial (with the reason)
 * and is replaced.
 *
 * With the main thread as a slot, a thread is handed its next trial while it runs one: the main
 * thread answers a thread's message only between its own trials, and the thread would wait that
 * long for its next. So that this does not leave the main thread idle at the end while a thread
 * still holds a trial it has not started, the main thread, finding nothing queued, takes such a
 * trial back: each handed-over trial has a cell in a shared Int32Array holding its ticket (a number
 * no other trial of the pool's recent ones has), and the thread (before running it) and the main
 * thread (before taking it back) both swap the ticket for a mark by compare-and-swap, so exactly
 * one runs it; a cell reused for a later trial holds another ticket, so a stale claim fails.
 * Without the main thread, one trial at a time keeps the last trials spread evenly.
 */
export class WorkerPool implements TrialRunner {
  readonly #slots: Slot[] = [];
  /** Every thread started and not yet ended, ready or not (close ends those still starting). */
  readonly #threads = new Set<Worker>();
  readonly #queue: Job[] = [];
  #closed = false;
  #series: readonly SharedSeries[] | undefined;
  #mainSeries: ReadonlyMap<string, SharedSeries> = new Map();
  #started: Promise<void> = Promise.resolve();
  #failed: Error | undefined;
  /** The main thread runs a trial, or will at its next turn of the event loop. */
  #mainBusy = false;
  /** One cell per trial handed to a thread: its ticket until claimed, then CLAIMED or TAKEN_BACK; reused in turn. */
  readonly #claims: Int32Array;
  #nextClaim = 0;
  #nextTicket = 1;
  /** Trials a thread holds at once (the running one and those queued behind it). */
  readonly #depth: number;
  readonly size: number;
  /** Milliseconds each worker took from creation to ready (tsx, modules, strategy). */
  readonly startMs: number[] = [];

  private constructor(
    private readonly init: WorkerInit,
    private readonly threads: number,
    private readonly main: MainSlot | undefined,
  ) {
    this.#depth = main ? 2 : 1;
    this.size = (main ? 1 : 0) + threads * this.#depth;
    // A thread holds at most `depth` trials: far more cells than trials out, so a cell is reused
    // long after its trial was answered (and the ticket catches a stale claim if not).
    this.#claims = new Int32Array(new SharedArrayBuffer(4 * (4 * this.size + 1024)));
  }

  /**
   * Starts `size` trial slots. Given `main`, the calling thread is one of them and `size − 1`
   * threads start: the pool is ready at once (the main thread runs trials while the threads load),
   * and a thread that cannot start fails the trials waiting. Without it, resolves once every
   * thread is ready, or rejects with the first that could not start.
   */
  static async start(size: number, init: WorkerInit, main?: MainSlot): Promise<WorkerPool> {
    const n = Math.max(1, size);
    const pool = new WorkerPool(init, main ? n - 1 : n, main);
    const spawns = Array.from({ length: pool.threads }, () => pool.#spawn());
    pool.#started = Promise.all(spawns).then(() => {});
    if (!main) await pool.#started;
    else pool.#started.catch((e: Error) => pool.#fail(e));
    return pool;
  }

  /** Resolves once every thread of the start is ready (at once without threads); rejects as a start failure does. */
  ready(): Promise<void> {
    return this.#started;
  }

  #spawn(): Promise<Slot> {
    return new Promise((resolve, reject) => {
      const t0 = Date.now();
      const worker = new Worker(BOOT, {
        workerData: { ...this.init, t0, claims: this.#claims } satisfies WorkerData,
      });
      this.#threads.add(worker);
      const slot: Slot = { worker, jobs: [] };
      let ready = false;
      worker.on('message', (m: FromWorker) => {
        if (m.type === 'ready') {
          ready = true;
          if (this.#series) worker.postMessage({ type: 'data', series: this.#series } satisfies ToWorker);
          this.startMs.push(Date.now() - t0);
          this.#slots.push(slot);
          resolve(slot);
          this.#pump();
        } else if (m.type === 'fatal') {
          reject(new WorkerStartError(m.error));
          void worker.terminate();
        } else if (m.type === 'done') {
          slot.jobs.shift()?.resolve(m);
          this.#pump();
        }
      });
      worker.on('error', (e) => {
        if (!ready) reject(new WorkerStartError(e.message));
        this.#lost(slot, e.message);
      });
      worker.on('exit', (code) => {
        this.#threads.delete(worker);
        if (!ready)
          reject(new WorkerStartError(`the worker thread exited with code ${code} before it was ready`));
        else this.#lost(slot, `the worker thread exited with code ${code}`);
      });
    });
  }

  /**
   * A thread could not start: the trials waiting fail with the reason (the sweep stops with it).
   * With the main thread as a slot (which would otherwise run them all, slowly), so does any trial
   * asked for later.
   */
  #fail(e: Error): void {
    if (this.main) this.#failed ??= e;
    for (const q of this.#queue.splice(0)) q.reject(e);
  }

  /**
   * A worker died: its running trial fails with the reason, the trials queued behind it go back to
   * the front of the queue, and a new worker takes its place.
   */
  #lost(slot: Slot, reason: string): void {
    const i = this.#slots.indexOf(slot);
    if (i < 0) return;
    this.#slots.splice(i, 1);
    const [running, ...behind] = slot.jobs.splice(0);
    this.#queue.unshift(...behind);
    running?.resolve({
      type: 'done',
      trial: running.trial,
      ok: false,
      error: `worker died: ${reason}`,
      wallMs: 0,
      infrastructure: true,
    });
    if (!this.#closed) this.#spawn().catch((e: Error) => this.#fail(e));
    this.#pump();
  }

  #pump(): void {
    for (const slot of this.#slots) {
      while (slot.jobs.length < this.#depth && this.#queue.length > 0) {
        const q = this.#queue.shift()!;
        q.claim = this.#nextClaim;
        q.ticket = this.#nextTicket;
        this.#nextClaim = (this.#nextClaim + 1) % this.#claims.length;
        this.#nextTicket = this.#nextTicket >= 0x7fffffff ? 1 : this.#nextTicket + 1;
        Atomics.store(this.#claims, q.claim, q.ticket);
        slot.jobs.push(q);
        slot.worker.postMessage({
          type: 'run',
          trial: q.trial,
          params: q.params,
          config: q.config,
          ...(q.mode !== undefined ? { mode: q.mode } : {}),
          claim: q.claim,
          ticket: q.ticket,
        } satisfies ToWorker);
      }
    }
    if (
      this.main &&
      !this.#mainBusy &&
      !this.#closed &&
      (this.#queue.length > 0 || this.#slots.some((s) => s.jobs.length > 1))
    ) {
      this.#mainBusy = true;
      // From the event loop, not from here: the caller queues its other trials (and the threads
      // get theirs) before the main thread is taken by one.
      setImmediate(() => this.#runMain());
    }
  }

  /** A trial not started by the thread it was handed to (never the one it runs next), taken back by the main thread. */
  #takeBack(): Job | undefined {
    for (const slot of this.#slots) {
      for (let k = slot.jobs.length - 1; k >= 1; k--) {
        const q = slot.jobs[k]!;
        if (Atomics.compareExchange(this.#claims, q.claim, q.ticket, TAKEN_BACK) !== q.ticket) continue;
        slot.jobs.splice(k, 1);
        return q;
      }
    }
    return undefined;
  }

  /** Runs the next trial on the main thread, as a worker runs it (worker.ts), and answers it as a worker would. */
  #runMain(): void {
    const q = this.#closed ? undefined : (this.#queue.shift() ?? this.#takeBack());
    if (!q) {
      this.#mainBusy = false;
      return;
    }
    const t0 = performance.now();
    const finish = (d: Done): void => {
      this.#mainBusy = false;
      q.resolve(d);
      this.#pump();
    };
    runTrial({
      loaded: this.main!.loaded,
      params: q.params,
      config: q.config,
      instruments: this.main!.instruments,
      series: this.#mainSeries,
      ...(q.mode !== undefined ? { mode: q.mode } : {}),
    }).then(
      (o) =>
        finish({
          type: 'done',
          trial: q.trial,
          ok: true,
          metrics: o.metrics,
          returns: o.returns,
          times: o.times,
          wallMs: o.wallMs,
        }),
      (e: unknown) =>
        finish({
          type: 'done',
          trial: q.trial,
          ok: false,
          error: errorText(e),
          wallMs: performance.now() - t0,
        }),
    );
  }

  /** Hands the sweep's shared series to every worker (and to any that replaces one); call before `run`. */
  share(series: readonly SharedSeries[]): void {
    this.#series = series;
    this.#mainSeries = seriesMap(series);
    for (const s of this.#slots) s.worker.postMessage({ type: 'data', series } satisfies ToWorker);
  }

  /** Runs a trial on the next free slot. */
  run(trial: number, params: Params, config: BacktestConfig, _id?: string, mode?: TrialMode): Promise<Done> {
    return new Promise((resolve, reject) => {
      if (this.#failed) return reject(this.#failed);
      this.#queue.push({ claim: -1, ticket: 0, trial, params, config, mode, resolve, reject });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#threads].map((w) => w.terminate()));
    this.#threads.clear();
    this.#slots.length = 0;
  }
}
