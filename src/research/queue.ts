import { Queue, QueueEvents, WaitingError, Worker as QueueWorker, type Job } from 'bullmq';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import type { Params } from '../strategy/api.ts';
import type { BacktestConfig } from '../app/config.ts';
import type { SweptPortfolio } from '../app/portfolio.ts';
import type { Done, TrialRunner } from './pool.ts';
import type { TrialMode } from './trial.ts';
import { isInfrastructureFailure } from './failure.ts';
import { canonical, sha256, trialId } from './sweep.ts';
import {
  describeQueue,
  describeQueueTarget,
  isConnectionError,
  MIN_REDIS,
  openRedis,
  parseQueueUrl,
  QueueError,
  QueueLostError,
  RECONNECT_MS,
  RedisLink,
  where,
  type QueueTarget,
} from './redis-link.ts';

export {
  describeQueue,
  isConnectionError,
  MIN_REDIS,
  openRedis,
  parseQueueUrl,
  QueueError,
  QueueLostError,
  RECONNECT_MS,
  RedisLink,
  type QueueTarget,
};

/**
 * Trials across machines: a sweep's trials as BullMQ jobs in Redis (BullMQ brings ioredis).
 *
 * - The coordinator (`fxflow optimize … --queue redis://…`) writes the sweep's manifest (strategy
 *   file and its hash, or a member sweep's portfolio with the hash of every member's module;
 *   config, data hash, where the data is) to `fxflow:<queue>:sweep`, then adds one job per trial
 *   with the trial id as the job id: BullMQ keeps one job per id, so a trial is queued once however
 *   often the coordinator is restarted, and its result (the job's return value) is recorded once
 *   even when a stalled job is delivered twice.
 * - `fxflow worker --queue redis://…` reads the manifest, checks that its strategy file (or every
 *   member's module) and its data hash to the same content as the coordinator's (and refuses
 *   otherwise), and runs jobs on worker threads. A worker killed mid-trial stops renewing its lock;
 *   BullMQ's stalled check moves the job back to the queue and another worker runs it.
 */

/** What a worker needs to run a sweep's trials, as the coordinator wrote it. */
export interface SweepManifest {
  readonly sweepId: string;
  readonly strategyName: string;
  /** The strategy file on the coordinator's machine (a worker may be given its own path with --strategy). */
  readonly strategyFile: string;
  /** The hash of the strategy file's content; for a member sweep, of `portfolio` (canonical JSON). */
  readonly strategyHash: string;
  /**
   * A member sweep (`--portfolio file --member name`): the portfolio file and every member (module
   * path on the coordinator's machine, name, params, limits, hash of its code), the swept member and
   * whose figures the objective reads. `strategyFile` is then the portfolio file as given.
   */
  readonly portfolio?: SweptPortfolio;
  readonly config: BacktestConfig;
  readonly configHash: string;
  readonly dataHash: string;
  /** Where the coordinator read the data: its catalog, or a --data file or folder (and format). */
  readonly data:
    | { readonly catalog: string }
    | {
        readonly file: string;
        readonly format?: string;
        readonly timezone?: string;
        readonly side?: 'bid' | 'ask' | 'mid';
      };
  /** The params whose subscriptions decide which series are decoded (the first point of the space). */
  readonly subscriptionParams: Params;
  readonly createdAt: string;
}

const manifestKey = (t: QueueTarget): string => `fxflow:${t.name}:sweep`;

export async function readManifest(client: Redis, t: QueueTarget): Promise<SweepManifest | undefined> {
  const s = await client.get(manifestKey(t));
  return s ? (JSON.parse(s) as SweepManifest) : undefined;
}

/** The job's payload and what a worker returns (BullMQ stores it as the job's return value). */
interface TrialJob {
  readonly sweepId: string;
  readonly trial: number;
  readonly params: Params;
  /** The trial's period when it is not the manifest's (`run.from`, `run.to`): a walk-forward window's. */
  readonly period?: { readonly from: string; readonly to: string };
  /** The mode that assembles it when not 'optimize' (a walk-forward's trials and out-of-sample runs). */
  readonly mode?: TrialMode;
}
type TrialResult =
  | { ok: true; metrics: unknown; returns: number[]; times?: number[]; wallMs: number }
  | { ok: false; error: string; wallMs: number; infrastructure?: true };

