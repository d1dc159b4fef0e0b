import {
  dataFileInput,
  PORTFOLIO_NETTING_FLAG,
  runFlagOverrides,
  SIM_FLAGS,
  type SimFlagArgs,
} from './sim-flags.ts';
import { runGiven, runParams } from '../app/run-choices.ts';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { loadInstruments } from '../domain/instrument.ts';
import { OBJECTIVES, type ObjectiveFn, type ObjectiveName } from '../research/metrics.ts';
import { WorkerPool, type TrialRunner } from '../research/pool.ts';
import type { QueueError, QueueLostError } from '../research/queue.ts';
import { SEARCHES, type SearchName } from '../research/search.ts';
import { buildSpace, SpaceError } from '../research/space.ts';
import { loadSweepData } from '../research/sweep-data.ts';
import { catalogSourceHash, fileSourceHash } from '../research/series-cache.ts';
import { SweepStore } from '../research/store.ts';
import {
  canonical,
  runSweep,
  sha256,
  sweepHashes,
  type RankedTrial,
  type SweepResult,
} from '../research/sweep.ts';
import { writeSweepReport } from '../report/sweep-report.ts';
import { loadConfig, parseDate, readJsonFile, type BacktestConfig } from '../app/config.ts';
import { configCatalog, withCatalogResolved } from '../adapters/catalog/location.ts';
import { dataCatalog, fileSource, type FileRead } from '../app/sources.ts';
import { loadStrategy, StrategyLoadError, type LoadedStrategy } from '../app/load-strategy.ts';
import {
  isPortfolio,
  loadPortfolio,
  memberSpecs,
  readPortfolioFile,
  type LoadedPortfolio,
  type SweptPortfolio,
} from '../app/portfolio.ts';
import type { WorkerInit } from '../research/worker.ts';
import { formatCount, ProgressBar } from './progress.ts';

/**
 * research/queue.ts, loaded only by a run with --queue (and `fxflow worker`): it loads BullMQ and
 * ioredis, about 0.16 s of CPU that every other command paid at start-up when it was a static import.
 */
export const queueModule = (): Promise<typeof import('../research/queue.ts')> =>
  import('../research/queue.ts');

export interface OptimizeArgs extends SimFlagArgs {
  strategy?: string;
  /** A member sweep: the portfolio file, the member whose params are swept, whose figures the objective reads. */
  portfolio?: string;
  member?: string;
  objectiveOf?: 'member' | 'account';
  param?: (string | number)[];
  constraint?: string[];
  space?: string;
  search: SearchName;
  trials?: number;
  seed: number;
  objective: ObjectiveName;
  workers?: number;
  batch: number;
  lag: number;
  out?: string;
  json?: boolean;
  top: number;
  pboBlocks?: number;
  instrument?: string;
  granularity?: string;
  from?: string;
  to?: string;
  data?: string;
  format?: string;
  config?: string;
  balance?: string;
  currency?: string;
  portfolioNetting?: string;
  spread?: string;
  spreadPips?: number;
  path?: string;
  financing?: boolean;
  commission?: string;
  runsDir?: string;
  queue?: string;
  reconnectMs?: number;
  idleWarnMs?: number;
  /** The command a queue note names (walkforward sets it). */
  queueCommand?: string;
}

