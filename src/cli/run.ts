import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { Writable } from 'node:stream';
import { join, resolve } from 'node:path';
import pino, { type Logger } from 'pino';
import type { Argv } from 'yargs';
import { AuthError, resolveToken } from '../adapters/v20/auth.ts';
import { V20Error } from '../adapters/v20/errors.ts';
import type { Environment } from '../adapters/v20/environments.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { liveCandleSourceOf, type LiveCandleSource } from '../runner/session/official-candles.ts';
import { activeLimits, describeLimits, type RiskLimits } from '../engine/risk.ts';
import { RunnerError } from '../runner/session/errors.ts';
import { fillModelNames, loadConfig } from '../app/config.ts';
import { loadStrategy, type LoadedStrategy } from '../app/load-strategy.ts';
import { isPortfolio, loadPortfolio, type LoadedPortfolio } from '../app/portfolio.ts';
import { strategyInput } from './strategy-input.ts';
import { formatFillModels, type FillModelNames } from '../runner/session/fill-models.ts';
import {
  DriftSpecError,
  type DriftTolerances,
  formatDrift,
  parseMaxDrift,
} from '../runner/recording/drift.ts';
import { clearHaltAdvice, StartSignals } from '../runner/order-path/kill-switch.ts';
import { isUnknownFillHalt, UNKNOWN_FILL_EXIT } from '../runner/order-path/unknown-fills.ts';
import {
  RISK_FLAGS,
  riskFlagOverrides,
  SIM_COST_FLAGS,
  SIM_FILL_FLAGS,
  simFlagOverrides,
  type RiskFlagArgs,
} from './sim-flags.ts';
import { REDACT_PATHS, createLogger, flushLogger } from './logger.ts';
import { VERSION } from './version.ts';
import type { LiveStatus } from '../report/live-status.ts';

/** The flags of `fxflow run`. */
export interface RunArgs extends RiskFlagArgs {
  /** One strategy module, or several (a portfolio on the account); none with --portfolio. */
  strategy?: string[];
  portfolio?: string;
  onStrategyError: 'close' | 'keep';
  env: string;
  url?: string;
  account?: string;
  broker: 'v20' | 'sim';
  shadow?: boolean;
  journal?: string;
  flattenOnExit?: boolean;
  iUnderstandThisIsLive?: boolean;
  param?: (string | number)[];
  killFile?: string;
  flattenTimeout: number;
  statusEvery: number;
  warmup?: number;
  candles: string;
  candleWait: number;
  logFile?: string;
  tokenFile?: string;
  intentDurability: 'before-submit' | 'after-submit';
  journalRebaseEvery: number;
  statusPort?: number;
  newJournal?: boolean;
  maxIntentAge: number;
  requestWindow: number;
  inDoubtMargin: number;
  onUnknownFill: 'halt' | 'close' | 'keep';
  requireToken?: boolean;
  out?: string;
  recordMaxMb: number;
  config?: string;
  commission?: string;
  slippage?: string;
  latency?: string;
  /** --max-drift (repeatable): the drift guard's tolerances, with --shadow. */
  maxDrift?: (string | number)[];
  /** --no-market-hours: the simulator (--broker sim, --shadow) fills market orders decided while the market is closed. */
  marketHours?: boolean;
}

