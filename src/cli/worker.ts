import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { parseDate } from '../app/config.ts';
import { loadStrategy, type LoadedStrategy } from '../app/load-strategy.ts';
import {
  loadMemberSpecs,
  type LoadedPortfolio,
  type MemberSpec,
  type SweptPortfolio,
} from '../app/portfolio.ts';
import { dataCatalog } from '../app/sources.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { WorkerPool } from '../research/pool.ts';
import type { PreparedSweep, SweepManifest } from '../research/queue.ts';
import { catalogSourceHash } from '../research/series-cache.ts';
import { loadSweepData } from '../research/sweep-data.ts';
import { canonical, sha256 } from '../research/sweep.ts';
import { fileSweepSource, queueModule, sameCommand, workerInit } from './optimize.ts';

export interface WorkerArgs {
  queue: string;
  threads?: number;
  catalog?: string;
  data?: string;
  strategy?: string;
  portfolioDir?: string;
  lockMs: number;
  reconnectMs?: number;
}

/** `fxflow worker`'s flags. */
export function workerCommand(y: Argv): Argv {
  return (
    y
      .option('queue', {
        type: 'string',
        demandOption: true,
        describe: 'The Redis queue `fxflow optimize --queue` fills: redis://HOST:PORT/DB[?name=QUEUE]',
      })
      .option('threads', { type: 'number', describe: 'Worker threads, trials at once (default: all cores)' })
      .option('catalog', {
        type: 'string',
        describe:
          "This machine's copy of the catalog (default: the coordinator's path); its data must hash the same",
      })
      .option('data', {
        type: 'string',
        describe: "This machine's copy of the coordinator's --data file or folder",
      })
      .option('strategy', {
        type: 'string',
        describe:
          "This machine's copy of the strategy file (default: the coordinator's path); its content must be the same",
      })
      .option('portfolio-dir', {
        type: 'string',
        describe:
          "A member sweep's (optimize --portfolio --member): this machine's copy of the portfolio file's folder, where each member's module is found at its path from the coordinator's (default: the coordinator's paths); their content must be the same",
      })
      .option('lock-ms', {
        type: 'number',
        default: 30_000,
        describe:
          "How long a trial's lock lasts without renewal: a killed worker's trial runs again elsewhere after about this long",
      })
      // No yargs default: its value (RECONNECT_MS) lives in research/queue.ts, loaded only when a worker starts.
      .option('reconnect-ms', {
        type: 'number',
        describe:
          'How long to keep trying to reach Redis again after losing it before stopping (default 20000)',
      })
      .example(
        '$0 worker --queue redis://10.0.0.5:6379/0',
        'Run trials of the sweeps queued on that Redis, on every core',
      )
  );
}

type QueueErrorClass = Awaited<ReturnType<typeof queueModule>>['QueueError'];

/** The sweep's strategy file on this machine (--strategy, else the coordinator's path), checked against the coordinator's. */
async function strategyHere(
  a: WorkerArgs,
  m: SweepManifest,
  QueueError: QueueErrorClass,
): Promise<LoadedStrategy> {
  const file = resolve(a.strategy ?? m.strategyFile);
  if (!existsSync(file))
    throw new QueueError(
      `sweep ${m.sweepId}: the strategy file ${file} is not on this machine: give its copy with --strategy`,
    );
  const hash = sha256(readFileSync(file));
  if (hash !== m.strategyHash)
    throw new QueueError(
      `sweep ${m.sweepId}: ${file} is not the coordinator's strategy (content hash ${hash.slice(0, 12)}…, the sweep's ${m.strategyHash.slice(0, 12)}…): the workers need the same strategy file`,
    );
  return loadStrategy(file, []);
}

/**
 * A member sweep's portfolio on this machine: each member's module where the coordinator named it,
 * or with --portfolio-dir at its path from the coordinator's portfolio file's folder, checked
 * against the hash of the coordinator's code (a mismatch names the member and the file). The
 * members keep the manifest's params and limits (no portfolio file is read here), and the swept
 * member and `objectiveOf` are the coordinator's: the threads load it as local threads do.
 */
async function portfolioHere(
  a: WorkerArgs,
  m: SweepManifest,
  p: SweptPortfolio,
  QueueError: QueueErrorClass,
): Promise<LoadedPortfolio> {
  // The trials' ids are built on this hash: a portfolio that does not make it is another fxflow's manifest.
  if (sha256(canonical(p)) !== m.strategyHash)
    throw new QueueError(
      `sweep ${m.sweepId}: the manifest's portfolio does not hash to the sweep's strategy hash: the worker and the coordinator run different fxflow versions`,
    );
  const home = dirname(p.file);
  const specs: MemberSpec[] = [];
  for (const x of p.members) {
    const path = relative(home, x.module);
    const file = a.portfolioDir !== undefined ? resolve(a.portfolioDir, path) : x.module;
    if (!existsSync(file))
      throw new QueueError(
        `sweep ${m.sweepId}: member '${x.name}': its module ${file} is not on this machine: ${a.portfolioDir !== undefined ? `--portfolio-dir ${a.portfolioDir} has no ${path} (the module's path from the coordinator's portfolio file, ${p.file})` : "give this machine's copy of the portfolio file's folder with --portfolio-dir"}`,
      );
    const hash = sha256(readFileSync(file));
    if (hash !== x.moduleHash)
      throw new QueueError(
        `sweep ${m.sweepId}: member '${x.name}': ${file} is not the coordinator's module (content hash ${hash.slice(0, 12)}…, the sweep's ${x.moduleHash.slice(0, 12)}…): the workers need the same strategy files`,
      );
    specs.push({ module: file, name: x.name, params: x.params, ...(x.risk ? { risk: x.risk } : {}) });
  }
  return {
    ...(await loadMemberSpecs(specs, m.strategyFile)),
    sweep: { member: p.member, of: p.objectiveOf },
  };
}