/** `fxflow optimize`'s flags. */
export function optimizeCommand(y: Argv): Argv {
  return (
    y
      .positional('strategy', {
        type: 'string',
        describe: 'Path to a strategy module, e.g. strategies/sma-cross.ts (or --portfolio with --member)',
      })
      .option('portfolio', {
        type: 'string',
        describe:
          "A portfolio file (docs/portfolios.md): sweep one member's params (--member) while the others keep theirs, each trial a whole portfolio backtest on one account",
      })
      .option('member', {
        type: 'string',
        describe: 'With --portfolio: the name of the member whose params --param sweeps',
      })
      .option('objective-of', {
        type: 'string',
        choices: ['member', 'account'],
        describe:
          "With --portfolio: read the objective from the member's own figures (its book; the default) or from the account's",
      })
      .option('param', {
        type: 'array',
        string: true,
        describe: 'A swept param: name=from:to:step (range), name=a,b,c (list) or name=value (fixed)',
      })
      .option('constraint', {
        type: 'array',
        string: true,
        describe:
          "Keep only points where this holds, e.g. 'fast < slow' (names, numbers, + - * / %, comparisons, and/or/not)",
      })
      .option('space', {
        type: 'string',
        describe:
          'A JSON file {"params": {"fast": "5:50:5", "slow": [20, 30]}, "constraints": ["fast < slow"]} (merged with --param/--constraint)',
      })
      .option('search', {
        type: 'string',
        choices: SEARCHES,
        default: 'grid',
        describe:
          'grid: every point; random: seeded sample; tpe: tree-structured Parzen estimator (adaptive)',
      })
      .option('trials', {
        type: 'number',
        describe: 'Number of trials (default: the whole space for grid, 100 otherwise)',
      })
      .option('seed', {
        type: 'number',
        default: 1,
        describe: 'Seed of random and tpe (same seed: same trials)',
      })
      .option('objective', {
        type: 'string',
        choices: OBJECTIVES,
        default: 'sharpe',
        describe:
          "What to maximise: netPL, sharpe, sortino, calmar, profitFactor, or custom (the strategy module's exported `objective(metrics)`)",
      })
      .option('workers', {
        type: 'number',
        describe: 'Trials at once: this process and workers − 1 threads (default: all cores)',
      })
      .option('batch', { type: 'number', default: 1, describe: 'tpe: points per proposal' })
      .option('lag', {
        type: 'number',
        default: 2,
        describe:
          'tpe: a proposal may not see the latest <lag> trials, so up to lag+batch trials run while the next is proposed; more workers than that wait',
      })
      .option('out', {
        type: 'string',
        describe:
          'Sweep folder (default: runs/sweeps/<strategy>-<hash of the sweep>; the same command resumes it)',
      })
      .option('top', { type: 'number', default: 10, describe: 'Trials to print' })
      .option('pbo-blocks', { type: 'number', describe: 'CSCV blocks for PBO (even; default 16)' })
      .option('json', { type: 'boolean', describe: 'Print the sweep summary as one JSON document' })
      .option('instrument', {
        type: 'string',
        describe: 'Instrument, for strategies that take an `instrument` param',
      })
      .option('granularity', {
        type: 'string',
        describe: 'Granularity, for strategies that take a `granularity` param',
      })
      .option('from', { type: 'string', describe: 'Start, UTC date or RFC 3339 time' })
      .option('to', { type: 'string', describe: 'End, exclusive' })
      .option('config', { type: 'string', describe: 'A JSON file merged over config/default.json' })
      // The data, fill and cost flags, as backtest takes them (sim-flags.ts).
      .options(SIM_FLAGS)
      .option('balance', { type: 'string', describe: 'Initial balance' })
      .option('currency', { type: 'string', describe: 'Account currency' })
      .options(PORTFOLIO_NETTING_FLAG)
      .option('runs-dir', {
        type: 'string',
        describe: 'Where sweep folders are saved (under <runs-dir>/sweeps)',
      })
      .option('queue', {
        type: 'string',
        describe:
          'Put the trials on a BullMQ queue in Redis (redis://HOST:PORT/DB[?name=QUEUE]) for `fxflow worker` processes on any machine; results come back to this folder',
      })
      // No yargs default: its value (RECONNECT_MS) lives in research/queue.ts, loaded only with --queue.
      .option('reconnect-ms', {
        type: 'number',
        describe:
          'With --queue: how long to keep trying to reach Redis again after losing it before stopping (the sweep is resumable; default 20000)',
      })
      .option('idle-warn-ms', {
        type: 'number',
        describe:
          'With --queue: warn, naming the reasons, when trials wait and no worker has taken one for this long (default 60000)',
      })
      .example(
        "$0 optimize strategies/sma-cross.ts --param fast=5:50:5 --param slow=20,30,50,100 --constraint 'fast < slow'",
        'Grid over fast × slow',
      )
      .example(
        '$0 optimize strategies/sma-cross.ts --param fast=2:60:1 --param slow=10:300:5 --search tpe --trials 200 --objective sortino',
        'Adaptive search',
      )
  );
}

/** The flags given, as a configuration fragment (the same as a backtest reads them: sim-flags.ts). */
export function overrides(a: OptimizeArgs): Record<string, Record<string, string | number | boolean>> {
  return runFlagOverrides(a);
}

