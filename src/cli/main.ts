import { dataFileInput, simFlagOverrides, SIM_FLAGS, type SimFlagArgs } from './sim-flags.ts';
import { runGiven } from '../app/run-choices.ts';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import yargs, { type Argv } from 'yargs';
import { ROOT, loadConfig } from '../app/config.ts';
import { backtest, runJson, runText } from '../app/library.ts';
import { authCommand } from './auth.ts';
import { dataCommand } from './data.ts';
import { parseAlignment } from './data-import.ts';
import { describeError } from './errors.ts';
import { recordCommand } from './record.ts';
import { initProject } from './init.ts';
import { typeCheckStrategy } from './type-check.ts';
import { runSandbox, sandboxCommand, type SandboxArgs } from './sandbox.ts';
import { runCommand, runLive, type RunArgs } from './run.ts';
import { replayCommand, runReplay, type ReplayArgs } from './replay.ts';
import { optimize, optimizeCommand, type OptimizeArgs } from './optimize.ts';
import { walkforward, walkforwardCommand, type WalkForwardArgs } from './walkforward.ts';
import { worker, workerCommand, type WorkerArgs } from './worker.ts';
import { createLogger, flushLogger } from './logger.ts';
import { compareCommand, reportCommand, runCompare, runReport } from './report.ts';
import { ProgressBar, formatCount } from './progress.ts';

interface BacktestArgs extends SimFlagArgs {
  strategy: string;
  instrument?: string;
  granularity?: string;
  from?: string;
  to?: string;
  param?: (string | number)[];
  data?: string;
  ticks?: string;
  format?: string;
  json?: boolean;
  config?: string;
  balance?: string;
  currency?: string;
  marginRate?: string;
  hedging?: boolean;
  fifo?: boolean;
  spread?: string;
  spreadPips?: number;
  financing?: boolean;
  financingHistory?: string;
  financingBeforeHistory?: string;
  commission?: string;
  slippage?: string;
  latency?: string;
  runsDir?: string;
  path?: string;
  marketHours?: boolean;
  save?: boolean;
  strictData?: boolean;
  dailyAlignment?: number;
  alignmentTimezone?: string;
  weeklyAlignment?: string;
  typecheck?: boolean;
}

/** Flag overrides as a config fragment (only the flags the user gave). */
function flagOverrides(a: BacktestArgs): Record<string, Record<string, string | number | boolean>> {
  const o: Record<string, Record<string, string | number | boolean>> = {};
  const set = (section: string, key: string, v: string | number | boolean | undefined): void => {
    if (v === undefined) return;
    (o[section] ??= {})[key] = v;
  };
  set('account', 'initialBalance', a.balance);
  set('account', 'currency', a.currency);
  set('account', 'marginRate', a.marginRate);
  set('account', 'hedging', a.hedging);
  set('account', 'fifo', a.fifo);
  // The data, fill and cost flags: as every command that runs the simulator reads them (sim-flags.ts).
  // A --financing-history folder is the working folder's; none: the catalog the run reads (set in backtestCommand).
  for (const [section, values] of Object.entries(simFlagOverrides({ ...a, ...(a.financingHistory ? { financingHistory: resolve(a.financingHistory) } : {}) }))) Object.assign((o[section] ??= {}), values);
  set('run', 'instrument', a.instrument);
  set('run', 'granularity', a.granularity);
  set('run', 'from', a.from);
  set('run', 'to', a.to);
  set('run', 'runsDir', a.runsDir);
  return o;
}

