// The command line: yargs declares every command with its one-line description here, and each
// command's module is imported only when that command runs (or its --help is asked): the builder
// that declares a command's flags is async (yargs waits for it), so `fxflow --version`, the top
// help and a usage mistake load none of the commands' graphs, and a backtest loads none of the
// others' (the live runner, the sandbox, the sweeps, the HTTP client). test/startup-modules.test.ts
// watches the modules real processes load.
import { delimiter, resolve } from 'node:path';
import yargs, { type Argv } from 'yargs';
import type { BacktestArgs } from './backtest.ts';
import { describeError } from './errors.ts';
import { VERSION } from './version.ts';
import type { OptimizeArgs } from './optimize.ts';
import type { ReplayArgs } from './replay.ts';
import type { RunArgs } from './run.ts';
import type { SandboxArgs } from './sandbox.ts';
import type { WalkForwardArgs } from './walkforward.ts';
import type { WorkerArgs } from './worker.ts';

/** The flags whose value may be a negative offset (`--timezone -05:00`). */
const OFFSET_FLAGS = new Set(['--timezone']);
// A dash and a digit: an offset (-05:00, -0500, -5), or a mistake the clock's parser names.
const NEGATIVE_OFFSET = /^[-−]\d/;

/**
 * `--timezone -05:00` as the help writes it: yargs reads a value that starts with a dash as
 * flags (-0, -5: "Unknown arguments: 0, 5"), so such a value is joined to its flag
 * (`--timezone=-05:00`) before yargs sees it. Other arguments are left as they are.
 */