/** --space file: params as "from:to:step" strings or lists, constraints as strings. */
function readSpaceFile(path: string): { params: string[]; constraints: string[] } {
  const j = readJsonFile(path) as { params?: Record<string, unknown>; constraints?: unknown };
  const params: string[] = [];
  for (const [k, v] of Object.entries(j.params ?? {})) {
    if (Array.isArray(v)) params.push(`${k}=${v.join(',')}`);
    else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      params.push(`${k}=${v}`);
    else throw new SpaceError(`${path}: params.${k} must be "from:to:step", a list or a value`);
  }
  if (
    j.constraints !== undefined &&
    !(Array.isArray(j.constraints) && j.constraints.every((c) => typeof c === 'string'))
  ) {
    throw new SpaceError(`${path}: constraints must be a list of strings, e.g. ["fast < slow"]`);
  }
  return { params, constraints: (j.constraints as string[] | undefined) ?? [] };
}

/** A sweep's progress detail: trials done of all, their rate, the time left, the failures. */
export function sweepDetail(p: {
  done: number;
  total: number;
  ran: number;
  failed: number;
  elapsedMs: number;
}): string {
  const rate = p.ran / (p.elapsedMs / 1000);
  const eta = rate > 0 ? (p.total - p.done) / rate : NaN;
  const etaText = Number.isFinite(eta)
    ? eta >= 60
      ? `${Math.floor(eta / 60)}m${String(Math.round(eta % 60)).padStart(2, '0')}s`
      : `${eta.toFixed(0)}s`
    : '…';
  return `${p.done}/${p.total}  ${rate.toFixed(2)} trials/s  ETA ${etaText}${p.failed ? `  ${p.failed} failed` : ''}`;
}

/**
 * The binary cache of decoded series: `<catalog>/.cache/` (or `<--data folder or file>.fxflow-cache/`),
 * keyed by the hash of the source files over the period.
 */
export function cacheFor(
  a: OptimizeArgs,
  config: BacktestConfig,
): { dir: string; sourceHash: (instrument: string, granularity: string) => string | undefined } {
  const from = parseDate(config.run.from);
  const to = parseDate(config.run.to);
  if (a.data) {
    const path = resolve(a.data);
    let hash: string | undefined;
    // One-sided data gets its other side from the spread settings as it is read: they are part of the key.
    return {
      dir: `${path.replace(/[\\/]$/, '')}.fxflow-cache`,
      sourceHash: () =>
        (hash ??= sha256(
          `${fileSourceHash(path)}:${a.format ?? ''}${a.timezone !== undefined || a.side !== undefined ? `:${a.timezone ?? ''}:${a.side ?? ''}` : ''}:${canonical(config.data)}`,
        )),
    };
  }
  const root = configCatalog(config);
  return { dir: join(root, '.cache'), sourceHash: (i, g) => catalogSourceHash(root, i, g, from, to) };
}