/** Declares the options of `fxflow run` (register with `.command('run <strategy>', ..., runCommand, runLive)`). */
export function runCommand(y: Argv): Argv<RunArgs> {
  return (
    y
      .positional('strategy', {
        type: 'string',
        array: true,
        describe:
          'Path to a strategy module, e.g. strategies/sma-cross.ts; several run as a portfolio on the account, each with its own book (docs/portfolios.md)',
      })
      .option('portfolio', {
        type: 'string',
        describe:
          'A portfolio file: { "strategies": [ { "module", "name", "params", "risk" } ] }: several strategies (the same module twice with other params) on the account, one journal, one halt',
      })
      .option('on-strategy-error', {
        type: 'string',
        choices: ['close', 'keep'],
        default: 'close',
        describe:
          'In a portfolio, a strategy that throws is stopped alone and the others go on: close its book (its positions and pending orders; the default) or keep it open',
      })
      .option('env', {
        type: 'string',
        choices: ['practice', 'live', 'sandbox'],
        demandOption: true,
        describe: 'practice (paper), live (real money) or sandbox (fxflow sandbox on loopback)',
      })
      .option('url', {
        type: 'string',
        describe: 'Override the environment URL (e.g. a sandbox on another port)',
      })
      .option('account', { type: 'string', describe: 'Account ID (default: the only account of the token)' })
      .option('broker', {
        type: 'string',
        choices: ['v20', 'sim'],
        default: 'v20',
        describe: 'v20: orders go to the account; sim: shadow paper, live prices with simulated fills',
      })
      .option('shadow', {
        type: 'boolean',
        describe:
          'Also send every intent to a simulator fed the same prices and report fill-by-fill divergences',
      })
      .option('max-drift', {
        type: 'array',
        string: true,
        describe:
          "With --shadow: halt the run as the kill switch does when the account drifts from its simulator past a tolerance: price=<pips> (one fill's price difference), fills=<count> (fills on one side only; wait=<duration> for the other side, default 10s), pl=<amount> (realized P/L gap over window=<duration>, default 1h); e.g. --max-drift price=1,fills=0. A bare number is price in pips. Over a --config file's drift section",
      })
      .option('journal', {
        type: 'string',
        describe: 'Journal directory (default runs/journal/<env>-<account>-<strategy>)',
      })
      .option('flatten-on-exit', {
        type: 'boolean',
        describe: 'Close every position on SIGINT/SIGTERM before stopping',
      })
      .option('i-understand-this-is-live', {
        type: 'boolean',
        describe: 'Required with --env live: orders use real money',
      })
      .option('param', {
        type: 'array',
        string: true,
        describe: 'Override a strategy param: --param units=2000',
      })
      // The risk limits as backtest, optimize and walkforward take them (sim-flags.ts), over the config's `risk`.
      .options(RISK_FLAGS)
      .option('kill-file', {
        type: 'string',
        describe:
          'Kill switch: when this file exists, cancel pending orders, flatten and stop (SIGUSR2 does the same)',
      })
      .option('flatten-timeout', {
        type: 'number',
        default: 300,
        describe:
          'Seconds the kill switch and --flatten-on-exit keep trying (with backoff, through 5xx and network errors) to get the account confirmed flat before they give up NOT FLAT (exit 1); every few seconds they print what is still open',
      })
      .option('status-every', {
        type: 'number',
        default: 60,
        describe: 'Seconds between status lines (0 = none)',
      })
      .option('warmup', {
        type: 'number',
        describe: "Candles per series for indicator warm-up (default the strategy's history)",
      })
      .option('candles', {
        type: 'string',
        default: 'endpoint',
        describe:
          "Live candles: endpoint (when a period ends, OANDA's official candle from the candles endpoint, the candles backtests use; the tick-built one if it does not come within --candle-wait) or ticks (built from the throttled pricing stream)",
      })
      .option('candle-wait', {
        type: 'number',
        default: 10,
        describe:
          'With --candles endpoint: seconds to wait (retrying) for an official candle before the tick-built one is used',
      })
      .option('log-file', { type: 'string', describe: 'Write JSON logs to this file instead of stderr' })
      .option('intent-durability', {
        type: 'string',
        choices: ['after-submit', 'before-submit'],
        default: 'after-submit',
        describe:
          "When an intent's journal record is fdatasynced: right after the order is sent (default; the record is written before, so a killed process never loses it) or before (power-loss safe, slower)",
      })
      .option('journal-rebase-every', {
        type: 'number',
        default: 10_000,
        describe:
          'Start the journal over from a fresh account baseline once it holds this many transactions (0 = never); bounds its size and the restart time of long runs',
      })
      .option('status-port', {
        type: 'number',
        describe: 'Serve a read-only live status page on http://127.0.0.1:<port>/ (0: any free port)',
      })
      .option('token-file', { type: 'string', describe: 'Read the access token from this file (mode 0600)' })
      .option('new-journal', {
        type: 'boolean',
        describe:
          "Start afresh from the account as it is now: the journal's old log and snapshot are moved into <journal>/replaced-<time>/ (after a reset account, e.g. a restarted sandbox, or a damaged journal)",
      })
      .option('request-window', {
        type: 'number',
        default: 60,
        describe:
          'Seconds: how long after it was sent a request may still reach OANDA and take effect (OANDA publishes no figure). An order without an answer (timeout, cut connection) is in doubt until this plus --in-doubt-margin has passed with no sign of it; only then is it resent. Meanwhile the runner sends nothing else',
      })
      .option('in-doubt-margin', {
        type: 'number',
        default: 10,
        describe: 'Seconds added to --request-window before an order in doubt counts as never received',
      })
      .option('on-unknown-fill', {
        type: 'string',
        choices: ['halt', 'close', 'keep'],
        default: 'halt',
        describe:
          'A fill the runner did not expect (a second order under one client ID, an order it gave up on, one it never placed): halt engages the kill switch (the account is flattened), close closes the trade it opened and trades on, keep only reports it. Each is logged at error level, on the status page and in the report',
      })
      .option('max-intent-age', {
        type: 'number',
        default: 5,
        describe:
          'Seconds: a journaled market order or close that never reached OANDA is not sent at a restart when older than this; it is reported and the strategy gets a reject',
      })
      .option('config', {
        type: 'string',
        describe:
          'A JSON file merged over config/default.json: its risk limits (risk.*) apply as in a backtest; with --broker sim or --shadow also its fill models (fill.slippage, fill.latency, costs.commission, costs.commissionPerMillion), as fxflow backtest reads them',
      })
      // The simulator's fill flags as backtest takes them (sim-flags.ts); prices are live ticks, so no --path.
      .options({
        'market-hours': SIM_FILL_FLAGS['market-hours'],
        slippage: SIM_FILL_FLAGS.slippage,
        latency: SIM_FILL_FLAGS.latency,
        commission: SIM_COST_FLAGS.commission,
      })
      .option('require-token', {
        type: 'boolean',
        describe:
          "With --env sandbox: send a token (the sandbox was started with --require-token). It comes only from the sandbox's own entry: config/environments.json sandbox.token or sandbox.tokenFile, ~/.fxflow/token-sandbox, or --token-file; FXFLOW_TOKEN/OANDA_TOKEN are never sent to a sandbox",
      })
      .option('out', {
        type: 'string',
        describe:
          "The run folder (default runs/live/<UTC stamp>-<strategy>-<env>/, or the folder of the journal's previous run: a restart continues it): run.json, the inputs as received (for fxflow replay) and, at the stop, the report files",
      })
      .option('record-max-mb', {
        type: 'number',
        default: 2048,
        describe:
          'Stop recording the inputs (with a warning; the run goes on) once they hold this many MB of JSON lines (about a tenth of that on disk, gzip)',
      })
      .example('$0 run strategies/sma-cross.ts --env practice', 'Paper trading on the practice account')
      .example(
        '$0 run strategies/sma-cross.ts --env sandbox --url http://127.0.0.1:8080 --max-units 10000',
        'Against a local fxflow sandbox, with a unit limit',
      )
      .example(
        '$0 run strategies/sma-cross.ts --env practice --broker sim --slippage fixed:0.5 --latency fixed:150',
        'Shadow paper with fills half a pip worse, orders arriving 150 ms after the decision',
      )
      .example(
        '$0 run strategies/sma-cross.ts strategies/breakout-tpsl.ts --env practice',
        'Two strategies on one account (a portfolio): one journal, one halt, each on its own book',
      )
      .example(
        '$0 run strategies/sma-cross.ts --env live --i-understand-this-is-live --max-daily-loss 200',
        'Real money, with a daily loss limit',
      ) as unknown as Argv<RunArgs>
  );
}