async function backtestCommand(a: BacktestArgs): Promise<void> {
  // The flags as a config (over --config's file), params and data; the library call does the rest.
  const overrides = flagOverrides(a);
  if (a.financingHistory === '') {
    // --financing-history alone: the financing recorded in the catalog the run reads.
    const { financingBeforeHistory: _b, ...costs } = overrides.costs ?? {};
    const catalog = loadConfig(a.config, { ...overrides, costs }).data.catalog;
    (overrides.costs ??= {}).financingHistory = resolve(ROOT, catalog);
  }
  const config = loadConfig(a.config, overrides);
  // tsx runs TypeScript without checking its types: a type error is found here, with its place.
  if (a.typecheck !== false && existsSync(a.strategy)) {
    const warning = typeCheckStrategy(resolve(a.strategy));
    if (warning !== undefined) process.stderr.write(`fxflow: warning: ${warning}\n`);
  }
  const data = dataFileInput(a) ?? { catalog: resolve(ROOT, config.data.catalog), alignment: parseAlignment(a.dailyAlignment ?? 17, a.alignmentTimezone ?? 'America/New_York', a.weeklyAlignment ?? 'Friday') };
  let bar: ProgressBar | undefined;
  let log: Logger | undefined;
  const run = await backtest(a.strategy, (a.param ?? []).map(String), data, config, {
    runGiven: runGiven(a.config, overrides),
    ...(a.ticks !== undefined ? { ticks: a.ticks } : {}),
    save: a.save !== false,
    keepTransactions: a.json === true,
    strictData: a.strictData === true,
    onHole: (h) => process.stderr.write(`warning: ${h.instrument} ${h.granularity} has no data from ${h.from} to ${h.to} (${h.openHours} h of open market): the backtest runs on across it (--strict-data stops instead)\n`),
    onStart: (loaded) => (bar = new ProgressBar(`backtest ${loaded.name}`)),
    onProgress: (f, n) => bar?.update(f, n),
    log: (runDir, name) => {
      log = createLogger(runDir ? { file: join(runDir, 'log.jsonl'), isoTime: true } : { level: 'warn' });
      return log.child({ component: 'strategy', strategy: name });
    },
  }).finally(async () => {
    bar?.done();
    if (log) await flushLogger(log);
  });
  if (a.json) {
    process.stdout.write(`${JSON.stringify(runJson(run))}\n`);
    return;
  }
  const text = runText(run);
  const m = run.models;
  const models = `fill models: path ${m.path} · slippage ${m.slippage} · latency ${m.latency} · commission ${m.commission}`;
  const speed = `${formatCount(run.engine.events)} events in ${(run.wallMs / 1000).toFixed(2)} s (${formatCount(run.engine.events / (run.wallMs / 1000))}/s)`;
  process.stdout.write(`${text}\n${models}\n${speed}\n`);
  if (run.runDir) {
    writeFileSync(join(run.runDir, 'report.txt'), `${text}\n${models}\n${speed}\n`);
    process.stdout.write(`Run saved in ${run.runDir}\n`);
  }
}