/** What optimize and walkforward share: config, strategy, space, trial count, objective. */
export async function prepare(a: OptimizeArgs): Promise<{
  config: BacktestConfig;
  instruments: ReturnType<typeof loadInstruments>;
  loaded: Awaited<ReturnType<typeof loadStrategy>>;
  space: ReturnType<typeof buildSpace>;
  trials: number;
  objectiveFn: ObjectiveFn | undefined;
  workers: number;
}> {
  // The catalog as the folder it names now: the sweep's config.json reads the same one from anywhere.
  const config: BacktestConfig = withCatalogResolved(loadConfig(a.config, overrides(a)));
  const instruments = loadInstruments();
  let loaded: LoadedStrategy;
  // The params the space is built on, and the module whose `objective` --objective custom reads.
  let swept: LoadedStrategy;
  if (a.portfolio !== undefined || a.member !== undefined) {
    const p = await memberSweep(a, config);
    loaded = p;
    swept = p.members.find((m) => m.name === a.member)!;
  } else {
    if (a.objectiveOf !== undefined)
      throw new SpaceError(
        `--objective-of ${a.objectiveOf} is for a member sweep: give --portfolio <file> --member <name>`,
      );
    if (a.strategy === undefined)
      throw new SpaceError(
        'give a strategy module (fxflow optimize strategies/sma-cross.ts …) or --portfolio <file> --member <name>',
      );
    const probe = await loadStrategy(a.strategy, []);
    // The strategy's own instrument and granularity unless the user named others (as `backtest`: run-choices.ts).
    const { implicit } = runParams(probe.strategy.params, [], config, runGiven(a.config, overrides(a)));
    loaded = swept = await loadStrategy(a.strategy, implicit);
  }
  const fromFile = a.space ? readSpaceFile(a.space) : { params: [], constraints: [] };
  const paramSpecs = [...fromFile.params, ...(a.param ?? []).map(String)];
  if (paramSpecs.length === 0)
    throw new SpaceError(
      'give the space to search: --param fast=5:50:5 --param slow=20,30,50 (or --space file.json)',
    );
  const space = buildSpace(swept.params, paramSpecs, [
    ...fromFile.constraints,
    ...(a.constraint ?? []).map(String),
  ]);
  const valid = space.validPoints().length;
  if (valid === 0)
    throw new SpaceError(
      `no point of the space satisfies the constraints (${space.constraints.map((c) => c.source).join('; ')})`,
    );
  const trials = a.trials ?? (a.search === 'grid' ? valid : Math.min(100, valid));
  if (!(Number.isInteger(trials) && trials > 0))
    throw new SpaceError(`--trials must be a whole number above 0 (got ${a.trials})`);
  if (!(Number.isInteger(a.batch) && a.batch > 0))
    throw new SpaceError(`--batch must be a whole number above 0 (got ${a.batch})`);
  if (!(Number.isInteger(a.lag) && a.lag >= 0))
    throw new SpaceError(`--lag must be a whole number, 0 or more (got ${a.lag})`);
  let objectiveFn: ObjectiveFn | undefined;
  if (a.objective === 'custom') {
    const { tsImport } = await import('tsx/esm/api');
    const mod = (await tsImport(swept.file, import.meta.url)) as {
      objective?: unknown;
      default?: { objective?: unknown };
    };
    const f = mod.objective ?? mod.default?.objective;
    if (typeof f !== 'function')
      throw new StrategyLoadError(
        swept.file,
        '--objective custom: the module exports no `objective` function (export function objective(metrics) { return metrics.netPL / (1 + metrics.maxDrawdownPct) })',
      );
    objectiveFn = f as ObjectiveFn;
  }
  const workers = Math.max(1, Math.floor(a.workers ?? availableParallelism()));
  return { config, instruments, loaded, space, trials, objectiveFn, workers };
}

/**
 * A member sweep's portfolio: the --portfolio file loaded as `backtest --portfolio` loads it, with
 * the member to sweep and whose figures the objective reads. Errors say what to give instead.
 */
async function memberSweep(a: OptimizeArgs, config: BacktestConfig): Promise<LoadedPortfolio> {
  if (a.portfolio === undefined)
    throw new SpaceError(
      `--member ${a.member} needs --portfolio <file>: the member is a strategy of that portfolio (to sweep one strategy alone, give its module instead)`,
    );
  if (a.strategy !== undefined)
    throw new SpaceError(
      `give a strategy module or --portfolio <file> --member <name>, not both ('${a.strategy}' and --portfolio ${a.portfolio})`,
    );
  const p = await loadPortfolio(
    readPortfolioFile(a.portfolio),
    config,
    runGiven(a.config, overrides(a)),
    a.portfolio,
  );
  const names = p.members.map((m) => m.name);
  if (a.member === undefined || !names.includes(a.member))
    throw new SpaceError(
      `${a.member === undefined ? '--portfolio needs --member <name>, the strategy whose params to sweep' : `--member '${a.member}' is not in ${a.portfolio}`}; its members are: ${names.join(', ')}`,
    );
  const of = a.objectiveOf ?? 'member';
  return { ...p, name: a.member, sweep: { member: a.member, of } };
}

/** What a sweep's worker threads load: the strategy file, or a member sweep's portfolio. */
export function workerInit(loaded: LoadedStrategy): WorkerInit {
  return isPortfolio(loaded) && loaded.sweep
    ? { strategyFile: loaded.file, portfolio: { members: memberSpecs(loaded), sweep: loaded.sweep } }
    : { strategyFile: loaded.file };
}

/**
 * What a member sweep adds to its hash, its sweep.json and its queue's manifest: every member's
 * module (name, file and the hash of its code), params and limits, and the swept member. Nothing
 * for one strategy.
 */
