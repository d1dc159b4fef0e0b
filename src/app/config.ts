import { readFileSync } from 'node:fs';
import { IANAZone } from 'luxon';
import { dirname, isAbsolute, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../domain/package-root.ts';
import { isGranularity, type Granularity } from '../domain/granularity.ts';
import { DRIFT_KEYS, driftOf, type DriftTolerances } from '../domain/drift-tolerances.ts';
import { parseUserTime, timeProblem } from '../domain/time.ts';
import { OANDA_CORE_PER_MILLION } from '../adapters/sim/commission.ts';
import { catalogFromEnv } from '../adapters/catalog/location.ts';
import { parseFillModels, type FillModelNames } from '../adapters/sim/fill-models.ts';
import { DEFAULT_RISK_LIMITS, type RiskLimits } from '../engine/risk.ts';

/** The repository root (where package.json, config/ and data/ live). */
export const ROOT = PACKAGE_ROOT;

/** Backtest settings: config/default.json, then a user file (--config), then flags. */
export interface BacktestConfig {
  readonly account: {
    readonly currency: string;
    readonly initialBalance: string;
    readonly marginRate: string;
    readonly hedging: boolean;
    /** FIFO account (OANDA's US division, NFA 2-43b): no hedging, oldest same-size trade closes first, unique sizes for trades with exits. */
    readonly fifo: boolean;
    /**
     * How a portfolio backtest's simulated netting account nets (docs/portfolios.md): "strategy" (the
     * default) nets each strategy's orders against its own trades only, as if each had a sub-account;
     * "account" nets across strategies as a real netting account does (an order of one strategy
     * reduces the account's oldest opposite trade, whoever opened it). Ignored for one strategy and
     * on hedging accounts.
     */
    readonly portfolioNetting: 'strategy' | 'account';
  };
  readonly data: {
    readonly catalog: string;
    /** native: the data's own bid/ask; mid: both sides at mid (zero spread); fixed: mid ± spreadPips/2; hourly: mid ± spreadPipsByHour[UTC hour]/2; labs: mid ± the recorded OANDA labs average spread of the interval/2 (docs/labs.md). */
    readonly spread: 'native' | 'mid' | 'fixed' | 'hourly' | 'labs';
    /** Spread in pips for 'fixed', and for one-sided (mid- or bid-only) data under 'native'. */
    readonly spreadPips: number;
    /** 24 spreads in pips, by UTC hour, for 'hourly' (and one-sided data when given). */
    readonly spreadPipsByHour?: readonly number[];
  };
  readonly fill: {
    /** Market orders fill at the first price after the decision: the next candle's open or the next tick. */
    readonly marketOrders: 'next-price';
    /**
     * Intra-candle path: open → nearer extreme → other extreme → close (adaptive), the extreme adverse
     * to the position first (worst), or the real ticks inside each candle (exact; needs --ticks).
     */
    readonly path: 'adaptive' | 'worst' | 'exact';
    /**
     * Market hours (default true): a market order submitted while its instrument's market is closed
     * (data/instruments.json `tradingHours`: the FX week, metals' and CFDs' daily breaks) is cancelled
     * MARKET_HALTED, as v20 does. false for data that trades around the clock (24/7 or synthetic).
     */
    readonly marketHours: boolean;
    /** Slippage of the fills that can slip (market orders, stops): "none" (v20), "fixed:<pips>", "spread:<fraction>" (src/adapters/sim/slippage.ts). */
    readonly slippage: string;
    /** Delay from a decision to its order reaching the server: "none", "fixed:<ms>", "file:<path of recorded ms>" (src/adapters/sim/latency.ts). */
    readonly latency: string;
  };
  readonly costs: {
    readonly financing: boolean;
    /**
     * Daily financing from the rates `fxflow record --financing` recorded in this catalog folder
     * (each rollover the rates of its trading day, or the latest recorded before it), instead of
     * today's rates in data/instruments.json. Absent: today's rates.
     */
    readonly financingHistory?: string;
    /**
     * Days before an instrument's first recorded day: "error" (the default: the run is refused,
     * naming that day) or "static" (today's rates for those days).
     */
    readonly financingBeforeHistory?: 'error' | 'static';
    readonly commissionPerMillion: string;
    /** "per-million" (commissionPerMillion on every fill) or "oanda-core" (OANDA's core pricing schedule per instrument group, src/adapters/sim/commission.ts). */
    readonly commission: 'per-million' | 'oanda-core';
  };
  /**
   * The risk gate's limits (src/engine/risk.ts), the same in a backtest, a sweep's trials, a
   * walk-forward and `fxflow run`: each absent or 0 is not checked. config/default.json sets the
   * default orders-per-minute limit and intents-per-event cap.
   */
  readonly risk: RiskLimits;
  readonly run: {
    readonly instrument: string;
    readonly granularity: Granularity;
    readonly from: string;
    readonly to: string;
    readonly runsDir: string;
  };
  /**
   * How the reports say times: `timeZone`, an IANA zone ("America/New_York"), for every human time
   * on report.txt and report.html (absent: UTC). The machine files (summary.json, trades.csv,
   * equity.csv) stay in UTC.
   */
  readonly report?: { readonly timeZone: string };
  /** `fxflow run --shadow`: the drift guard's tolerances (src/runner/recording/drift.ts; `--max-drift` over them). Backtests ignore it. */
  readonly drift?: DriftTolerances;
}

/** A configuration problem: names the file and the field, and says how to fix it. */
export class ConfigError extends Error {
  readonly code = 'CONFIG' as const;
  constructor(
    readonly source: string,
    readonly field: string,
    message: string,
  ) {
    super(`${source}: ${field} ${message}`);
    this.name = 'ConfigError';
  }
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Reads a JSON file, with errors that name the file and the line of a syntax error. */
export function readJsonFile(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      path,
      '(file)',
      code === 'ENOENT' ? 'does not exist: check the path' : `cannot be read (${code ?? String(e)})`,
    );
  }
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    const m = /position (\d+)/.exec(String((e as Error).message));
    const line = m ? text.slice(0, Number(m[1])).split('\n').length : undefined;
    throw new ConfigError(
      path,
      '(file)',
      `is not valid JSON${line ? ` (line ${line})` : ''}: ${(e as Error).message}`,
    );
  }
}

