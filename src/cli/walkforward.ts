import { dataFileInput } from './sim-flags.ts';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { WorkerPool, type TrialRunner } from '../research/pool.ts';
import { loadSweepData } from '../research/sweep-data.ts';
import { canonical, sha256, sweepHashes } from '../research/sweep.ts';
import { SpaceError } from '../research/space.ts';
import {
  finishedWalkForward,
  parseSpan,
  runWalkForward,
  windowDir,
  windows,
  WalkForwardError,
  type WalkForwardResult,
} from '../research/walkforward.ts';
import { writeWalkForwardReport } from '../report/sweep-report.ts';
import { parseDate } from '../app/config.ts';
import { configCatalog } from '../adapters/catalog/location.ts';
import { ProgressBar } from './progress.ts';
import { dataCatalog } from '../app/sources.ts';
import {
  cacheFor,
  fileSweepSource,
  lostRedis,
  openSweepQueue,
  optimizeCommand,
  portfolioKey,
  prepare,
  queueModule,
  workerInit,
  type OptimizeArgs,
} from './optimize.ts';

export interface WalkForwardArgs extends OptimizeArgs {
  train: string;
  test: string;
  step?: string;
  anchored?: boolean;
}

/** `fxflow walkforward`'s flags: optimize's, plus the windows. */
export function walkforwardCommand(y: Argv): Argv {
  // The windows first, in their own group: the two required flags head the help, not its 98th line.
  const windows = y
    .option('train', {
      type: 'string',
      demandOption: true,
      describe: 'In-sample length of each window: 6mo, 1y, 8w, 90d',
    })
    .option('test', {
      type: 'string',
      demandOption: true,
      describe: 'Out-of-sample length after each training period: 1mo, 2w',
    })
    .option('step', {
      type: 'string',
      describe: 'How far each window moves (default: --test, so test periods follow each other)',
    })
    .option('anchored', {
      type: 'boolean',
      describe: 'Every training period starts at --from (growing windows) instead of rolling',
    })
    .group(['train', 'test', 'step', 'anchored'], 'Windows (--train and --test required):');
  return optimizeCommand(windows).example(
    '$0 walkforward strategies/sma-cross.ts --param fast=5:30:5 --param slow=20:100:20 --train 6mo --test 1mo',
    'Rolling 6-month optimisation, 1-month out-of-sample windows',
  );
}

const pct = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : `${x.toFixed(2)}%`;
const fix = (x: number | null | undefined, d = 2): string =>
  x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(d);