export function joinOffsets(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (OFFSET_FLAGS.has(a) && next !== undefined && NEGATIVE_OFFSET.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Builds the yargs parser (exported for tests of the command line itself). */
export function cli(argv: string[]): Argv {
  const parser = yargs(joinOffsets(argv))
    .scriptName('fxflow')
    .usage('$0 <command> [options]')
    .option('market-calendar', {
      type: 'string',
      array: true,
      global: true,
      describe:
        'A JSON file of days the market closes (the form of data/market-calendar.json), added to the shipped Christmas and New Year: orders decided on them are MARKET_HALTED, data check counts no hole in them',
    })
    // Through the environment, so the processes a command starts (sweep workers, the sandbox) close the same days.
    .middleware((a) => {
      const files = (a['market-calendar'] as string[] | undefined) ?? [];
      if (files.length > 0)
        process.env.FXFLOW_MARKET_CALENDAR = [
          ...files.map((f) => resolve(String(f))),
          ...(process.env.FXFLOW_MARKET_CALENDAR ?? '').split(delimiter).filter((f) => f !== ''),
        ].join(delimiter);
    })
    .command(
      'backtest [strategy..]',
      'Backtest a strategy module (or several on one account: a portfolio) on historical data and print its report',
      async (y) => (await import('./backtest.ts')).backtestOptions(y),
      async (a) => {
        await (await import('./backtest.ts')).backtestCommand(a as unknown as BacktestArgs);
      },
    )
    .command(
      'record',
      'Record OANDA labs data (calendar, Autochartist signals, spreads, COT), pricing-stream ticks and daily financing rates into the catalog, each item with the time it became known; resumable',
      async (y) => ((await import('./record.ts')).recordCommand.builder as (y: Argv) => Argv)(y),
      async (a) => (await import('./record.ts')).recordCommand.handler(a as never),
    )
    .command(
      'init <dir>',
      'Scaffold a strategy project in <dir> (package.json, tsconfig.json, a sample strategy) that imports fxflow and type-checks',
      (y) => y.positional('dir', { type: 'string', demandOption: true, describe: 'A new or empty folder' }),
      async (a) => {
        const dir = String((a as unknown as { dir: string }).dir);
        const { initProject } = await import('./init.ts');
        const files = initProject(dir);
        process.stdout.write(
          `Created ${resolve(dir)}: ${files.join(', ')}\nNext: cd ${dir} && npx fxflow backtest strategy.ts\n`,
        );
      },
    )
    .command(
      'optimize [strategy]',
      "Sweep a strategy's params on every core: grid, random or adaptive search, overfitting figures",
      async (y) => (await import('./optimize.ts')).optimizeCommand(y),
      async (a) => {
        await (await import('./optimize.ts')).optimize(a as unknown as OptimizeArgs);
      },
    )
    .command(
      'walkforward [strategy]',
      'Optimise on rolling (or anchored) training windows, test each choice on the next period, stitch the out-of-sample results',
      async (y) => (await import('./walkforward.ts')).walkforwardCommand(y),
      async (a) => {
        await (await import('./walkforward.ts')).walkforward(a as unknown as WalkForwardArgs);
      },
    )
    .command(
      'worker',
      'Run the trials `fxflow optimize --queue` puts in Redis, on worker threads, until stopped',
      async (y) => (await import('./worker.ts')).workerCommand(y),
      async (a) => {
        await (await import('./worker.ts')).worker(a as unknown as WorkerArgs);
      },
    )
    .command(
      'data',
      'Manage the local catalog of historical data',
      async (y) => (await import('./data.ts')).dataCommand(y),
      () => {},
    )
    .command(
      'auth',
      'Log in to OANDA with OAuth and check where the access token comes from',
      async (y) => (await import('./auth.ts')).authCommand(y),
      () => {},
    )
    .command(
      'journal',
      "Look after a run's journal by hand (clear the kill switch's halt)",
      async (y) => (await import('./journal.ts')).journalCommand(y),
      () => {},
    )
    .command(
      'run [strategy..]',
      'Run a strategy (or several on one account: a portfolio) on a v20 account (paper on practice, live, or the sandbox) until stopped',
      async (y) => (await import('./run.ts')).runCommand(y),
      async (a) => (await import('./run.ts')).runLive(a as unknown as RunArgs),
    )
    .command(
      'replay <run>',
      'Replay a live run folder through the simulator on exactly its recorded inputs and reconcile the two (reconciliation.txt, .json)',
      async (y) => (await import('./replay.ts')).replayCommand(y),
      async (a) => (await import('./replay.ts')).runReplay(a as unknown as ReplayArgs),
    )
    .command(
      'sandbox',
      "Serve OANDA's v20 REST and streaming interface on loopback, backed by the simulated broker",
      async (y) => (await import('./sandbox.ts')).sandboxCommand(y),
      async (a) => (await import('./sandbox.ts')).runSandbox(a as unknown as SandboxArgs),
    )
    .command(
      'report <run>',
      'Rebuild the HTML page of a run folder (report.html), a sweep folder (sweep.html) or a walk-forward folder (walkforward.html)',
      async (y) => (await import('./report.ts')).reportCommand(y),
      async (a) => (await import('./report.ts')).runReport(a as unknown as { run: string; open?: boolean }),
    )
    .command(
      'compare <runs..>',
      'Write one HTML page comparing runs: equity curves overlaid, figures side by side',
      async (y) => (await import('./report.ts')).compareCommand(y),
      async (a) =>
        (await import('./report.ts')).runCompare(
          a as unknown as { runs: string[]; out?: string; open?: boolean },
        ),
    )
    .demandCommand(
      1,
      `Name a command:\n${COMMANDS.map(([c, what]) => `  fxflow ${c.padEnd(22)} ${what}`).join('\n')}`,
    )
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(VERSION)
    .alias('v', 'version')
    // Help is wrapped to the terminal only when it is printed: wrapping (string-width, cliui) costs
    // 0.03-0.05 s of CPU, and only --help/-h prints it (mistakes say "Run with --help").
    .wrap(helpAsked(argv) ? Math.min(110, process.stdout.columns || 100) : null)
    .fail((msg, err, y) => {
      if (err) throw err;
      void y;
      throw new UsageError(`${msg}\nRun with --help for usage.`);
    });
  if (!helpAsked(argv)) skipHelpCache(parser);
  return parser;
}

/**
 * yargs renders the whole help of the command it runs as the handler starts (usage's
 * cacheHelpMessage), in case the handler calls showHelp/getHelp, which fxflow never does: 0.03-0.05 s
 * of a backtest's CPU (cliui lays out its 40 options even unwrapped). Outside --help the cache is not
 * filled; a yargs without that internal hook is left as it is.
 */
function skipHelpCache(parser: Argv): void {
  const internal = parser as unknown as {
    getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } };
  };
  const usage = internal.getInternalMethods?.().getUsageInstance?.();
  if (usage !== undefined && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}

/** Whether the command line asks for help (--help, or -h alone or among short flags): when in doubt, yes. */
export const helpAsked = (argv: readonly string[]): boolean =>
  argv.some((a) => a === '--help' || a.startsWith('--help=') || /^-[^-]*h/.test(a));

export { VERSION };

/** Every command, for `fxflow` alone (yargs' help lists them too). */
const COMMANDS: readonly (readonly [string, string])[] = [
  [
    'backtest <strategy> [strategy..]',
    'backtest a strategy module (several, or --portfolio: one account) and print its report',
  ],
  ['init <dir>', 'scaffold a strategy project that imports fxflow'],
  ['data <command>', 'manage the local catalog of historical data'],
  [
    'run <strategy> [strategy..]',
    'run a strategy (several, or --portfolio: one account) on a v20 account (practice, live, sandbox)',
  ],
  ['journal <command>', "a run's journal by hand: clear-halt <dir> lets it trade again"],
  ['replay <run>', 'replay a live run through the simulator; reconcile the two'],
  ['sandbox', "serve OANDA's v20 interface on loopback (simulated broker)"],
  ['auth <command>', 'log in to OANDA with OAuth; where the token comes from'],
  ['optimize <strategy>', "sweep a strategy's params on every core"],
  ['walkforward <strategy>', 'optimise in-sample, test out-of-sample, window by window'],
  ['worker --queue <redis>', 'run queued trials of optimize --queue (any machine)'],
  ['report <run>', 'rebuild the HTML page of a run, sweep or walk-forward folder'],
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