/** Deep-merges `over` into `base` (objects merge, everything else replaces). */
export function mergeJson(base: Json, over: Json): Json {
  if (!isObj(base) || !isObj(over)) return over;
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeJson(base[k]!, v) : v;
  return out;
}

const DECIMAL = /^\d+(\.\d+)?$/;

function closest(word: string, options: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const o of options) {
    const d = editDistance(word.toLowerCase(), o.toLowerCase());
    if (d < bestScore) {
      bestScore = d;
      best = o;
    }
  }
  return bestScore <= Math.max(2, word.length / 3) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/** The risk section's keys (a portfolio file's `risk` of an entry takes the same). */
export const RISK_KEYS: readonly string[] = [
  'maxUnits',
  'maxOpenTrades',
  'maxOrdersPerMinute',
  'maxDailyLoss',
  'maxSpreadPips',
  'maxIntentsPerEvent',
];

const SHAPE: Record<string, readonly string[]> = {
  account: ['currency', 'initialBalance', 'marginRate', 'hedging', 'fifo', 'portfolioNetting'],
  data: ['catalog', 'spread', 'spreadPips', 'spreadPipsByHour'],
  fill: ['marketOrders', 'path', 'marketHours', 'slippage', 'latency'],
  costs: ['financing', 'commissionPerMillion', 'commission', 'financingHistory', 'financingBeforeHistory'],
  risk: RISK_KEYS,
  run: ['instrument', 'granularity', 'from', 'to', 'runsDir'],
  drift: DRIFT_KEYS,
  report: ['timeZone'],
};

/**
 * Validates a merged configuration. Every error names the field and the source (the file it
 * came from, or the flag), says what was found and what is expected.
 */