export async function walkforward(a: WalkForwardArgs): Promise<WalkForwardResult> {
  const train = parseSpan('train', a.train);
  const test = parseSpan('test', a.test);
  const step = a.step ? parseSpan('step', a.step) : test;
  const { config, instruments, loaded, space, trials, objectiveFn, workers } = await prepare(a);
  const from = parseDate(config.run.from);
  const to = parseDate(config.run.to);
  const ws = windows(from, to, train, test, step, a.anchored === true);
  if (ws.length === 0)
    throw new WalkForwardError(
      `no complete window between ${config.run.from} and ${config.run.to}: --train ${a.train} plus --test ${a.test} is longer than the period; use an earlier --from or shorter windows`,
    );
  // With --queue, Redis is checked first (one clear message when it is unreachable or too old), and no thread is started here.
  const q = a.queue !== undefined ? await queueModule() : undefined;
  if (q) (await q.openRedis(q.parseQueueUrl(a.queue!))).disconnect();
  let pool: Promise<TrialRunner> =
    a.queue !== undefined
      ? Promise.reject(new Error('the queue was not opened'))
      : WorkerPool.start(workers, workerInit(loaded), { loaded, instruments });
  pool.catch(() => {});
  try {
    const source = a.data
      ? fileSweepSource(a.data, dataFileInput(a), config, instruments)
      : await dataCatalog(configCatalog(config));
    const data = await loadSweepData({
      strategy: loaded.strategy,
      name: loaded.name,
      params: space.params(space.validPoints()[0]!),
      currency: config.account.currency,
      instruments,
      candles: source.candles,
      available: source.available,
      origin: source.origin,
      from,
      to,
      cache: cacheFor(a, config),
    });
    if (data.candles === 0)
      throw new SpaceError(
        `no candles between ${config.run.from} and ${config.run.to}: check --from/--to and the data`,
      );
    const portfolio = portfolioKey(loaded);
    const { strategyHash, configHash } = sweepHashes(loaded.file, config, portfolio);
    const hash = sha256(
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
        windows: ws,
      }),
    ).slice(0, 10);
    const dir = resolve(a.out ?? join(config.run.runsDir, 'walkforward', `${loaded.name}-${hash}`));
    const settings = {
      strategy: loaded.name,
      from: config.run.from,
      to: config.run.to,
      train: a.train,
      test: a.test,
      step: a.step ?? a.test,
      anchored: a.anchored === true,
      params: { swept: space.dims, fixed: space.base },
      search: a.search,
      objective: a.objective,
    };
    // A folder that holds this walk-forward finished: nothing to run (its result as saved); one that
    // holds another finished walk-forward: refused with what differs (WalkForwardError).
    const done = finishedWalkForward(dir, hash, settings);
    if (done) {
      const page = join(dir, 'walkforward.html');
      if (a.json)
        process.stdout.write(`${JSON.stringify(done)}
`);
      else
        process.stdout.write(
          `Nothing to run: ${dir} holds this walk-forward, finished (the same strategy, data, settings and windows); its result as saved:\n\n${formatWalkForward(done, loaded.name, a, undefined)}${existsSync(page) ? `Walk-forward page: ${page}\n` : ''}`,
        );
      return done;
    }
    if (a.queue !== undefined) {
      // One manifest for the whole walk-forward (the data of the whole period): each window's trials
      // and out-of-sample runs are jobs carrying their own period, keyed as optimize keys its trials.
      pool = openSweepQueue(
        q!,
        { ...a, queueCommand: 'walkforward' },
        a.queue,
        `${loaded.name}-wf-${hash}`,
        loaded,
        space,
        config,
        { strategyHash, configHash, dataHash: data.dataHash, ...(portfolio ? { portfolio } : {}) },
      );
      pool.catch(() => {});
      await pool;
    }
    const bar = new ProgressBar('walkforward', process.stderr, { delayMs: 0, everyMs: 0 });
    const r = await runWalkForward({
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
      ...(a.pboBlocks !== undefined ? { pboBlocks: a.pboBlocks } : {}),
      dir,
      windows: ws,
      id: hash,
      settings,
      pool,
      onWindow: (w) => {
        bar.show(w.index / ws.length, `window ${w.index + 1}/${ws.length}`, true);
      },
    }).catch((e: unknown) => {
      throw q && e instanceof q.QueueLostError
        ? lostRedis(
            q,
            e,
            'walk-forward',
            dir,
            space.dims.map((d) => d.name),
            ws.map((w) => windowDir(dir, w.index)),
          )
        : e;
    });
    bar.done();
    let page: string | null = null;
    try {
      const p = writeWalkForwardReport(r.dir);
      for (const w of p.warnings) process.stderr.write(`warning: walkforward.html: ${w}\n`);
      page = p.path;
    } catch (e) {
      process.stderr.write(
        `warning: walkforward.html was not written: ${(e as Error).message} (fxflow report ${r.dir} retries)\n`,
      );
    }
    if (a.json)
      process.stdout.write(`${JSON.stringify(q ? { ...r, queue: q.describeQueue(a.queue!) } : r)}\n`);
    else
      process.stdout.write(
        `${formatWalkForward(r, loaded.name, a, q?.describeQueue(a.queue!))}${page ? `Walk-forward page: ${page} (each window's sweep.html beside its trials)\n` : ''}`,
      );
    return r;
  } finally {
    await (await pool.catch(() => undefined))?.close();
  }
}

