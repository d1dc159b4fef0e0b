import { resolve } from 'node:path';
import type { Options } from 'yargs';
import { CATALOG_FLAG } from './catalog-flag.ts';
import { FILL_MODEL_OPTIONS, fillModelOverrides, type FillModelArgs } from './fill-options.ts';

/**
 * The data, fill and cost flags of every command that runs the simulator on historical data
 * (`backtest`, `optimize`, `walkforward`), defined once: the same names, choices and help, read
 * into the configuration the same way (`simFlagOverrides`). `replay` and `run --broker sim` take
 * the fill and cost part (`SIM_FILL_FLAGS`, `SIM_COST_FLAGS`): their prices are the run's own.
 */

/** Where the candles come from and how a file is read. */
export const SIM_DATA_FLAGS = {
  ...CATALOG_FLAG,
  data: {
    type: 'string',
    describe: 'Read candles from this file or folder instead of the catalog (any format data import reads)',
  },
  format: {
    type: 'string',
    describe:
      'Format of --data when it is not detected: generic, lean, histdata, oanda-json, oanda-mid-csv, dukascopy, metatrader',
  },
  timezone: {
    type: 'string',
    describe:
      "The clock of --data's times when they carry no offset: an IANA zone (Europe/Berlin), a fixed offset (-05:00) or a shifted zone (Europe/London-05:00); default the format's (docs/data.md, Time zones)",
  },
  side: {
    type: 'string',
    choices: ['bid', 'ask', 'mid'],
    describe:
      'The side of a one-sided --data file that does not say (generic time,o,h,l,c, Dukascopy, MetaTrader): the spread model acts around it',
  },
  spread: {
    type: 'string',
    choices: ['native', 'mid', 'fixed', 'hourly', 'labs'],
    describe:
      "Spread model (data.spread): the data's own bid/ask, zero spread at mid, a fixed spread, the config's hourly profile, or the recorded labs spreads",
  },
  'spread-pips': {
    type: 'number',
    describe: 'Spread in pips for --spread fixed and one-sided data (data.spreadPips)',
  },
} as const satisfies Record<string, Options>;

/** How orders fill. */
export const SIM_FILL_FLAGS = {
  path: {
    type: 'string',
    choices: ['adaptive', 'worst', 'exact'],
    describe:
      'Intra-candle path model (fill.path): nearer extreme first, the extreme adverse to the position first, or the real ticks inside each candle (exact, with --ticks)',
  },
  'market-hours': {
    type: 'boolean',
    describe:
      "Halt market orders decided while the instrument's market is closed, as OANDA does (fill.marketHours, default on); --no-market-hours for 24/7 or synthetic data",
  },
  slippage: FILL_MODEL_OPTIONS.slippage,
  latency: FILL_MODEL_OPTIONS.latency,
} as const satisfies Record<string, Options>;

/** What trading costs. */
export const SIM_COST_FLAGS = {
  commission: FILL_MODEL_OPTIONS.commission,
  financing: {
    type: 'boolean',
    describe: 'Charge daily financing at 17:00 New York (costs.financing); --no-financing to disable',
  },
  'financing-history': {
    type: 'string',
    describe:
      "Charge each day's financing at the rates fxflow record --financing recorded for it in this catalog (default: the run's catalog) instead of today's (costs.financingHistory)",
  },
  'financing-before-history': {
    type: 'string',
    choices: ['error', 'static'],
    describe:
      "Days before the first recorded financing day: refuse the run (error, the default) or charge today's rates (static) (costs.financingBeforeHistory)",
  },
} as const satisfies Record<string, Options>;

export { CATALOG_FLAG };

/**
 * The risk gate's limits (config `risk`, src/engine/risk.ts), the same flags for `run` and for every
 * simulator command, so a backtest refuses what the live run would. 0 turns a limit off.
 */
export const RISK_FLAGS = {
  'max-units': {
    type: 'number',
    describe: 'Risk: largest position per instrument, in units (pending orders included) (risk.maxUnits)',
  },
  'max-open-trades': {
    type: 'number',
    describe: 'Risk: most open trades plus pending entry orders (risk.maxOpenTrades)',
  },
  'max-orders-per-minute': {
    type: 'number',
    describe:
      'Risk: most orders opening exposure per sliding minute of market time (risk.maxOrdersPerMinute; default 60, 0 = no limit)',
  },
  'max-daily-loss': {
    type: 'number',
    describe:
      'Risk: largest loss per 17:00 New York trading day, account currency (realized + unrealized) (risk.maxDailyLoss)',
  },
  'max-spread-pips': {
    type: 'number',
    describe: 'Risk: widest spread at entry, in pips (risk.maxSpreadPips)',
  },
  'max-intents-per-event': {
    type: 'number',
    describe:
      'Risk: most intents (exits included) the strategy may decide at one event; the rest are refused (risk.maxIntentsPerEvent; default 50, 0 = no limit)',
  },
} as const satisfies Record<string, Options>;

/**
 * How a portfolio backtest's simulated netting account nets (account.portfolioNetting), for the
 * commands that backtest a portfolio (`backtest`, and `optimize`/`walkforward` of a member). No
 * yargs `choices`: a wrong value is refused by the config's check, whose message names the flag,
 * the field and the values.
 */
export const PORTFOLIO_NETTING_FLAG = {
  'portfolio-netting': {
    type: 'string',
    describe:
      "A portfolio's netting account (account.portfolioNetting): strategy (default) nets each strategy's orders against its own trades only; account nets across strategies as a real netting account does. Ignored for one strategy and on hedging accounts",
  },
} as const satisfies Record<string, Options>;