export function validateConfig(raw: Json, source: string): BacktestConfig {
  if (!isObj(raw)) throw new ConfigError(source, '(root)', 'must be a JSON object like {"account": {...}}');
  for (const [section, value] of Object.entries(raw)) {
    const fields = SHAPE[section];
    if (!fields) {
      const hint = closest(section, Object.keys(SHAPE));
      throw new ConfigError(
        source,
        section,
        `is not a known section${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${Object.keys(SHAPE).join(', ')}`,
      );
    }
    if (!isObj(value)) throw new ConfigError(source, section, 'must be an object');
    for (const k of Object.keys(value)) {
      if (!fields.includes(k)) {
        const hint = closest(k, fields);
        throw new ConfigError(
          source,
          `${section}.${k}`,
          `is not a known field${hint ? ` (did you mean "${section}.${hint}"?)` : ''}; known: ${fields.join(', ')}`,
        );
      }
    }
  }
  const get = (path: string): Json | undefined => {
    const [a, b] = path.split('.') as [string, string];
    const sec = raw[a];
    return isObj(sec) ? sec[b] : undefined;
  };
  const str = (path: string, test: (s: string) => boolean, expected: string): string => {
    let v = get(path);
    if (typeof v === 'number') v = String(v);
    if (typeof v !== 'string' || !test(v))
      throw new ConfigError(source, path, `must be ${expected} (got ${JSON.stringify(v)})`);
    return v;
  };
  const bool = (path: string): boolean => {
    const v = get(path);
    if (typeof v !== 'boolean')
      throw new ConfigError(source, path, `must be true or false (got ${JSON.stringify(v)})`);
    return v;
  };
  const num = (path: string, test: (n: number) => boolean, expected: string): number => {
    const v = get(path);
    if (typeof v !== 'number' || !test(v))
      throw new ConfigError(source, path, `must be ${expected} (got ${JSON.stringify(v)})`);
    return v;
  };
  const oneOf = <T extends string>(path: string, options: readonly T[]): T => {
    const v = get(path);
    if (typeof v !== 'string' || !options.includes(v as T))
      throw new ConfigError(
        source,
        path,
        `must be one of ${options.map((o) => `"${o}"`).join(', ')} (got ${JSON.stringify(v)})`,
      );
    return v as T;
  };
  const byHour = (path: string): number[] => {
    const v = get(path);
    if (
      !Array.isArray(v) ||
      v.length !== 24 ||
      !v.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= MAX_SPREAD_PIPS)
    ) {
      throw new ConfigError(
        source,
        path,
        `must be 24 numbers of pips in [0, ${MAX_SPREAD_PIPS}], one per UTC hour from 00 to 23 (got ${JSON.stringify(v)})`,
      );
    }
    return v as number[];
  };
  const model = (path: string, parse: (v: string) => string): string => {
    const v = get(path);
    if (v === undefined) return 'none';
    if (typeof v !== 'string')
      throw new ConfigError(source, path, `must be a string like "none" (got ${JSON.stringify(v)})`);
    try {
      parse(v);
    } catch (e) {
      throw new ConfigError(source, path, `is wrong: ${(e as Error).message}`);
    }
    return v;
  };
  const date = (path: string): string => {
    const v = str(path, (s) => s.length > 0, 'a date like "2024-01-01" or an RFC 3339 time');
    const why = dateProblem(v);
    if (why !== undefined) throw new ConfigError(source, path, `${why} (got ${JSON.stringify(v)})`);
    return v;
  };

  // Each limit a number >= 0 (0: off); a config without the section has the defaults.
  const riskLimits = (): RiskLimits => {
    if (raw.risk === undefined) return { ...DEFAULT_RISK_LIMITS };
    const out: Record<string, number> = {};
    for (const k of SHAPE.risk!) {
      const v = get(`risk.${k}`);
      if (v === undefined || v === null) continue;
      const whole = k === 'maxOpenTrades' || k === 'maxOrdersPerMinute' || k === 'maxIntentsPerEvent';
      out[k] = num(
        `risk.${k}`,
        (n) => Number.isFinite(n) && n >= 0 && (!whole || Number.isInteger(n)),
        `${whole ? 'a whole number' : 'a number'} >= 0 (0 turns the limit off)`,
      );
    }
    return out as RiskLimits;
  };
  const marginRate = str(
    'account.marginRate',
    (s) => DECIMAL.test(s) && Number(s) > 0 && Number(s) <= 1,
    'a decimal string in (0, 1], e.g. "0.02" for 50:1 leverage',
  );
  const drift = raw.drift;
  const cfg: BacktestConfig = {
    ...(isObj(drift) ? { drift: driftOf(drift, `${source}: drift`, '.') } : {}),
    account: {
      currency: str(
        'account.currency',
        (s) => /^[A-Z]{3}$/.test(s),
        'a three-letter currency code like "USD"',
      ),
      initialBalance: str(
        'account.initialBalance',
        (s) => DECIMAL.test(s) && Number(s) > 0 && Number(s) <= MAX_BALANCE,
        `a decimal string in (0, ${MAX_BALANCE.toLocaleString('en-US')}], like "100000"`,
      ),
      marginRate,
      hedging: bool('account.hedging'),
      fifo: bool('account.fifo'),
      portfolioNetting:
        get('account.portfolioNetting') === undefined
          ? 'strategy'
          : oneOf('account.portfolioNetting', ['strategy', 'account'] as const),
    },
    data: {
      catalog: str('data.catalog', (s) => s.length > 0, 'a folder path'),
      spread: oneOf('data.spread', ['native', 'mid', 'fixed', 'hourly', 'labs'] as const),
      spreadPips: num(
        'data.spreadPips',
        (n) => Number.isFinite(n) && n >= 0 && n <= MAX_SPREAD_PIPS,
        `a number of pips in [0, ${MAX_SPREAD_PIPS}]`,
      ),
      ...(get('data.spreadPipsByHour') !== undefined
        ? { spreadPipsByHour: byHour('data.spreadPipsByHour') }
        : {}),
    },
    fill: {
      marketOrders: oneOf('fill.marketOrders', ['next-price'] as const),
      path: oneOf('fill.path', ['adaptive', 'worst', 'exact'] as const),
      marketHours: get('fill.marketHours') === undefined ? true : bool('fill.marketHours'),
      // The swappable fill models (src/adapters/sim/): checked by the models' own parsers, whose
      // messages say what is expected; absent means v20's own behaviour.
      slippage: model('fill.slippage', (v) => parseFillModels({ slippage: v }, 'USD').slippage.name),
      latency: model('fill.latency', (v) => parseFillModels({ latency: v }, 'USD').latency.name),
    },
    costs: {
      financing: bool('costs.financing'),
      commissionPerMillion: str(
        'costs.commissionPerMillion',
        (s) => DECIMAL.test(s) && Number(s) <= MAX_COMMISSION,
        `a decimal string in [0, ${MAX_COMMISSION}] (per million units), e.g. "0" or "50"`,
      ),
      commission:
        get('costs.commission') === undefined
          ? 'per-million'
          : oneOf('costs.commission', ['per-million', 'oanda-core'] as const),
      ...(get('costs.financingHistory') !== undefined && get('costs.financingHistory') !== null
        ? {
            financingHistory: str(
              'costs.financingHistory',
              (x) => x.length > 0,
              'the catalog folder that fxflow record --financing recorded into, e.g. "data/catalog"',
            ),
          }
        : {}),
      ...(get('costs.financingBeforeHistory') !== undefined
        ? { financingBeforeHistory: oneOf('costs.financingBeforeHistory', ['error', 'static'] as const) }
        : {}),
    },
    risk: riskLimits(),
    run: {
      instrument: str(
        'run.instrument',
        (s) => /^[A-Z0-9]+_[A-Z0-9]+$/.test(s),
        'an instrument like "EUR_USD"',
      ),
      granularity: str(
        'run.granularity',
        isGranularity,
        'a v20 granularity (S5…M30, H1…H12, D, W, M)',
      ) as Granularity,
      from: date('run.from'),
      to: date('run.to'),
      runsDir: str('run.runsDir', (s) => s.length > 0, 'a folder path'),
    },
    // Only when given: a run folder's config.json stays as it was for the default (UTC).
    ...(get('report.timeZone') !== undefined
      ? {
          report: {
            timeZone: str(
              'report.timeZone',
              (z) => IANAZone.isValidZone(z),
              'an IANA time zone like "America/New_York", "Europe/London" or "UTC"',
            ),
          },
        }
      : {}),
  };
  if (cfg.data.spread === 'hourly' && !cfg.data.spreadPipsByHour) {
    throw new ConfigError(
      source,
      'data.spreadPipsByHour',
      'is required with data.spread "hourly": give 24 spreads in pips, one per UTC hour',
    );
  }
  if (cfg.costs.commission === 'oanda-core' && OANDA_CORE_PER_MILLION[cfg.account.currency] === undefined) {
    throw new ConfigError(
      source,
      'costs.commission',
      `"oanda-core" has no schedule for an account in ${cfg.account.currency}; OANDA lists ${Object.keys(OANDA_CORE_PER_MILLION).join(', ')}: use "per-million" with costs.commissionPerMillion`,
    );
  }
  if (cfg.costs.financingBeforeHistory !== undefined && cfg.costs.financingHistory === undefined) {
    throw new ConfigError(
      source,
      'costs.financingBeforeHistory',
      'says what to do before the first recorded financing day, so it needs costs.financingHistory (--financing-history <catalog>)',
    );
  }
  if (cfg.costs.financingHistory !== undefined && !cfg.costs.financing) {
    throw new ConfigError(
      source,
      'costs.financingHistory',
      'gives the rates of daily financing, which costs.financing false (--no-financing) turns off: leave one of them out',
    );
  }
  if (cfg.account.fifo && cfg.account.hedging) {
    throw new ConfigError(
      source,
      'account.fifo',
      'cannot be true together with account.hedging: FIFO accounts (OANDA US) do not allow hedging; set one of them to false',
    );
  }
  const from = parseDate(cfg.run.from);
  const to = parseDate(cfg.run.to);
  if (!(to > from))
    throw new ConfigError(source, 'run.to', `(${cfg.run.to}) must be after run.from (${cfg.run.from})`);
  return cfg;
}