/** The terminal summary of a walk-forward: a row per window (params, objectives, CAGRs, efficiency, the sweep's DSR and PBO), then the whole. */
export function formatWalkForward(
  r: WalkForwardResult,
  name: string,
  a: Pick<WalkForwardArgs, 'anchored' | 'train' | 'test' | 'step' | 'search' | 'objective'>,
  queue: string | undefined,
): string {
  const day = (t: number): string => new Date(t).toISOString().slice(0, 10);
  const names = Object.keys(r.stability);
  const head = [
    'win',
    'train',
    'test',
    ...names,
    `IS ${a.objective}`,
    `OOS ${a.objective}`,
    'IS CAGR',
    'OOS CAGR',
    'WFE',
    'DSR',
    'PBO',
  ];
  // WFE where it means something: over an in-sample loss it is left out and said why below.
  const noGain = r.windows
    .filter(
      (w) => w.efficiency === null && w.inSample && w.inSample.cagrPct !== null && w.inSample.cagrPct <= 0,
    )
    .map((w) => w.window.index + 1);
  const wfe = (w: WalkForwardResult['windows'][number]): string =>
    w.efficiency !== null ? fix(w.efficiency) : noGain.includes(w.window.index + 1) ? 'n/a (IS ≤ 0)' : 'n/a';
  const body = r.windows.map((w) => [
    String(w.window.index + 1),
    `${day(w.window.trainFrom)}→${day(w.window.trainTo)}`,
    `${day(w.window.testFrom)}→${day(w.window.testTo)}`,
    ...names.map((n) => String(w.params[n] ?? '-')),
    fix(w.isObjective, 3),
    fix(w.oosObjective, 3),
    pct(w.inSample?.cagrPct),
    pct(w.outOfSample?.cagrPct),
    w.error ? `error: ${w.error}` : wfe(w),
    fix(w.dsr),
    fix(w.pbo),
  ]);
  const wd = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const lines = [
    `walkforward ${name}: ${r.windows.length} windows (${a.anchored ? 'anchored' : 'rolling'}; train ${a.train}, test ${a.test}, step ${a.step ?? a.test}), ${a.search}, objective ${a.objective}${queue !== undefined ? `, on the queue ${queue}` : ''}`,
    '',
    head.map((h, i) => h.padEnd(wd[i]!)).join('  '),
    ...body.map((b) => b.map((c, i) => c.padEnd(wd[i]!)).join('  ')),
    '',
    `Out of sample, stitched: ${pct(r.oosReturnPct)} return, Sharpe ${fix(r.oosSharpe)} (daily, √252)`,
    ...(noGain.length > 0
      ? [
          `WFE n/a (IS ≤ 0): window${noGain.length === 1 ? '' : 's'} ${noGain.join(', ')} lost in sample; the ratio measures how much of an in-sample gain carries over, and there was none`,
        ]
      : []),
    "DSR: the window sweep's deflated Sharpe ratio, the probability that its best trial is not luck of the number tried (above 0.95: unlikely luck); PBO: how often its in-sample winner falls to the median or below out of sample (near 0: the choice carries over; 0.5 or more: no better than chance); n/a: too few trials or days",
    r.efficiency !== null
      ? `Walk-forward efficiency (mean OOS CAGR / mean IS CAGR): ${fix(r.efficiency)}`
      : `Walk-forward efficiency (mean OOS CAGR / mean IS CAGR): n/a: ${r.efficiencyWhyNot ?? 'not computed'}`,
    'Param stability (values chosen per window; share of the most chosen; sd/mean):',
    ...names.map(
      (n) =>
        `  ${n}: ${r.stability[n]!.values.join(', ')}  (${r.stability[n]!.distinct} distinct, ${(r.stability[n]!.modeShare * 100).toFixed(0)}% the same${r.stability[n]!.cv !== null ? `, cv ${r.stability[n]!.cv}` : ''})`,
    ),
    '',
    `Saved in ${r.dir} (windows.csv, oos-equity.csv, walkforward.json, one sweep folder per window)`,
  ];
  return `${lines.join('\n')}\n`;
}