/** What the coordinator watches while trials are out, and where it says what it found. */
export interface QueueWatch {
  /** How often the coordinator checks that its manifest and its trials' jobs are still in Redis (ms; default 2 s). */
  readonly checkMs?: number;
  /** Warn when no worker has taken a trial for this long while trials wait (ms; default 60 s). */
  readonly idleWarnMs?: number;
  /** A line for the user (the CLI writes it to stderr). */
  readonly onNote?: (text: string) => void;
}

const refusalsKey = (t: QueueTarget): string => `fxflow:${t.name}:refusals`;
/** How long a worker's refusal is kept in Redis (s): the coordinator names it in its warnings until then. */
const REFUSAL_TTL_S = 3600;

/**
 * The coordinator's side: a TrialRunner whose trials are BullMQ jobs. Refuses a queue that holds
 * unfinished trials of another sweep; a restarted coordinator of the same sweep finds its jobs
 * (waiting, running or done) by their ids and picks up. Losing Redis for longer than the link's
 * bound rejects every trial in flight with a QueueLostError (what is recorded stays recorded).
 */
export class RedisTrialRunner implements TrialRunner {
  readonly startMs: number[] = [];
  /** Trials put on the queue at once (the sweep's schedule still decides what is proposed). */
  readonly size: number;
  #closed = false;
  #lost: QueueLostError | undefined;
  readonly #waiting = new Set<(e: Error) => void>();
  /** The trials out on the queue: their jobs' payloads, to add again when Redis lost them, and a wake-up for their waiter. */
  readonly #out = new Map<string, { readonly data: TrialJob; requeued: () => void }>();
  readonly #timer: NodeJS.Timeout;
  #checking = false;
  /** When a worker last took a trial (or the coordinator last warned, or started). */
  #lastTaken = Date.now();
  /** How long without a trial taken before the next warning. */
  #warnAfterMs: number;