/**
 * The fill models of the run's simulators (`--broker sim`, `--shadow`): config/default.json, then
 * `--config`, then `--slippage/--latency/--commission`, read and checked as `fxflow backtest`
 * reads them. Undefined without a simulator; giving any of those flags then is a mistake, said so.
 */
export function runFillModels(
  a: Pick<RunArgs, 'broker' | 'shadow' | 'config' | 'commission' | 'slippage' | 'latency' | 'marketHours'>,
): FillModelNames | undefined {
  if (a.broker !== 'sim' && a.shadow !== true) {
    const given = (['slippage', 'latency', 'commission', 'marketHours'] as const).filter(
      (k) => a[k] !== undefined,
    );
    if (given.length > 0) {
      throw new RunnerError(
        'RUNNER',
        `${given.map((k) => (k === 'marketHours' ? `--${a.marketHours ? '' : 'no-'}market-hours` : `--${k}`)).join(', ')} shape${given.length === 1 ? 's' : ''} the simulated fills: use ${given.length === 1 ? 'it' : 'them'} with --broker sim or --shadow (with --broker v20 the fills are the account's own). Nothing was started.`,
      );
    }
    return undefined;
  }
  return fillModelNames(loadConfig(a.config, simFlagOverrides(a)));
}

/**
 * The drift guard's tolerances (`--max-drift`, over a `--config` file's `drift` section), with
 * `--shadow` only: the guard compares the account with its shadow simulator. Undefined when none is given.
 */
export function runDrift(a: Pick<RunArgs, 'shadow' | 'config' | 'maxDrift'>): DriftTolerances | undefined {
  const given = (a.maxDrift ?? []).map(String);
  try {
    if (a.shadow !== true) {
      if (given.length > 0)
        throw new RunnerError(
          'RUNNER',
          '--max-drift compares the account with its shadow simulator: use it with --shadow. Nothing was started.',
        );
      return undefined;
    }
    const fromConfig = a.config !== undefined ? loadConfig(a.config).drift : undefined;
    return given.length > 0 ? parseMaxDrift(given, fromConfig) : fromConfig;
  } catch (e) {
    if (e instanceof DriftSpecError) throw new RunnerError('RUNNER', `${e.message}. Nothing was started.`);
    throw e;
  }
}

/** Refuses `--env live` without the explicit confirmation flag. */
export function checkLiveConsent(a: Pick<RunArgs, 'env' | 'iUnderstandThisIsLive' | 'broker'>): void {
  if (a.env === 'live' && a.iUnderstandThisIsLive !== true && a.broker !== 'sim') {
    throw new RunnerError(
      'RUNNER_LIVE_UNCONFIRMED',
      '--env live trades real money and needs an explicit confirmation: add --i-understand-this-is-live (or paper-trade first with --env practice). Nothing was started.',
    );
  }
}