/** Loads and checks a sweep's strategy (or portfolio) and data on this machine, and starts the worker threads. */
async function prepareSweep(a: WorkerArgs, m: SweepManifest, threads: number): Promise<PreparedSweep> {
  const { QueueError } = await queueModule();
  const loaded: LoadedStrategy = m.portfolio
    ? await portfolioHere(a, m, m.portfolio, QueueError)
    : await strategyHere(a, m, QueueError);
  const instruments = loadInstruments();
  const from = parseDate(m.config.run.from);
  const to = parseDate(m.config.run.to);
  let source: Pick<Parameters<typeof loadSweepData>[0], 'candles' | 'available' | 'origin'>;
  let dataPath: string;
  let cache: Parameters<typeof loadSweepData>[0]['cache'];
  if ('catalog' in m.data) {
    dataPath = resolve(a.catalog ?? m.data.catalog);
    if (!existsSync(dataPath))
      throw new QueueError(
        `sweep ${m.sweepId}: the catalog ${dataPath} is not on this machine: give its copy with --catalog`,
      );
    source = await dataCatalog(dataPath);
    const root = dataPath;
    cache = { dir: join(root, '.cache'), sourceHash: (i, g) => catalogSourceHash(root, i, g, from, to) };
  } else {
    dataPath = resolve(a.data ?? m.data.file);
    if (!existsSync(dataPath))
      throw new QueueError(
        `sweep ${m.sweepId}: the data ${dataPath} is not on this machine: give its copy with --data`,
      );
    source = fileSweepSource(dataPath, m.data, m.config, instruments);
  }
  const data = await loadSweepData({
    strategy: loaded.strategy,
    name: loaded.name,
    params: m.subscriptionParams,
    currency: m.config.account.currency,
    instruments,
    candles: source.candles,
    available: source.available,
    ...(source.origin ? { origin: source.origin } : {}),
    from,
    to,
    ...(cache ? { cache } : {}),
  });
  if (data.dataHash !== m.dataHash) {
    throw new QueueError(
      `sweep ${m.sweepId}: the data here (${dataPath}, ${data.candles} candles) is not the coordinator's (content hash ${data.dataHash.slice(0, 12)}…, the sweep's ${m.dataHash.slice(0, 12)}…): every worker needs the same catalog; copy it, or point --catalog/--data at the same files`,
    );
  }
  // The threads load what local threads would: the strategy file, or the portfolio with its swept member.
  const pool = await WorkerPool.start(threads, workerInit(loaded));
  pool.share(data.series);
  process.stderr.write(
    `fxflow worker: sweep ${m.sweepId} (${m.portfolio ? `member ${m.portfolio.member} of a portfolio of ${m.portfolio.members.length}` : m.strategyName}): ${data.candles} candles checked against the sweep's data hash; ${threads} thread${threads === 1 ? '' : 's'}\n`,
  );
  return { runner: pool, config: m.config };
}

/** Runs trials from the queue until interrupted (Ctrl-C, SIGTERM) or refused. */
export async function worker(a: WorkerArgs): Promise<void> {
  const threads = Math.max(1, Math.floor(a.threads ?? availableParallelism()));
  let ran = 0;
  const { QueueError, QueueLostError, describeQueue, startQueueWorker } = await queueModule();
  const w = await startQueueWorker({
    url: a.queue,
    threads,
    lockMs: a.lockMs,
    ...(a.reconnectMs !== undefined ? { reconnectMs: a.reconnectMs } : {}),
    prepare: (m) => prepareSweep(a, m, threads),
    onNote: (text) => process.stderr.write(`fxflow worker: ${text}\n`),
    onTrial: (e) => {
      ran++;
      process.stderr.write(
        `fxflow worker: ${e.trial >= 0 ? `trial ${e.trial}` : `window ${-e.trial}'s out-of-sample run`} of ${e.sweepId} ${e.ok ? 'done' : 'failed'} in ${(e.wallMs / 1000).toFixed(2)} s\n`,
      );
    },
  });
  process.stderr.write(
    `fxflow worker: waiting for trials on ${describeQueue(a.queue)} (${threads} thread${threads === 1 ? '' : 's'}; Ctrl-C to stop)\n`,
  );
  const stop = (): void => {
    void w.stop();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await w.done;
  } catch (e) {
    await w.stop().catch(() => {});
    // Given up: whatever BullMQ still holds (a watchdog timer on a blocking read of the lost server
    // runs up to its block time plus a second) must not keep this process alive. Unref'd: it only
    // fires when something else is still pending a second after the message is printed.
    setTimeout(() => process.exit(typeof process.exitCode === 'number' ? process.exitCode : 1), 1000).unref();
    if (e instanceof QueueLostError) {
      throw new QueueError(
        `${e.message}: this worker stopped after ${ran} trial${ran === 1 ? '' : 's'}. Nothing recorded is lost: a trial it was running goes back to the queue once its lock lapses (--lock-ms ${a.lockMs}) and runs on another worker; when Redis is back, start this worker again (${sameCommand()})`,
      );
    }
    throw e;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  process.stderr.write(`fxflow worker: stopped after ${ran} trial${ran === 1 ? '' : 's'}\n`);
}
