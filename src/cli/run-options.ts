// The flags of `fxflow run` and their declaration (yargs): apart from the run itself, so `--help`
// and the command line's checks load nothing of the runner.
import type { Argv } from 'yargs';
import { RISK_FLAGS, SIM_COST_FLAGS, SIM_FILL_FLAGS, type RiskFlagArgs } from './sim-flags.ts';

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