/** `--max-intent-age` (seconds) in ms. */
export function maxIntentAgeOf(v: number): number {
  if (!(Number.isFinite(v) && v >= 0))
    throw new RunnerError(
      'RUNNER',
      `--max-intent-age must be a number of seconds >= 0 (got ${v}); e.g. --max-intent-age 5`,
    );
  return Math.round(v * 1000);
}

/**
 * The token a run sends. practice/live: \`resolveToken\` (FXFLOW_TOKEN, OANDA_TOKEN, the config, the
 * environment's token file). sandbox: none unless \`--require-token\`, and then only from the
 * sandbox's own entry (its config token or token file, \`~/.fxflow/token-sandbox\`, or \`--token-file\`):
 * a token in FXFLOW_TOKEN may be a live one, and a sandbox is plain HTTP.
 */
export function runToken(
  env: Environment,
  a: Pick<RunArgs, 'env' | 'tokenFile' | 'requireToken'>,
  processEnv: NodeJS.ProcessEnv = process.env,
  home?: string,
): string | undefined {
  if (a.env !== 'sandbox') {
    if (a.requireToken === true)
      throw new RunnerError(
        'RUNNER',
        '--require-token is for --env sandbox only (practice and live always send a token)',
      );
    return resolveToken({
      environment: env,
      ...(a.tokenFile !== undefined ? { tokenFile: a.tokenFile } : {}),
      env: processEnv,
      ...(home !== undefined ? { home } : {}),
    }).token.reveal();
  }
  if (a.requireToken !== true) return undefined;
  // Only the sandbox's own sources: never the process environment's variables.
  try {
    return resolveToken({
      environment: env,
      ...(a.tokenFile !== undefined ? { tokenFile: a.tokenFile } : {}),
      env: {},
      ...(home !== undefined ? { home } : {}),
    }).token.reveal();
  } catch (e) {
    if (!(e instanceof AuthError)) throw e;
    // resolveToken's own advice (fxflow auth login, FXFLOW_TOKEN) is for practice and live: neither reaches a sandbox.
    throw new RunnerError(
      'RUNNER',
      `--require-token: no sandbox token (${e.message.split(':')[0]}). A sandbox gets a token only from its own entry: --token-file <file>, sandbox.token or sandbox.tokenFile in config/environments.json, or ~/.fxflow/token-sandbox (one line, mode 0600) holding the token the sandbox was started with (fxflow sandbox --require-token <token>); FXFLOW_TOKEN and OANDA_TOKEN are never sent to a sandbox. Nothing was started.`,
    );
  }
}

/**
 * A 401 from a sandbox, said as what helps there (v20's own hint, \`fxflow auth\`, is for practice
 * and live): without --require-token the sandbox asks for a token; with it, the token is not the
 * sandbox's. Other errors are returned as they are.
 */
export function explainSandbox401(e: unknown, a: Pick<RunArgs, 'env' | 'requireToken' | 'url'>): unknown {
  if (a.env !== 'sandbox' || !(e instanceof V20Error) || e.status !== 401) return e;
  const where = `${a.url ?? 'the sandbox'} (${e.method} ${e.path})`;
  return new RunnerError(
    'RUNNER',
    a.requireToken === true
      ? `${where} refused the token (HTTP 401): it is not the one the sandbox was started with (fxflow sandbox --require-token <token>). Put that token in the sandbox's own entry: --token-file <file>, sandbox.token or sandbox.tokenFile in config/environments.json, or ~/.fxflow/token-sandbox. Nothing was traded.`
      : `${where} asks for a token (HTTP 401: it was started with --require-token). Run again with --require-token; the token then comes only from the sandbox's own entry: --token-file <file>, sandbox.token or sandbox.tokenFile in config/environments.json, or ~/.fxflow/token-sandbox. Nothing was traded.`,
  );
}

/** `--flatten-timeout` (seconds) in ms. */
export function flattenTimeoutOf(v: number): number {
  if (!(Number.isFinite(v) && v > 0))
    throw new RunnerError(
      'RUNNER',
      `--flatten-timeout must be a number of seconds > 0 (got ${v}); e.g. --flatten-timeout 300`,
    );
  return Math.round(v * 1000);
}

/**
 * A kill file left in place would engage the kill switch the moment the run starts (flatten and
 * exit): refused before anything is opened or sent, saying why and what to do.
 */
export function checkKillFile(killFile: string | undefined): void {
  if (killFile === undefined || !existsSync(killFile)) return;
  throw new RunnerError(
    'RUNNER',
    `the kill file ${resolve(killFile)} exists (left by an earlier kill switch?): with it in place the kill switch would engage at once, flatten the account and stop. Nothing was started. Remove it (rm ${resolve(killFile)}) to trade, or close the account's positions with --flatten-on-exit and Ctrl-C`,
  );
}