/** The simulator's fill models as the configuration names them (parsed by `parseFillModels`). */
export function fillModelNames(c: BacktestConfig): FillModelNames {
  return {
    slippage: c.fill.slippage,
    latency: c.fill.latency,
    commission: c.costs.commission === 'oanda-core' ? 'oanda-core' : c.costs.commissionPerMillion,
    marketHours: c.fill.marketHours,
  };
}

/** The largest spread a config may give, in pips (a spread wider than the price gives negative bids). */
export const MAX_SPREAD_PIPS = 1000;
/** The largest initial balance, in the account currency. */
export const MAX_BALANCE = 1e12;
/** The largest commission per million units, in the account currency. */
export const MAX_COMMISSION = 100_000;

/**
 * Why a run date is not a real date, or undefined when it is: the time module's one rule for the
 * times users write (`timeProblem`: a date, an RFC 3339 time, seconds optional, every field in its
 * range, years 1900 to 2200).
 */
export function dateProblem(s: string): string | undefined {
  return timeProblem(s);
}

/** Parses "2024-01-01" (UTC midnight), any RFC 3339 time, or one without its seconds (the time module's parseUserTime). */
export function parseDate(s: string): number {
  return parseUserTime(s);
}

/** Loads config/default.json, merges the user's file and the flag overrides, and validates the result. */
export function loadConfig(
  userFile?: string,
  overrides: Json = {},
  overridesSource = 'command-line flags',
): BacktestConfig {
  const defaultsPath = resolve(ROOT, 'config/default.json');
  let merged = readJsonFile(defaultsPath);
  let source = defaultsPath;
  if (userFile) {
    const user = readJsonFile(userFile);
    // A relative data.catalog in a config file is the config file's folder's, wherever the command runs.
    const data = isObj(user) ? user.data : undefined;
    if (isObj(data) && typeof data.catalog === 'string' && data.catalog !== '' && !isAbsolute(data.catalog))
      data.catalog = resolve(dirname(resolve(userFile)), data.catalog);
    // Validate the user's file on its own first, so errors name it rather than the merge.
    merged = mergeJson(merged, user);
    source = userFile;
    validateConfig(merged, source);
  }
  // FXFLOW_CATALOG over the file's catalog; the flags (--catalog) over both.
  const envCatalog = catalogFromEnv();
  if (envCatalog !== undefined) merged = mergeJson(merged, { data: { catalog: envCatalog } });
  if (isObj(overrides) && Object.keys(overrides).length > 0) {
    merged = mergeJson(merged, overrides);
    source = overridesSource;
    try {
      return validateConfig(merged, source);
    } catch (e) {
      // A value a flag gave: the message names the flag too.
      if (!(e instanceof ConfigError)) throw e;
      const [section, key] = e.field.split('.') as [string, string | undefined];
      const given = isObj(overrides[section]) && key !== undefined && key in (overrides[section] as Obj);
      const flag = overridesSource === 'command-line flags' ? FLAGS[e.field] : undefined;
      if (!given || flag === undefined) throw e;
      throw new ConfigError(source, `${flag} (${e.field})`, e.message.slice(`${source}: ${e.field} `.length));
    }
  }
  return validateConfig(merged, source);
}