export function portfolioKey(loaded: LoadedStrategy): SweptPortfolio | undefined {
  if (!isPortfolio(loaded) || !loaded.sweep) return undefined;
  return {
    file: resolve(loaded.file),
    member: loaded.sweep.member,
    objectiveOf: loaded.sweep.of,
    members: memberSpecs(loaded).map((m) => ({ ...m, moduleHash: sha256(readFileSync(m.module)) })),
  };
}

/** Loads the strategy, the space and the data, runs the sweep, prints the summary. */
export async function optimize(a: OptimizeArgs): Promise<SweepResult> {
  const { config, instruments, loaded, space, trials, objectiveFn, workers } = await prepare(a);
  // With --queue, Redis is checked first (one clear message when it is unreachable or too old).
  const q = a.queue !== undefined ? await queueModule() : undefined;
  if (q) (await q.openRedis(q.parseQueueUrl(a.queue!))).disconnect();
  // Threads start now (tsx, modules, the strategy: about half a second of CPU each) while the data
  // is decoded. This thread is one of the --workers (it has the strategy loaded already): --workers 1
  // starts no thread, 2 start one.
  let pool: Promise<TrialRunner> =
    a.queue !== undefined
      ? Promise.reject(new Error('the queue was not opened'))
      : WorkerPool.start(workers, workerInit(loaded), { loaded, instruments });
  pool.catch(() => {}); // a start failure surfaces when the sweep awaits the pool
  let result: SweepResult;
  let data: Awaited<ReturnType<typeof loadSweepData>>;
  const bar = new ProgressBar('optimize', process.stderr, { delayMs: 0, everyMs: 200 });
  try {
    const source = a.data
      ? fileSweepSource(a.data, dataFileInput(a), config, instruments)
      : await dataCatalog(configCatalog(config));
    data = await loadSweepData({
      strategy: loaded.strategy,
      name: loaded.name,
      params: space.params(space.validPoints()[0]!),
      currency: config.account.currency,
      instruments,
      candles: source.candles,
      available: source.available,
      origin: source.origin,
      from: parseDate(config.run.from),
      to: parseDate(config.run.to),
      cache: cacheFor(a, config),
    });
    if (data.candles === 0)
      throw new SpaceError(
        `no candles between ${config.run.from} and ${config.run.to} for ${data.series.map((s) => `${s.instrument} ${s.granularity}`).join(', ')}: check --from/--to and the data`,
      );
    // A member sweep's strategy is its whole portfolio: its hash identifies the sweep and its trials.
    const portfolio = portfolioKey(loaded);
    const { strategyHash, configHash } = sweepHashes(loaded.file, config, portfolio);
    const sweepHash = sha256(
      canonical({
        strategyHash,
        configHash,
        dataHash: data.dataHash,
        dims: space.dims,
        constraints: space.constraints.map((c) => c.source),
        base: space.base,
        search: a.search,
        seed: a.seed,
        trials,
        batch: a.batch,
        lag: a.lag,
        objective: a.objective,
      }),
    ).slice(0, 10);
    const dir = resolve(a.out ?? join(config.run.runsDir, 'sweeps', `${loaded.name}-${sweepHash}`));
    if (a.queue !== undefined) {
      // The trials go to Redis; `fxflow worker` processes read this manifest, check their data against its hash, and run them.
      pool = openSweepQueue(q!, a, a.queue, `${loaded.name}-${sweepHash}`, loaded, space, config, {
        strategyHash,
        configHash,
        dataHash: data.dataHash,
        ...(portfolio ? { portfolio } : {}),
      });
      pool.catch(() => {});
      await pool;
    }
    result = await runSweep({
      strategyFile: loaded.file,
      strategyName: loaded.name,
      ...(portfolio ? { portfolio } : {}),
      space,
      search: a.search,
      trials,
      seed: a.seed,
      objective: a.objective,
      ...(objectiveFn ? { objectiveFn } : {}),
      workers,
      batch: a.batch,
      lag: a.lag,
      config,
      series: data.series,
      dataHash: data.dataHash,
      data:
        a.data !== undefined
          ? { file: resolve(a.data), ...(a.format !== undefined ? { format: a.format } : {}) }
          : { catalog: configCatalog(config) },
      dir,
      pool,
      ...(a.pboBlocks !== undefined ? { pboBlocks: a.pboBlocks } : {}),
      onProgress: (p) => bar.show(p.total > 0 ? p.done / p.total : 1, sweepDetail(p), p.done >= p.total),
    }).catch((e: unknown) => {
      throw q && e instanceof q.QueueLostError
        ? lostRedis(
            q,
            e,
            'sweep',
            dir,
            space.dims.map((d) => d.name),
          )
        : e;
    });
  } finally {
    // The sweep closes its pool; this closes it too when anything failed before (else workers keep the process alive).
    await (await pool.catch(() => undefined))?.close();
  }
  bar.done();
  const page = sweepPage(result.dir);
  if (a.json)
    process.stdout.write(
      `${JSON.stringify({ ...result, ...(q ? { queue: q.describeQueue(a.queue!) } : {}), data: { candles: data.candles, decodeMs: Math.round(data.decodeMs), hash: data.dataHash, cachedSeries: data.cached } })}\n`,
    );
  else
    process.stdout.write(
      `${formatSweep(result, a.top, data, q ? q.describeQueue(a.queue!) : undefined)}${page ? `Sweep page: ${page}\n` : ''}`,
    );
  return result;
}