/** `--journal-rebase-every`: a whole number of transactions, 0 for never. */
export function rebaseEveryOf(v: number): number {
  if (!(Number.isInteger(v) && v >= 0))
    throw new RunnerError(
      'RUNNER',
      `--journal-rebase-every must be a whole number of transactions, 0 for never (got ${v})`,
    );
  return v;
}

/** `--candles` and `--candle-wait` (seconds) as runner options. */
export function candleOptionsOf(a: Pick<RunArgs, 'candles' | 'candleWait'>): {
  candles: LiveCandleSource;
  candleWaitMs: number;
} {
  let candles: LiveCandleSource;
  try {
    candles = liveCandleSourceOf(a.candles, '--candles');
  } catch (e) {
    throw new RunnerError('RUNNER', (e as Error).message);
  }
  if (!(Number.isFinite(a.candleWait) && a.candleWait >= 0))
    throw new RunnerError(
      'RUNNER',
      `--candle-wait must be a number of seconds >= 0 (got ${a.candleWait}); e.g. --candle-wait 10`,
    );
  return { candles, candleWaitMs: Math.round(a.candleWait * 1000) };
}

/**
 * The run's risk limits: config/default.json's `risk` (the default orders-per-minute limit and
 * intents-per-event cap), then `--config`'s, then the flags, read and checked as a backtest reads
 * them; a limit at 0 is off.
 */
export function limitsOf(a: Pick<RunArgs, 'config'> & RiskFlagArgs): RiskLimits {
  return activeLimits(loadConfig(a.config, riskFlagOverrides(a)).risk);
}

/** pino JSON lines as short text lines, for a terminal. */
function prettyStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        try {
          const { level, time, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
          const name =
            (
              { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' } as Record<
                string,
                string
              >
            )[String(level)] ?? String(level);
          const t = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : '';
          const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
          out.write(`${t} ${name.padEnd(5)} ${String(msg ?? '')}${extra}\n`);
        } catch {
          out.write(`${line}\n`);
        }
      }
      done();
    },
  });
}

function runLogger(a: RunArgs): Logger {
  if (a.logFile !== undefined || !process.stderr.isTTY)
    return createLogger(a.logFile !== undefined ? { file: a.logFile } : {});
  return pino(
    {
      level: process.env.FXFLOW_LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: undefined,
    },
    prettyStream(process.stderr),
  );
}

/** `fxflow run`: runs a strategy on a v20 account until SIGINT/SIGTERM or the kill switch, then prints its report. */
export async function runLive(a: RunArgs): Promise<void> {
  // What to run, checked before anything is read or opened (a portfolio file too).
  const input = strategyInput(a.strategy ?? [], a.portfolio, a.param, 'run');
  checkLiveConsent(a);
  checkKillFile(a.killFile);
  const flattenTimeoutMs = flattenTimeoutOf(a.flattenTimeout);
  const fill = runFillModels(a);
  const maxDrift = runDrift(a);
  const limits = limitsOf(a);
  const rebaseEvery = rebaseEveryOf(a.journalRebaseEvery);
  const candleOptions = candleOptionsOf(a);
  // Tests shorten the Ctrl-C window (the 3 s between the second and third Ctrl-C).
  const windowEnv = process.env.FXFLOW_CTRL_C_WINDOW_MS;
  const ctrlCWindowMs =
    windowEnv !== undefined && windowEnv !== '' && Number.isFinite(Number(windowEnv))
      ? Number(windowEnv)
      : undefined;
  // The operator's signals and the kill file act from here on, before anything is read or opened
  // (Node's default for SIGUSR2 would end the process with nothing flattened); the runner's own
  // handlers take over once it runs.
  const early = new StartSignals({
    ...(a.killFile !== undefined ? { killFile: resolve(a.killFile) } : {}),
    say: (line) => process.stderr.write(`fxflow run: ${line}\n`),
    abandon: () => {
      process.stderr.write(
        "fxflow run: third Ctrl-C: exiting during the start. NOT FLAT as far as anyone confirmed: the account was not checked. Check the account now (OANDA's platform, or fxflow run again with --flatten-on-exit)\n",
      );
      process.exit(130);
    },
    ...(ctrlCWindowMs !== undefined ? { ctrlCWindowMs } : {}),
  });
  try {
    await runStarted(a, early, {
      input,
      flattenTimeoutMs,
      fill,
      maxDrift,
      limits,
      rebaseEvery,
      candleOptions,
      ctrlCWindowMs,
    });
  } finally {
    early.close();
  }
}

