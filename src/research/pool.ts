import { Worker } from 'node:worker_threads';
import type { Params } from '../strategy/api.ts';
import type { BacktestConfig } from '../app/config.ts';
import type { SharedSeries } from './shared-series.ts';
import type { FromWorker, ToWorker, WorkerInit } from './worker.ts';

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
  run(trial: number, params: Params, config: BacktestConfig, id?: string): Promise<Done>;
  close(): Promise<void>;
}

/** A worker thread could not start (the strategy failed to load there, or the thread died). */
export class WorkerStartError extends Error {
  readonly code = 'WORKER' as const;
}

interface Slot {
  worker: Worker;
  busy: { trial: number; resolve: (d: Done) => void; reject: (e: Error) => void } | undefined;
}

/**
 * A worker thread's entry. Worker threads do not inherit the main thread's module hooks: run from
 * the TypeScript sources (vitest, or bin/fxflow.js without a current build), a worker registers tsx
 * itself (worker-boot.mjs); run from the compiled build, it starts at worker.js directly.
 */
const BOOT = import.meta.url.endsWith('.ts') ? new URL('./worker-boot.mjs', import.meta.url) : new URL('./worker.js', import.meta.url);

/**
 * A fixed set of worker threads, each holding the strategy (loaded once) and the sweep's shared
 * series; trials are queued and handed to the first idle worker. A worker that dies mid-trial
 * fails that trial (with the reason) and is replaced.
 */
export class WorkerPool implements TrialRunner {
  readonly #slots: Slot[] = [];
  readonly #queue: { trial: number; params: Params; config: BacktestConfig; resolve: (d: Done) => void; reject: (e: Error) => void }[] = [];
  #closed = false;
  #series: readonly SharedSeries[] | undefined;
  /** Milliseconds each worker took from creation to ready (tsx, modules, strategy). */
  readonly startMs: number[] = [];

  private constructor(private readonly init: WorkerInit) {}

  static async start(size: number, init: WorkerInit): Promise<WorkerPool> {
    const pool = new WorkerPool(init);
    await Promise.all(Array.from({ length: size }, () => pool.#spawn()));
    return pool;
  }

  get size(): number {
    return this.#slots.length;
  }

  #spawn(): Promise<Slot> {
    return new Promise((resolve, reject) => {
      const t0 = Date.now();
      const worker = new Worker(BOOT, { workerData: { ...this.init, t0 } });
      const slot: Slot = { worker, busy: undefined };
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
          const b = slot.busy;
          slot.busy = undefined;
          b?.resolve(m);
          this.#pump();
        }
      });
      worker.on('error', (e) => {
        if (!ready) reject(new WorkerStartError(e.message));
        this.#lost(slot, e.message);
      });
      worker.on('exit', (code) => {
        if (!ready) reject(new WorkerStartError(`the worker thread exited with code ${code} before it was ready`));
        else this.#lost(slot, `the worker thread exited with code ${code}`);
      });
    });
  }

  /** A worker died: its trial fails with the reason, and a new worker takes its place. */
  #lost(slot: Slot, reason: string): void {
    const i = this.#slots.indexOf(slot);
    if (i < 0) return;
    this.#slots.splice(i, 1);
    const b = slot.busy;
    slot.busy = undefined;
    b?.resolve({ type: 'done', trial: b.trial, ok: false, error: `worker died: ${reason}`, wallMs: 0, infrastructure: true });
    if (!this.#closed) this.#spawn().catch((e: Error) => this.#queue.splice(0).forEach((q) => q.reject(e)));
  }

  #pump(): void {
    for (const slot of this.#slots) {
      if (slot.busy || this.#queue.length === 0) continue;
      const q = this.#queue.shift()!;
      slot.busy = { trial: q.trial, resolve: q.resolve, reject: q.reject };
      slot.worker.postMessage({ type: 'run', trial: q.trial, params: q.params, config: q.config } satisfies ToWorker);
    }
  }

  /** Hands the sweep's shared series to every worker (and to any that replaces one); call before `run`. */
  share(series: readonly SharedSeries[]): void {
    this.#series = series;
    for (const s of this.#slots) s.worker.postMessage({ type: 'data', series } satisfies ToWorker);
  }

  /** Runs a trial on the next idle worker. */
  run(trial: number, params: Params, config: BacktestConfig): Promise<Done> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ trial, params, config, resolve, reject });
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#slots.map((s) => s.worker.terminate()));
    this.#slots.length = 0;
  }
}