  private constructor(
    private readonly target: TrialTargetParts,
    depth: number,
    private readonly watch: QueueWatch,
  ) {
    this.size = depth;
    const { link, events } = target;
    void link.lost.then((reason) => {
      this.#lost = new QueueLostError(where(link.target), reason, link.reconnectMs);
      for (const fail of this.#waiting) fail(this.#lost);
      this.#waiting.clear();
    });
    events.on('active', () => {
      this.#lastTaken = Date.now();
      this.#warnAfterMs = watch.idleWarnMs ?? 60_000;
    });
    this.#warnAfterMs = watch.idleWarnMs ?? 60_000;
    this.#timer = setInterval(() => void this.#check(), watch.checkMs ?? 2000);
    this.#timer.unref();
  }

  /**
   * The watchdog: a Redis restarted empty (or flushed) has lost the manifest and the jobs the
   * coordinator waits for, and nothing would ever answer them; it writes the manifest again and
   * re-adds what is missing. And when trials wait but no worker has taken one for a while, it
   * says so, with what it knows of why (no worker connected, workers that refused the sweep).
   */
  async #check(): Promise<void> {
    if (this.#checking || this.#closed || this.target.link.isLost || this.#out.size === 0) return;
    this.#checking = true;
    const { t, watch: redis, queue, manifest } = this.target;
    try {
      const ids = [...this.#out.keys()];
      const [hasManifest, ...exist] =
        (await redis
          .pipeline([['exists', manifestKey(t)], ...ids.map((id) => ['exists', `bull:${t.name}:${id}`])])
          .exec()) ?? [];
      if (hasManifest?.[0] || exist.some((e) => e[0])) return; // the link is down: the next check sees
      let requeued = 0;
      if (hasManifest?.[1] === 0) await redis.set(manifestKey(t), JSON.stringify(manifest));
      for (let k = 0; k < ids.length; k++) {
        if (exist[k]?.[1] !== 0) continue;
        const out = this.#out.get(ids[k]!);
        if (!out) continue;
        await queue.add('trial', out.data, {
          jobId: ids[k]!,
          attempts: 1,
          removeOnComplete: false,
          removeOnFail: false,
        });
        out.requeued();
        requeued++;
      }
      if (requeued > 0 || hasManifest?.[1] === 0) {
        this.watch.onNote?.(
          `Redis at ${where(t)} no longer held ${requeued} of the ${ids.length} trial${ids.length === 1 ? '' : 's'} out on the queue${hasManifest?.[1] === 0 ? " nor the sweep's manifest (it was emptied or restarted without its data)" : ''}: queued them again`,
        );
        this.#lastTaken = Date.now();
      }
      const idleMs = Date.now() - this.#lastTaken;
      if (idleMs >= this.#warnAfterMs) {
        const counts = await queue.getJobCounts('active', 'waiting', 'prioritized');
        const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
        if (waiting > 0) {
          // Said again after twice as long, and so on, while nothing changes.
          this.#warnAfterMs *= 2;
          this.watch.onNote?.(await this.#idleReasons(idleMs, waiting, counts.active ?? 0));
        }
      }
    } catch {
      // A failed check (the link dropping) is retried at the next tick; losing the link for good is the link's to say.
    } finally {
      this.#checking = false;
    }
  }

  async #idleReasons(idleMs: number, waiting: number, running: number): Promise<string> {
    const { t, watch: redis, queue } = this.target;
    const refusals = await redis.hgetall(refusalsKey(t));
    const workers = (await queue.getWorkers()).length;
    const reasons: string[] = [];
    for (const [who, why] of Object.entries(refusals)) {
      const r = JSON.parse(why) as { sweepId: string; reason: string };
      if (r.sweepId === this.target.sweepId)
        reasons.push(`the worker ${who} refused this sweep: ${r.reason}`);
    }
    if (workers === 0)
      reasons.push(
        `no ${reasons.length > 0 ? 'other ' : ''}worker is connected: start one on a machine with the strategy and the data (fxflow worker --queue ${describeQueueTarget(t)})`,
      );
    else if (reasons.length === 0) {
      reasons.push(
        running > 0
          ? `${workers} worker${workers === 1 ? ' is' : 's are'} connected, running ${running} trial${running === 1 ? '' : 's'}: the next is taken when one ends`
          : `${workers} worker${workers === 1 ? ' is' : 's are'} connected but took none (stopping, or stuck)`,
      );
    }
    return `no worker has taken a trial for ${Math.round(idleMs / 1000)} s (${waiting} waiting on ${describeQueueTarget(t)}): ${reasons.join('; ')}`;
  }

  /**
   * Opens the queue for a sweep: writes its manifest (refusing a queue busy with another sweep).
   * `reconnectMs`: how long to keep trying after losing Redis before giving up.
   */
  static async open(
    url: string,
    manifest: SweepManifest,
    depth = 256,
    reconnectMs = RECONNECT_MS,
    watch: QueueWatch = {},
  ): Promise<RedisTrialRunner> {
    const t = parseQueueUrl(url);
    const client = await openRedis(t);
    const link = new RedisLink(t, reconnectMs);
    const queue = new Queue<TrialJob, TrialResult>(t.name, { connection: link.connection() });
    queue.on('error', link.noteError);
    try {
      const other = await readManifest(client, t);
      if (other && other.sweepId !== manifest.sweepId) {
        const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused');
        const left = Object.values(c).reduce((a, b) => a + b, 0);
        if (left > 0) {
          throw new QueueError(
            `the queue '${t.name}' at ${where(t)} holds ${left} unfinished trial${left === 1 ? '' : 's'} of another sweep (${other.strategyName}, ${other.sweepId}, started ${other.createdAt}): wait for it to finish, or give this sweep its own queue (${where(t)}?name=another)`,
          );
        }
      }
      await client.set(manifestKey(t), JSON.stringify(manifest));
    } catch (e) {
      await queue.close();
      client.disconnect();
      throw e;
    }
    // Each trial waiting for its job listens on the queue (BullMQ's waitUntilFinished): as many as are in flight.
    queue.setMaxListeners(depth + 16);
    const events = new QueueEvents(t.name, { connection: link.connection() });
    events.on('error', link.noteError);
    events.setMaxListeners(depth + 16);
    // The watchdog's own connection, which (unlike the manifest's) reconnects on the link's schedule.
    const watchClient = new Redis(link.connection());
    watchClient.on('error', link.noteError);
    link.onLose(() => {
      watchClient.disconnect();
      void Promise.allSettled([events.close(), queue.close()]);
    });
    await events.waitUntilReady();
    return new RedisTrialRunner(
      {
        t,
        link,
        client,
        watch: watchClient,
        queue,
        events,
        sweepId: manifest.sweepId,
        manifest,
        base: manifest.config.run,
      },
      depth,
      watch,
    );
  }

  share(): void {
    // The workers decode the data from their own catalog and check its hash against the manifest.
  }

  async run(
    trial: number,
    params: Params,
    config: BacktestConfig,
    id?: string,
    mode?: TrialMode,
  ): Promise<Done> {
    const { queue, events, sweepId, base } = this.target;
    if (id === undefined) throw new Error('a queued trial needs its id');
    if (this.#lost) throw this.#lost;
    // A trial over another period than the manifest's (a walk-forward window) says which.
    const period =
      config.run.from !== base.from || config.run.to !== base.to
        ? { from: config.run.from, to: config.run.to }
        : undefined;
    let fail: (e: Error) => void = () => {};
    const lost = new Promise<never>((_, reject) => (fail = reject));
    this.#waiting.add(fail);
    try {
      await Promise.race([this.#clearFailed(id), lost]);
      const data: TrialJob = {
        sweepId,
        trial,
        params,
        ...(period ? { period } : {}),
        ...(mode !== undefined && mode !== 'optimize' ? { mode } : {}),
      };
      // Woken when the watchdog found the job gone from Redis and added it again: wait for the new one.
      let requeued: () => void = () => {};
      const again = (): Promise<'requeued'> => new Promise((res) => (requeued = () => res('requeued')));
      let woken = again();
      this.#out.set(id, { data, requeued: () => requeued() });
      const job = await Promise.race([
        queue.add('trial', data, { jobId: id, attempts: 1, removeOnComplete: false, removeOnFail: false }),
        lost,
      ]);
      let r: TrialResult | 'requeued';
      while (
        (r = (await Promise.race([job.waitUntilFinished(events), woken, lost])) as
          TrialResult | 'requeued') === 'requeued'
      )
        woken = again();
      return r.ok
        ? {
            type: 'done',
            trial,
            ok: true,
            metrics: r.metrics,
            returns: r.returns,
            times: r.times ?? [],
            wallMs: r.wallMs,
          }
        : { type: 'done', trial, ok: false, error: r.error, wallMs: r.wallMs };
    } catch (e) {
      if (this.#closed || e instanceof QueueLostError) throw e;
      // The job failed in BullMQ itself (stalled more often than allowed, or a worker refused it).
      // Not the trial's fault: the sweep runs it again.
      return {
        type: 'done',
        trial,
        ok: false,
        error: `the queue failed the trial: ${(e as Error).message}`,
        wallMs: 0,
        infrastructure: true,
      };
    } finally {
      this.#waiting.delete(fail);
      this.#out.delete(id);
    }
  }

  /**
   * A trial's job that failed for an infrastructure reason (in BullMQ: stalled too often, its
   * worker's thread died) is done as far as BullMQ knows, and adding the same id again would only
   * return it: it is put back to wait instead, so the trial runs again.
   */
  async #clearFailed(id: string): Promise<void> {
    const old = await this.target.queue.getJob(id);
    if (!old) return;
    const state = await old.getState();
    if (state === 'failed') await old.retry('failed');
    else if (state === 'completed') {
      const r = old.returnvalue as TrialResult | null;
      if (r && !r.ok && isInfrastructureFailure(r)) await old.remove();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const { queue, events, client, link, watch } = this.target;
    watch.disconnect();
    if (link.isLost) {
      // Nothing to say to a server that is gone: drop the connections (a graceful close would wait for it).
      // Not awaited: BullMQ's close can stay pending for good once its connections have given up.
      link.lose();
      void Promise.allSettled([events.disconnect(), queue.disconnect()]).then(() =>
        Promise.allSettled([events.close(), queue.close()]),
      );
    } else await Promise.allSettled([events.close(), queue.close()]);
    client.disconnect();
  }
}

interface TrialTargetParts {
  readonly t: QueueTarget;
  readonly link: RedisLink;
  readonly client: Redis;
  /** The watchdog's connection (reconnects with the link). */
  readonly watch: Redis;
  readonly queue: Queue<TrialJob, TrialResult>;
  readonly events: QueueEvents;
  readonly sweepId: string;
  readonly manifest: SweepManifest;
  /** The manifest's period: a job for another period carries its own. */
  readonly base: { readonly from: string; readonly to: string };
}

/** BullMQ's errors about a job whose keys or lock are gone from Redis. */
const JOB_GONE =
  /^(Missing key for job|Missing lock for job|could not renew lock for job|Lock mismatch for job)/;

/** A sweep a worker has prepared: its trials run on `runner` (worker threads holding the strategy and the data). */
export interface PreparedSweep {
  readonly runner: TrialRunner;
  readonly config: BacktestConfig;
}

export interface QueueWorkerOptions {
  readonly url: string;
  /** Worker threads (trials at once). */
  readonly threads: number;
  /** Loads the strategy and the data of a manifest, checks them, and starts the threads; throws a QueueError on a mismatch. */
  readonly prepare: (m: SweepManifest) => Promise<PreparedSweep>;
  /** How long a job's lock lasts without renewal (ms): a killed worker's trial runs again elsewhere after about this long. */
  readonly lockMs?: number;
  readonly onTrial?: (e: { sweepId: string; trial: number; ok: boolean; wallMs: number }) => void;
  readonly onSweep?: (m: SweepManifest) => void;
  /** How long to keep trying after losing Redis before stopping with a QueueLostError (ms). */
  readonly reconnectMs?: number;
  /** A line for the user: something the worker got past (a job that Redis lost). */
  readonly onNote?: (text: string) => void;
}

/**
 * Runs trials from the queue until `stop()` is called: the manifest's sweep is prepared once
 * (and again when the coordinator starts another sweep on the same queue). A worker whose data or
 * strategy differs from the coordinator's refuses: `done` rejects with the QueueError.
 */
export async function startQueueWorker(
  o: QueueWorkerOptions,
): Promise<{ stop: () => Promise<void>; done: Promise<void> }> {
  const t = parseQueueUrl(o.url);
  (await openRedis(t)).disconnect(); // one clear message when Redis is unreachable or too old
  const link = new RedisLink(t, o.reconnectMs ?? RECONNECT_MS);
  // The manifest's connection reconnects on the link's schedule (a Redis restarted mid-sweep is found again).
  const client = new Redis(link.connection());
  client.on('error', link.noteError);
  link.onLose(() => client.disconnect());
  // The sweep being run here. Set in the same tick as the check (before any await), so two jobs
  // arriving together share one preparation: preparing twice would close the first's threads
  // under the trial running on them.
  let current:
    { sweepId: string; ready: Promise<{ manifest: SweepManifest; prepared: PreparedSweep }> } | undefined;
  let fail: (e: Error) => void = () => {};
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    fail = reject;
    finish = resolve;
  });
  const sweepFor = (sweepId: string): Promise<{ manifest: SweepManifest; prepared: PreparedSweep }> => {
    if (current?.sweepId === sweepId) return current.ready;
    const previous = current;
    const ready = readManifest(client, t).then(async (m) => {
      if (!m || m.sweepId !== sweepId)
        throw new QueueError(
          `the job belongs to sweep ${sweepId}, but the queue's manifest is ${m ? `sweep ${m.sweepId}` : 'missing'}: it is left for that sweep's coordinator`,
        );
      // The previous sweep's threads end only once nothing of it runs (its jobs are answered first).
      void previous?.ready.then(
        (p) => p.prepared.runner.close(),
        () => {},
      );
      o.onSweep?.(m);
      return { manifest: m, prepared: await o.prepare(m) };
    });
    current = { sweepId, ready };
    // A failed preparation is not kept: the next job of that sweep tries again.
    ready.catch(() => {
      if (current?.ready === ready) current = undefined;
    });
    return ready;
  };
  const lockMs = o.lockMs ?? 30_000;
  let stopping = false;
  const worker = new QueueWorker<TrialJob, TrialResult>(
    t.name,
    async (job: Job<TrialJob, TrialResult>, token?: string) => {
      let sweep: { manifest: SweepManifest; prepared: PreparedSweep };
      try {
        sweep = await sweepFor(job.data.sweepId);
      } catch (e) {
        // This machine cannot run the sweep (other data or strategy, a missing file): say so (here,
        // and in Redis for the coordinator's warnings), give the job back, and stop taking jobs.
        const err =
          e instanceof QueueError
            ? e
            : new QueueError(
                `sweep ${job.data.sweepId}: this machine cannot run it: ${(e as Error).message}`,
              );
        const who = `${hostname()} (pid ${process.pid})`;
        await client
          .multi()
          .hset(refusalsKey(t), who, JSON.stringify({ sweepId: job.data.sweepId, reason: err.message }))
          .expire(refusalsKey(t), REFUSAL_TTL_S)
          .exec()
          .catch(() => {});
        fail(err);
        // The job goes back to wait at once (no worker may be left to notice its lock lapse).
        await job.moveToWait(token).catch(() => {});
        throw new WaitingError();
      }
      const { manifest, prepared } = sweep;
      const p = job.data.period;
      const config: BacktestConfig = p
        ? { ...prepared.config, run: { ...prepared.config.run, from: p.from, to: p.to } }
        : prepared.config;
      // The job's id is the trial's identity: the config rebuilt here must be the coordinator's.
      const id = trialId(
        manifest.strategyHash,
        job.data.params,
        manifest.dataHash,
        sha256(canonical(config)),
      );
      if (id !== job.id)
        return {
          ok: false,
          error: `this worker rebuilt trial ${job.data.trial} as ${id}, not the job's ${job.id}: the worker and the coordinator run different fxflow versions`,
          wallMs: 0,
        };
      const d = await prepared.runner.run(job.data.trial, job.data.params, config, job.id, job.data.mode);
      // Stopping (Ctrl-C) ends the threads: the trial is not done, so it is not answered; its lock
      // lapses and another worker runs it.
      if (stopping) return new Promise<TrialResult>(() => {});
      // The thread died under the trial: not the trial's answer. Failing the job (rather than
      // answering it) lets the coordinator run it again.
      if (!d.ok && isInfrastructureFailure(d)) throw new Error(d.error);
      o.onTrial?.({ sweepId: job.data.sweepId, trial: job.data.trial, ok: d.ok, wallMs: d.wallMs });
      return d.ok
        ? { ok: true, metrics: d.metrics, returns: d.returns, times: d.times, wallMs: d.wallMs }
        : { ok: false, error: d.error, wallMs: d.wallMs };
    },
    {
      connection: link.connection(),
      concurrency: Math.max(1, o.threads),
      lockDuration: lockMs,
      stalledInterval: Math.max(1000, Math.floor(lockMs / 2)),
      maxStalledCount: 5,
      autorun: true,
    },
  );
  // A lost connection is the link's to judge (bounded retry); any other error of the queue stops the worker.
  worker.on('error', (e) => {
    if (isConnectionError(e)) link.noteError(e);
    // A job that Redis no longer holds (emptied or restarted empty): its coordinator queues it again; this worker goes on.
    else if (JOB_GONE.test(e.message))
      o.onNote?.(`${e.message}: Redis lost this job (emptied or restarted); its coordinator queues it again`);
    else fail(new QueueError(`the queue at ${where(t)} failed: ${e.message}`));
  });
  // Closing starts the moment the link is lost: BullMQ then skips its pauses after failed
  // commands (they kept an idle process alive for several seconds after giving up).
  link.onLose(() => void worker.close(true).catch(() => {}));
  void link.lost.then((reason) => fail(new QueueLostError(where(t), reason, link.reconnectMs)));
  const stop = async (): Promise<void> => {
    stopping = true;
    const c = current;
    current = undefined;
    if (link.isLost) {
      // The server is gone: end the threads first (a trial still running would keep the process
      // alive), then drop the connections without waiting on them. BullMQ's close can stay pending
      // for good once its connections have given up (seen under load: the worker never exited).
      await c?.ready.then(
        (p) => p.prepared.runner.close(),
        () => {},
      );
      void Promise.allSettled([worker.disconnect()])
        .then(() => worker.close(true))
        .catch(() => {});
    } else {
      await worker.close(true);
      await c?.ready.then(
        (p) => p.prepared.runner.close(),
        () => {},
      );
    }
    client.disconnect();
    finish();
  };
  void done.catch(() => {});
  await worker.waitUntilReady();
  return { stop, done };
}