/** Builds the yargs parser (exported for tests of the command line itself). */
export function cli(argv: string[]): Argv {
  return yargs(argv)
    .scriptName('fxflow')
    .usage('$0 <command> [options]')
    .command(
      'backtest <strategy>',
      'Backtest a strategy module on historical data and print its report',
      (y) =>
        y
          .positional('strategy', { type: 'string', demandOption: true, describe: 'Path to a strategy module, e.g. strategies/sma-cross.ts' })
          .option('instrument', { type: 'string', describe: 'Instrument, for strategies that take an `instrument` param (default from config: EUR_USD)' })
          .option('granularity', { type: 'string', describe: 'Granularity, for strategies that take a `granularity` param (default: H1)' })
          .option('from', { type: 'string', describe: 'Start, UTC date or RFC 3339 time (default: 2024-01-01)' })
          .option('to', { type: 'string', describe: 'End, exclusive (default: 2025-01-01)' })
          .option('param', { type: 'array', string: true, describe: 'Override a strategy param: --param fast=5 --param units=2000' })
          .option('ticks', { type: 'string', describe: 'Tick file or folder (generic time,bid,ask; Lean ms,bid,ask; HistData ticks), or a catalog recorded with fxflow record --prices (its ticks/<INSTRUMENT>/ day files), for strategies that subscribe to ticks; ticks then drive the fills' })
          .option('json', { type: 'boolean', describe: 'Print one JSON document: summary, every transaction, the closed trades, the equity curve' })
          .option('config', { type: 'string', describe: 'A JSON file merged over config/default.json (e.g. config/classic.json)' })
          .option('balance', { type: 'string', describe: 'Initial balance (account.initialBalance)' })
          .option('currency', { type: 'string', describe: 'Account currency (account.currency)' })
          .option('margin-rate', { type: 'string', describe: 'Account margin rate, e.g. 0.02 for 50:1 (account.marginRate)' })
          .option('hedging', { type: 'boolean', describe: 'Hedging account instead of netting (account.hedging)' })
          .option('daily-alignment', { type: 'number', describe: 'Hour (0-23) where D, W, M candles built from finer data start (OANDA: 17)' })
          .option('alignment-timezone', { type: 'string', describe: 'Time zone of --daily-alignment (OANDA: America/New_York)' })
          .option('weekly-alignment', { type: 'string', describe: 'Day W candles built from finer data start (OANDA: Friday)' })
          .option('strict-data', { type: 'boolean', default: false, describe: 'Stop at the first hole in the data beyond weekends and holidays (default: warn and run on)' })
          .option('fifo', { type: 'boolean', describe: 'FIFO account, as at OANDA US (account.fifo): no hedging, oldest same-size trade closes first' })
          .options(SIM_FLAGS)
          .option('runs-dir', { type: 'string', describe: 'Where run folders are saved (run.runsDir, default runs/)' })
          .option('save', { type: 'boolean', default: true, describe: 'Save a run folder; --no-save to skip' })
          .option('typecheck', { type: 'boolean', default: true, describe: 'Type-check the strategy file first (when TypeScript is installed): a syntax error stops the run, type errors are printed with their place; --no-typecheck to skip' })
          .example('$0 backtest strategies/sma-cross.ts', 'SMA crossover on the bundled EUR_USD H1 sample (2024)')
          .example('$0 backtest strategies/sma-cross.ts --config config/classic.json --param longOnly=true', 'The classic reference configuration')
          .example('$0 backtest strategies/breakout-tpsl.ts --instrument USD_JPY --json', 'JSON report with every transaction'),
      async (a) => backtestCommand(a as unknown as BacktestArgs),
    )
    .command(recordCommand as never)
    .command(
      'init <dir>',
      'Scaffold a strategy project in <dir> (package.json, tsconfig.json, a sample strategy) that imports fxflow and type-checks',
      (y) => y.positional('dir', { type: 'string', demandOption: true, describe: 'A new or empty folder' }),
      (a) => {
        const dir = String((a as unknown as { dir: string }).dir);
        const files = initProject(dir);
        process.stdout.write(`Created ${resolve(dir)}: ${files.join(', ')}\nNext: cd ${dir} && npx fxflow backtest strategy.ts\n`);
      },
    )
    .command('optimize <strategy>', 'Sweep a strategy\'s params on every core: grid, random or adaptive search, overfitting figures', (y) => optimizeCommand(y), async (a) => {
      await optimize(a as unknown as OptimizeArgs);
    })
    .command('walkforward <strategy>', 'Optimise on rolling (or anchored) training windows, test each choice on the next period, stitch the out-of-sample results', (y) => walkforwardCommand(y), async (a) => {
      await walkforward(a as unknown as WalkForwardArgs);
    })
    .command('worker', 'Run the trials `fxflow optimize --queue` puts in Redis, on worker threads, until stopped', (y) => workerCommand(y), async (a) => {
      await worker(a as unknown as WorkerArgs);
    })
    .command('data', 'Manage the local catalog of historical data', (y) => dataCommand(y), () => {})
    .command('auth', 'Log in to OANDA with OAuth and check where the access token comes from', (y) => authCommand(y), () => {})
    .command('run <strategy>', 'Run a strategy on a v20 account (paper on practice, live, or the sandbox) until stopped', (y) => runCommand(y), async (a) => runLive(a as unknown as RunArgs))
    .command('replay <run>', 'Replay a live run folder through the simulator on exactly its recorded inputs and reconcile the two (reconciliation.txt, .json)', (y) => replayCommand(y), async (a) => runReplay(a as unknown as ReplayArgs))
    .command('sandbox', "Serve OANDA's v20 REST and streaming interface on loopback, backed by the simulated broker", (y) => sandboxCommand(y), async (a) => runSandbox(a as unknown as SandboxArgs))
    .command('report <run>', 'Rebuild the HTML page of a run folder (report.html), a sweep folder (sweep.html) or a walk-forward folder (walkforward.html)', (y) => reportCommand(y), (a) => runReport(a as unknown as { run: string; open?: boolean }))
    .command('compare <runs..>', 'Write one HTML page comparing runs: equity curves overlaid, figures side by side', (y) => compareCommand(y), (a) => runCompare(a as unknown as { runs: string[]; out?: string; open?: boolean }))
    .demandCommand(1, `Name a command:\n${COMMANDS.map(([c, what]) => `  fxflow ${c.padEnd(22)} ${what}`).join('\n')}`)
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(VERSION)
    .alias('v', 'version')
    // yargs renders the running command's help on every run (to have it cached); wrapping it to the
    // terminal costs 0.03-0.05 s of CPU (string-width, cliui). Only --help/-h prints it (mistakes say
    // "Run with --help"), so it is wrapped only then.
    .wrap(helpAsked(argv) ? Math.min(110, process.stdout.columns || 100) : null)
    .fail((msg, err, y) => {
      if (err) throw err;
      void y;
      throw new UsageError(`${msg}\nRun with --help for usage.`);
    });
}