/** `fxflow run` once its flags are read and the start's signals are handled (`early`). */
async function runStarted(
  a: RunArgs,
  early: StartSignals,
  f: {
    input: ReturnType<typeof strategyInput>;
    flattenTimeoutMs: number;
    fill: FillModelNames | undefined;
    maxDrift: DriftTolerances | undefined;
    limits: RiskLimits;
    rebaseEvery: number;
    candleOptions: { candles: LiveCandleSource; candleWaitMs: number };
    ctrlCWindowMs: number | undefined;
  },
): Promise<void> {
  const { flattenTimeoutMs, fill, maxDrift, limits, rebaseEvery, candleOptions, ctrlCWindowMs } = f;
  // The runner and the HTTP stack (undici) are loaded when a run starts: other commands start without them.
  const [{ environment }, { v20Client }, { Runner }] = await Promise.all([
    import('../adapters/v20/environments.ts'),
    import('./v20-client.ts'),
    import('../runner/session/runner.ts'),
  ]);
  const env = environment(a.env, a.url !== undefined ? { url: a.url } : {});
  const token = runToken(env, a);
  const maxIntentAgeMs = maxIntentAgeOf(a.maxIntentAge);
  for (const [flag, v] of [
    ['--request-window', a.requestWindow],
    ['--in-doubt-margin', a.inDoubtMargin],
  ] as const) {
    if (!(Number.isFinite(v) && v >= 0))
      throw new RunnerError(
        'RUNNER',
        `${flag} must be a number of seconds >= 0 (got ${v}); e.g. ${flag} ${flag === '--request-window' ? 60 : 10}`,
      );
  }
  const log = runLogger(a);
  const prettyLog = a.logFile === undefined && process.stderr.isTTY === true;
  const { http, rest } = await v20Client(env, token, log);
  let accountID = a.account;
  if (accountID === undefined) {
    const accounts = await rest.accounts().catch((e: unknown) => {
      throw explainSandbox401(e, a);
    });
    if (accounts.length !== 1) {
      throw new RunnerError(
        'RUNNER',
        `the token gives access to ${accounts.length} accounts (${accounts.map((x) => x.id).join(', ')}): choose one with --account`,
      );
    }
    accountID = accounts[0]!.id;
  }
  const input = f.input;
  const loaded: LoadedStrategy | LoadedPortfolio =
    typeof input === 'string'
      ? await loadStrategy(input, (a.param ?? []).map(String))
      : await loadPortfolio(input.portfolio, loadConfig(a.config), {}, input.label);
  const members = isPortfolio(loaded) ? loaded.members : undefined;
  const journalDir = resolve(
    a.journal ??
      join('runs', 'journal', `${a.env}-${accountID}-${loaded.name}${a.broker === 'sim' ? '-sim' : ''}`),
  );
  if (!(Number.isFinite(a.recordMaxMb) && a.recordMaxMb > 0))
    throw new RunnerError(
      'RUNNER',
      `--record-max-mb must be a positive number of megabytes (got ${a.recordMaxMb}); e.g. --record-max-mb 2048`,
    );
  const { liveRunFolder, openLiveRunFolder, fileSha256, finishLiveRunFolder } =
    await import('../app/live-run-folder.ts');
  const { subscriptionsOf } = await import('../engine/engine.ts');
  const runDir = liveRunFolder({
    ...(a.out !== undefined ? { out: a.out } : {}),
    journalDir,
    newJournal: a.newJournal === true,
    name: loaded.name,
    env: a.env,
  });
  const subs = subscriptionsOf(loaded.strategy, loaded.params, loaded.name);
  const recorder = openLiveRunFolder(runDir, journalDir, {
    meta: {
      fxflow: VERSION,
      strategy:
        members === undefined
          ? { file: resolve(loaded.file), name: loaded.name, sha256: fileSha256(loaded.file) }
          : { file: loaded.file, name: loaded.name, sha256: '' },
      params: loaded.params,
      ...(members !== undefined
        ? {
            portfolio: members.map((m) => ({
              file: resolve(m.file),
              name: m.name,
              sha256: fileSha256(m.file),
              params: m.params,
            })),
          }
        : {}),
      env: a.env,
      accountID,
      broker: a.broker,
      subscriptions: {
        candles: subs.candles ?? [],
        ticks: subs.ticks ?? [],
        signals: subs.signals ?? [],
        calendar: subs.calendar ?? [],
        spreads: subs.spreads ?? [],
        cot: subs.cot ?? [],
      },
      config: {
        limits,
        ...(fill !== undefined ? { fill } : {}),
        candles: candleOptions.candles,
        candleWaitMs: candleOptions.candleWaitMs,
        shadow: a.shadow === true,
        ...(maxDrift !== undefined ? { maxDrift } : {}),
        flattenOnExit: a.flattenOnExit === true,
        warmup: a.warmup ?? null,
        maxIntentAgeMs,
        requestWindowMs: a.requestWindow * 1000,
        inDoubtMarginMs: a.inDoubtMargin * 1000,
        journal: journalDir,
      },
    },
    maxBytes: Math.round(a.recordMaxMb * 1024 * 1024),
    onWarn: (m) => {
      log.warn({ runFolder: runDir }, m);
      process.stderr.write(`WARNING: ${m}\n`);
    },
  });
  const status: LiveStatus | undefined =
    a.statusPort === undefined
      ? undefined
      : await (
          await import('../report/live-status.ts')
        ).liveStatus({
          ...a,
          statusPort: a.statusPort,
          strategy: loaded.name,
          accountID,
          limits,
          rest,
          runner: () => runner,
        });
  const { V20Labs } = await import('../adapters/v20/labs.ts');
  // ctx.plot into the run folder's plots.csv, added to by each session of the run (written only once the strategy plots).
  const plots = new (await import('../app/plot-file.ts')).PlotFile(runDir, { append: true });
  // The status page first, before the journal is opened (the runner's constructor): a port in use
  // refuses the start with nothing written. (No await between this and the runner: no request is
  // served before the runner exists.)
  if (status) process.stdout.write(`Live status: ${(await status.start()).url}\n`);
  const journalExisted = existsSync(journalDir);
  const runnerOptions: ConstructorParameters<typeof Runner>[0] = {
    // The one assembly of every mode: the runner is handed it (it sits below src/app).
    assemble: (await import('../app/assembly.ts')).assemble,
    strategy: loaded.strategy,
    name: loaded.name,
    params: loaded.params,
    ...(members !== undefined
      ? {
          members: members.map((m) => ({
            strategy: m.strategy,
            name: m.name,
            params: m.params,
            ...(m.risk !== undefined ? { limits: m.risk } : {}),
          })),
          onStrategyError: a.onStrategyError,
        }
      : {}),
    http,
    rest,
    accountID,
    instruments: loadInstruments(),
    journalDir,
    limits,
    broker: a.broker,
    shadow: a.shadow === true,
    intentDurability: a.intentDurability,
    rebaseEvery,
    flattenOnExit: a.flattenOnExit === true,
    signals: true,
    newJournal: a.newJournal === true,
    maxIntentAgeMs,
    ...(maxDrift !== undefined ? { maxDrift } : {}),
    requestWindowMs: a.requestWindow * 1000,
    inDoubtMarginMs: a.inDoubtMargin * 1000,
    ...(fill !== undefined ? { fill } : {}),
    onUnknownFill: a.onUnknownFill,
    ...(a.killFile !== undefined ? { killFile: resolve(a.killFile) } : {}),
    flattenTimeoutMs,
    // The operator's terminal hears the kill switch and the stop even when the log goes to --log-file
    // (or is JSON); a terminal that shows the log as text lines already has them.
    say: (line) => {
      if (!prettyLog) process.stderr.write(`fxflow run: ${line}\n`);
    },
    ...(ctrlCWindowMs !== undefined ? { ctrlCWindowMs } : {}),
    abandon: (open) => {
      process.stderr.write(
        `fxflow run: third Ctrl-C: exiting now, before the stop finished. ${open.length > 0 ? `NOT FLAT: still open as last seen: ${open.join(', ')}` : 'NOT FLAT as far as anyone confirmed: nothing was open as last seen, but the account did not confirm it'}. Check the account now (OANDA's platform, or fxflow run again with --flatten-on-exit)\n`,
      );
      void flushLogger(log).finally(() => process.exit(130));
    },
    statusEveryMs: a.statusEvery * 1000,
    ...candleOptions,
    ...(a.warmup !== undefined ? { warmup: a.warmup } : {}),
    log,
    recorder,
    labs: new V20Labs(http),
    ...(status
      ? { onTransaction: (tx) => status.provider.transaction(tx), onIntent: () => status.provider.intent() }
      : {}),
    onPlot: plots.plot,
  };
  let runner: InstanceType<typeof Runner>;
  try {
    runner = new Runner(runnerOptions);
  } catch (e) {
    // A journal refused as it is opened (in use, damaged): the status page closes with it.
    await status?.close();
    throw e;
  }
  // A kill switch engaged before now is the runner's from here: journaled at once.
  early.attach(runner);
  try {
    await runner.start();
  } catch (e) {
    await recorder.stop(`failed to start: ${(e as Error).message}`).catch(() => undefined);
    // A refused start leaves no trace: the journal's lock released, and a journal folder this start
    // created (nothing in it but the empty log) removed.
    await status?.close();
    runner.journal.close();
    if (!journalExisted) removeEmptyJournal(journalDir);
    throw explainSandbox401(e, a);
  }
  // The runner's own handlers are in place: the start's hand over; a stop asked for meanwhile is made now.
  early.close();
  if (early.stop !== undefined) void runner.stop(early.stop);
  // Printed once the recording has started: a refused start has no run folder.
  process.stdout.write(`run folder: ${runDir} (the inputs as received, for fxflow replay)\n`);
  if (maxDrift !== undefined)
    process.stdout.write(
      `drift guard: --max-drift ${formatDrift(maxDrift)}: past any of these the run halts as the kill switch does\n`,
    );
  const simulator = (runner.sim ?? runner.shadowBook?.sim)?.models;
  const models = simulator !== undefined ? `; ${formatFillModels(simulator)}` : '';
  process.stdout.write(
    `fxflow run: ${loaded.name} on ${a.env} account ${accountID} (broker ${a.broker}${a.shadow ? ', shadow' : ''}${models}); risk limits: ${describeLimits(limits)}; journal ${journalDir}. Ctrl-C stops${a.flattenOnExit ? ' and flattens' : ''}.\n`,
  );
  await runner.done;
  const res = await runner.stop();
  await flushLogger(log);
  process.stdout.write(`${res.report}\n`);
  process.stdout.write(
    `intents ${res.intents}, transactions ${res.transactions}, risk refusals ${res.risk.breaches}${
      res.risk.breaches > 0
        ? ` (${Object.entries(res.risk.byLimit)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')})`
        : ''
    }; recovered: replayed ${res.recovered.replayed}, looked up ${res.recovered.lookedUp}, resubmitted ${res.recovered.resubmitted}, expired ${res.recovered.expired}, state ${res.recovered.restoredState ? 'restored' : 'fresh'}\n`,
  );
  const acc = res.account;
  if (acc !== undefined) {
    process.stdout.write(
      acc.ok
        ? `account ${accountID} at stop (read from OANDA at transaction ${acc.lastTransactionID}): 0 positions, 0 pending entry orders, ${acc.openTrades} open trades\n`
        : `account ${accountID} at stop: NOT FLAT after ${acc.seconds} s and ${acc.rounds} round(s) of closes: ${acc.open.length > 0 ? `still open: ${acc.open.join(', ')}` : 'what is open is unknown'}${acc.lastTransactionID !== '' ? ` (read at transaction ${acc.lastTransactionID})` : ''}; ${acc.error ?? ''}\n`,
    );
  }
  process.stdout.write(
    `candles: ${res.candles.official} official, ${res.candles.fromTicks} built from ticks${res.candles.dropped > 0 ? `, ${res.candles.dropped} not delivered at stop` : ''} (--candles ${res.candles.source})\n`,
  );
  process.stdout.write(
    `tick-to-order latency: p50 ${res.latency.p50.toFixed(3)} ms, p99 ${res.latency.p99.toFixed(3)} ms, max ${res.latency.max.toFixed(3)} ms (${res.latency.n} orders)\n`,
  );
  if (res.shadow !== undefined) process.stdout.write(`${res.shadow}\n`);
  plots.close();
  const folderWarnings = await finishLiveRunFolder(runDir, {
    report: res.report,
    summary: res.summary,
    portfolio: runner.portfolio,
    currency: runner.portfolio.ledger.currency,
    meta: recorder.meta,
  });
  for (const w of folderWarnings) process.stderr.write(`run folder: ${w}\n`);
  process.stdout.write(
    `Run saved in ${runDir}${recorder.capped ? ' (inputs recorded up to the --record-max-mb cap)' : ''}; replay it with: fxflow replay ${runDir}\n`,
  );
  await status?.close();
  await http.close();
  // Halted (now or before): how to trade on this journal again, whether or not the account is flat.
  const halt = runner.halted;
  if (halt !== undefined)
    process.stderr.write(
      `fxflow run: journal ${journalDir} is HALTED since ${new Date(halt.at).toISOString()} (${halt.why}): a run on it trades nothing, only finishes the flatten and stops. ${clearHaltAdvice(journalDir)}\n`,
    );
  if (acc !== undefined && !acc.ok) {
    throw new RunnerError(
      'RUNNER',
      `NOT FLAT: the kill switch / flatten could not confirm from account ${accountID} that nothing is open (${acc.open.length > 0 ? `still open: ${acc.open.join(', ')}` : 'what is open is unknown'}; ${acc.error ?? ''}). Check the account now (OANDA's platform, or fxflow run again with --flatten-on-exit)`,
    );
  }
  // A run stopped by an error (a strategy that threw) exits non-zero, for whatever supervises it.
  if (res.reason.startsWith('error: '))
    throw new RunnerError(
      'RUNNER',
      `the run stopped on an error, see the report above: ${res.reason.slice('error: '.length)}`,
    );
  // Halted by an unknown fill (--on-unknown-fill halt): flat, but not a clean end; an operator must look.
  if (halt !== undefined && isUnknownFillHalt(halt.why)) {
    process.stderr.write(
      `fxflow run: the run halted itself on an UNKNOWN FILL (${halt.why.slice('unknown fill: '.length)}); the account is flat, but find out where that order came from before trading on. Exit code ${UNKNOWN_FILL_EXIT}.\n`,
    );
    process.exitCode = UNKNOWN_FILL_EXIT;
  }
}

/**
 * Removes a journal folder a refused start created, when it holds nothing but what the open made
 * (an empty journal.log; the lock is released before). Anything else in it is left alone.
 */
function removeEmptyJournal(dir: string): void {
  try {
    const files = readdirSync(dir);
    if (files.every((f) => f === 'journal.log' && statSync(join(dir, f)).size === 0))
      rmSync(dir, { recursive: true, force: true });
  } catch {
    // Already gone, or unreadable: nothing to tidy.
  }
}