/** The backtest flag of each config field. */
const FLAGS: Readonly<Record<string, string>> = {
  'account.initialBalance': '--balance',
  'account.currency': '--currency',
  'account.marginRate': '--margin-rate',
  'account.hedging': '--hedging',
  'account.fifo': '--fifo',
  'account.portfolioNetting': '--portfolio-netting',
  'data.spread': '--spread',
  'data.spreadPips': '--spread-pips',
  'costs.financing': '--financing',
  'costs.financingHistory': '--financing-history',
  'costs.financingBeforeHistory': '--financing-before-history',
  'costs.commissionPerMillion': '--commission',
  'fill.path': '--path',
  'risk.maxUnits': '--max-units',
  'risk.maxOpenTrades': '--max-open-trades',
  'risk.maxOrdersPerMinute': '--max-orders-per-minute',
  'risk.maxDailyLoss': '--max-daily-loss',
  'risk.maxSpreadPips': '--max-spread-pips',
  'risk.maxIntentsPerEvent': '--max-intents-per-event',
  'run.instrument': '--instrument',
  'run.granularity': '--granularity',
  'run.from': '--from',
  'run.to': '--to',
  'run.runsDir': '--runs-dir',
  'data.catalog': '--catalog',
  'report.timeZone': '--report-timezone',
};