/** Whether the command line asks for help (--help, or -h alone or among short flags): when in doubt, yes. */
export const helpAsked = (argv: readonly string[]): boolean => argv.some((a) => a === '--help' || a.startsWith('--help=') || /^-[^-]*h/.test(a));

/** fxflow's version (package.json). */
export const VERSION: string = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Every command, for `fxflow` alone (yargs' help lists them too). */
const COMMANDS: readonly (readonly [string, string])[] = [
  ['backtest <strategy>', 'backtest a strategy module and print its report'],
  ['init <dir>', 'scaffold a strategy project that imports fxflow'],
  ['data <command>', 'manage the local catalog of historical data'],
  ['run <strategy>', 'run a strategy on a v20 account (practice, live, sandbox)'],
  ['replay <run>', 'replay a live run through the simulator; reconcile the two'],
  ['sandbox', "serve OANDA's v20 interface on loopback (simulated broker)"],
  ['auth <command>', 'log in to OANDA with OAuth; where the token comes from'],
  ['optimize <strategy>', "sweep a strategy's params on every core"],
  ['walkforward <strategy>', 'optimise in-sample, test out-of-sample, window by window'],
  ['worker --queue <redis>', 'run queued trials of optimize --queue (any machine)'],
  ['report <run>', "rebuild the HTML page of a run, sweep or walk-forward folder"],
  ['compare <runs..>', 'one HTML page comparing runs'],
  ['<command> --help', 'the options of a command'],
  ['--version', 'the version'],
];

/** A mistake on the command line (yargs' own messages). */
export class UsageError extends Error {
  readonly code = 'USAGE' as const;
}

/** Runs the CLI; returns the exit code. Errors are printed as one clear message, never a bare stack trace. */
export async function main(argv: string[]): Promise<number> {
  // `fxflow backtest … | head`: the reader left; stop quietly instead of dying on EPIPE.
  quietOnClosedPipe(process.stdout);
  quietOnClosedPipe(process.stderr);
  try {
    await cli(argv).parseAsync();
    // A command that found problems and said so (data list, data check) sets the exit code.
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    process.stderr.write(`${describeError(e)}\n`);
    // yargs' own mistakes, and those a command finds in its flags (code 'USAGE'), exit 64.
    return e instanceof UsageError || (e as { code?: unknown } | null)?.code === 'USAGE' ? 64 : 1;
  }
}


let pipesWatched = false;

/**
 * Ends the process quietly (exit 0) when the reader of a standard stream goes away (EPIPE), as
 * Unix tools do when piped into `head`; any other stream error is reported once.
 */
function quietOnClosedPipe(stream: NodeJS.WriteStream): void {
  if (pipesWatched && stream === process.stderr) return;
  if (stream === process.stderr) pipesWatched = true;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}