/** A --data file or folder as a sweep reads it: its candles, and its name as the trials' data source. */
export function fileSweepSource(
  path: string,
  read: string | FileRead | undefined,
  config: BacktestConfig,
  instruments: ReturnType<typeof loadInstruments>,
) {
  return {
    candles: fileSource(path, read, config, instruments),
    available: (): boolean => false,
    origin: () => ({ source: resolve(path), sides: 'unknown' as const, synthetic: false }),
  };
}

/**
 * Opens the Redis queue of a sweep or walk-forward with its manifest: what `fxflow worker`
 * processes read to check their strategy (or a member sweep's portfolio: every member's module)
 * and data against the coordinator's before running trials.
 */
export function openSweepQueue(
  q: Awaited<ReturnType<typeof queueModule>>,
  a: OptimizeArgs,
  url: string,
  sweepId: string,
  loaded: { readonly name: string; readonly file: string },
  space: ReturnType<typeof buildSpace>,
  config: BacktestConfig,
  hashes: {
    readonly strategyHash: string;
    readonly configHash: string;
    readonly dataHash: string;
    /** A member sweep's portfolio (portfolioKey): its hash is strategyHash. */
    readonly portfolio?: SweptPortfolio;
  },
): Promise<TrialRunner> {
  return q.RedisTrialRunner.open(
    url,
    {
      sweepId,
      strategyName: loaded.name,
      strategyFile: loaded.file,
      strategyHash: hashes.strategyHash,
      ...(hashes.portfolio ? { portfolio: hashes.portfolio } : {}),
      config,
      configHash: hashes.configHash,
      dataHash: hashes.dataHash,
      data:
        a.data !== undefined
          ? { ...dataFileInput(a)!, file: resolve(a.data) }
          : { catalog: configCatalog(config) },
      subscriptionParams: space.params(space.validPoints()[0]!),
      createdAt: new Date().toISOString(),
    },
    undefined,
    a.reconnectMs,
    {
      ...(a.idleWarnMs !== undefined ? { idleWarnMs: a.idleWarnMs } : {}),
      onNote: (text) =>
        process.stderr.write(
          `${process.stderr.isTTY ? '\r\x1b[K' : ''}fxflow ${a.queueCommand ?? 'optimize'}: ${text}\n`,
        ),
    },
  );
}