export const SIM_FLAGS = { ...SIM_DATA_FLAGS, ...SIM_FILL_FLAGS, ...SIM_COST_FLAGS, ...RISK_FLAGS } as const;

/** The risk flags as yargs gives them (camelCase), each optional. */
export interface RiskFlagArgs {
  maxUnits?: number;
  maxOpenTrades?: number;
  maxOrdersPerMinute?: number;
  maxDailyLoss?: number;
  maxSpreadPips?: number;
  maxIntentsPerEvent?: number;
}

/** The risk flags given, as the config's `risk` fragment (only the flags given). */
export function riskFlagOverrides(a: RiskFlagArgs): Fragment {
  const risk: Record<string, number> = {};
  for (const k of [
    'maxUnits',
    'maxOpenTrades',
    'maxOrdersPerMinute',
    'maxDailyLoss',
    'maxSpreadPips',
    'maxIntentsPerEvent',
  ] as const)
    if (a[k] !== undefined) risk[k] = a[k]!;
  return Object.keys(risk).length === 0 ? {} : { risk };
}

/** The flags as yargs gives them (camelCase), each optional. */
export interface SimFlagArgs extends FillModelArgs, RiskFlagArgs {
  catalog?: string;
  data?: string;
  format?: string;
  timezone?: string;
  side?: string;
  spread?: string;
  spreadPips?: number;
  path?: string;
  marketHours?: boolean;
  financing?: boolean;
  financingHistory?: string;
  financingBeforeHistory?: string;
}

type Fragment = Record<string, Record<string, string | number | boolean>>;

/**
 * The flags given, as a configuration fragment over the config file (`loadConfig`'s overrides).
 * `--financing-history` with a folder is passed as given (the caller resolves it); alone (empty)
 * it is left to the caller, which knows the run's catalog.
 */
export function simFlagOverrides(a: SimFlagArgs): Fragment {
  const o: Fragment = {};
  const set = (section: string, key: string, v: string | number | boolean | undefined): void => {
    if (v !== undefined) (o[section] ??= {})[key] = v;
  };
  if (a.catalog !== undefined && a.catalog !== '') set('data', 'catalog', resolve(a.catalog));
  set('data', 'spread', a.spread);
  set('data', 'spreadPips', a.spreadPips);
  set('fill', 'path', a.path);
  set('fill', 'marketHours', a.marketHours);
  set('costs', 'financing', a.financing);
  if (a.financingHistory !== undefined && a.financingHistory !== '')
    set('costs', 'financingHistory', a.financingHistory);
  set('costs', 'financingBeforeHistory', a.financingBeforeHistory);
  const models = fillModelOverrides(a);
  if (models.costs) Object.assign((o.costs ??= {}), models.costs);
  if (models.fill) Object.assign((o.fill ??= {}), models.fill);
  Object.assign(o, riskFlagOverrides(a));
  return o;
}

/** The account and run flags a simulator command may take beside the sim flags. */
export interface RunFlagArgs extends SimFlagArgs {
  balance?: string | number;
  currency?: string;
  marginRate?: string | number;
  hedging?: boolean;
  fifo?: boolean;
  portfolioNetting?: string;
  instrument?: string;
  granularity?: string;
  from?: string;
  to?: string;
  runsDir?: string;
  reportTimezone?: string;
}

/**
 * Every flag a backtest or a sweep was given, as a configuration fragment (only the flags given):
 * account, then the data, fill and cost flags (`simFlagOverrides`), then the run. A
 * `--financing-history` folder is the working folder's; given alone (empty), it is left to the
 * caller, which knows the run's catalog.
 */
export function runFlagOverrides(a: RunFlagArgs): Fragment {
  const o: Fragment = {};
  const set = (section: string, key: string, v: string | number | boolean | undefined): void => {
    if (v !== undefined) (o[section] ??= {})[key] = v;
  };
  set('account', 'initialBalance', a.balance);
  set('account', 'currency', a.currency);
  set('account', 'marginRate', a.marginRate);
  set('account', 'hedging', a.hedging);
  set('account', 'fifo', a.fifo);
  set('account', 'portfolioNetting', a.portfolioNetting);
  for (const [section, values] of Object.entries(
    simFlagOverrides({
      ...a,
      ...(a.financingHistory ? { financingHistory: resolve(a.financingHistory) } : {}),
    }),
  ))
    Object.assign((o[section] ??= {}), values);
  set('run', 'instrument', a.instrument);
  set('run', 'granularity', a.granularity);
  set('run', 'from', a.from);
  set('run', 'to', a.to);
  set('run', 'runsDir', a.runsDir);
  set('report', 'timeZone', a.reportTimezone);
  return o;
}

/** How `--data` is read (format, clock, side), as the library's `{ file }` data input takes it. */
export function dataFileInput(
  a: SimFlagArgs,
): { file: string; format?: string; timezone?: string; side?: 'bid' | 'ask' | 'mid' } | undefined {
  if (a.data === undefined) return undefined;
  return {
    file: a.data,
    ...(a.format !== undefined ? { format: a.format } : {}),
    ...(a.timezone !== undefined ? { timezone: a.timezone } : {}),
    ...(a.side !== undefined ? { side: a.side as 'bid' | 'ask' | 'mid' } : {}),
  };
}
