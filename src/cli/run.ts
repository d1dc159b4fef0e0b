import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { Writable } from 'node:stream';
import { join, resolve } from 'node:path';
import pino, { type Logger } from 'pino';
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
import { riskFlagOverrides, simFlagOverrides, type RiskFlagArgs } from './sim-flags.ts';
import type { RunArgs } from './run-options.ts';

export { runCommand, type RunArgs } from './run-options.ts';
import { REDACT_PATHS, createLogger, flushLogger } from './logger.ts';
import { VERSION } from './version.ts';
import type { LiveStatus } from '../report/live-status.ts';

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