/** The command line as typed, for "run the same command again" (a password in a redis:// URL hidden). */
export function sameCommand(): string {
  const q = (x: string): string => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`);
  return `fxflow ${process.argv
    .slice(2)
    .map((x) => q(x.replace(/(redis:\/\/[^:@/]*:)[^@/]*@/, '$1***@')))
    .join(' ')}`;
}

/**
 * The one message of a sweep (or walk-forward) that lost Redis: nothing recorded is lost, and the
 * same command picks up. `dirs`: the sweep folders to count recorded trials in.
 */
export function lostRedis(
  q: Awaited<ReturnType<typeof queueModule>>,
  e: QueueLostError,
  what: 'sweep' | 'walk-forward',
  dir: string,
  params: readonly string[],
  dirs: readonly string[] = [dir],
): QueueError {
  let recorded = 0;
  for (const d of dirs) recorded += new SweepStore(d, params).load().records.size;
  return new q.QueueError(
    `${e.message}: the ${what} stopped. Nothing recorded is lost (${recorded} trial${recorded === 1 ? '' : 's'} in ${dir}); it is resumable: when Redis is back, run the same command again (${sameCommand()}) and it runs only the missing trials`,
  );
}

/** Writes sweep.html in the sweep folder; a page that cannot be written is a warning, not a failed sweep. */
function sweepPage(dir: string): string | null {
  try {
    const r = writeSweepReport(dir);
    for (const w of r.warnings) process.stderr.write(`warning: sweep.html: ${w}\n`);
    return r.path;
  } catch (e) {
    process.stderr.write(
      `warning: sweep.html was not written: ${(e as Error).message} (fxflow report ${dir} retries)\n`,
    );
    return null;
  }
}

const num = (x: number | null | undefined, d = 2): string =>
  x === null || x === undefined || !Number.isFinite(x)
    ? 'n/a'
    : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

/** The printed summary: the top trials, the best, the overfitting figures, where everything is. */
export function formatSweep(
  r: SweepResult,
  top: number,
  data: { candles: number; decodeMs: number; cached?: number },
  queue?: string,
): string {
  const lines: string[] = [];
  lines.push(
    `optimize ${r.strategy}: ${r.search}, ${r.trials} trials of ${r.spaceSize} points, objective ${r.objective}, seed ${r.seed}`,
  );
  lines.push(
    `  ran ${r.ran} now (${r.resumed} already in the folder), ${r.failed} failed; ${queue !== undefined ? `on the queue ${queue}` : `${r.workers} worker${r.workers === 1 ? '' : 's'}`}; ${formatCount(data.candles)} candles decoded once in ${(data.decodeMs / 1000).toFixed(2)} s${data.cached ? ' (from the binary cache)' : ''}; ${r.ran > 0 ? `${r.trialsPerSecond.toFixed(2)} trials/s` : 'nothing to run'}`,
  );
  const rows: RankedTrial[] = r.top.slice(0, top);
  if (rows.length > 0) {
    const names = Object.keys(rows[0]!.params);
    const head = ['#', ...names, r.objective, 'net P/L', 'Sharpe', 'max DD %', 'trades'];
    const body = rows.map((t) => [
      String(t.trial),
      ...names.map((n) => String(t.params[n])),
      num(t.objective, 4),
      num(t.metrics.netPL),
      num(t.metrics.sharpe),
      num(t.metrics.maxDrawdownPct),
      String(t.metrics.trades),
    ]);
    const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
    lines.push(
      '',
      `Top ${rows.length}:`,
      head.map((h, i) => h.padStart(w[i]!)).join('  '),
      ...body.map((b) => b.map((c, i) => c.padStart(w[i]!)).join('  ')),
    );
  }
  if (r.best)
    lines.push(
      '',
      `Best: trial ${r.best.trial}  ${Object.entries(r.best.params)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}  ${r.objective} ${num(r.best.objective, 4)}`,
    );
  const d = r.overfitting.deflatedSharpe;
  const p = r.overfitting.pbo;
  lines.push('', 'Overfitting:');
  if (d) {
    lines.push(
      `  Deflated Sharpe ratio ${num(d.dsr, 3)}: probability that the best trial's true Sharpe beats the best of ${d.trials} zero-skill trials`,
    );
    lines.push(
      `    (daily Sharpe ${num(d.sharpe, 4)} vs expected max ${num(d.expectedMaxSharpe, 4)}; ${d.observations} daily returns, skew ${num(d.skew, 2)}, kurtosis ${num(d.kurtosis, 2)}; Bailey & López de Prado 2014)`,
    );
  }
  if (p) {
    lines.push(
      `  PBO ${num(p.pbo, 3)}: share of ${p.splits} CSCV splits (${p.blocks} blocks) where the in-sample best ranks at or below the out-of-sample median (Bailey, Borwein, López de Prado & Zhu)`,
    );
    if (p.label) lines.push(`    (${p.label})`);
  }
  if (r.overfitting.note) lines.push(`  ${r.overfitting.note}`);
  if (r.failures.length > 0) {
    lines.push('', `${r.failures.length} trial${r.failures.length === 1 ? '' : 's'} failed, e.g.:`);
    for (const f of r.failures.slice(0, 3))
      lines.push(
        `  trial ${f.trial} ${Object.entries(f.params)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}: ${f.error}`,
      );
  }
  lines.push('', `Saved in ${r.dir} (trials.csv, trials.jsonl, returns.jsonl, summary.json)`);
  return `${lines.join('\n')}\n`;
}
