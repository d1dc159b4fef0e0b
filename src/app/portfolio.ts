// Portfolios (docs/portfolios.md): several strategies on one account. This file reads a portfolio
// (a --portfolio file, or strategy files given on the command line) and loads its members; the
// run itself is runBacktest's, with the engine/portfolio-host.ts in place of one engine.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isReservedClientID } from '../domain/intents.ts';
import type { RiskLimits } from '../engine/risk.ts';
import type { ParamValue, Params, Strategy, Subscriptions } from '../strategy/api.ts';
import { subscriptionsOf } from '../engine/engine.ts';
import { ConfigError, RISK_KEYS, type BacktestConfig } from './config.ts';
import { applyParams, loadStrategy, type LoadedStrategy } from './load-strategy.ts';
import { runParams, type RunGiven } from './run-choices.ts';

/** One entry of a portfolio: a strategy module, its name in the portfolio, its params and its own limits. */
export interface PortfolioEntry {
  readonly module: string;
  readonly name?: string;
  /** Params over the module's defaults (as --param gives them: values or `name=value` strings). */
  readonly params?: Readonly<Record<string, ParamValue>> | readonly string[];
  /** Its own risk limits (the keys of the config's `risk`), checked on its own book, inside the account's. */
  readonly risk?: RiskLimits;
}

/** A loaded member: the strategy, its name and params, and its own limits. */
export interface LoadedMember extends LoadedStrategy {
  readonly risk?: RiskLimits;
}

/** A portfolio loaded: what runBacktest runs (its `members`), as one LoadedStrategy whose subscriptions are all of theirs. */
export interface LoadedPortfolio extends LoadedStrategy {
  readonly members: readonly LoadedMember[];
  /** A sweep of one member inside the portfolio (optimize/walkforward --portfolio --member). */
  readonly sweep?: PortfolioSweep;
}

/**
 * `optimize`/`walkforward --portfolio file --member <name>`: the member whose params a trial sets
 * (every other member keeps its params from the file), and whose figures the objective reads:
 * the member's own (summary.strategies.<name>) or the account's (`--objective-of account`).
 */
export interface PortfolioSweep {
  readonly member: string;
  readonly of: 'member' | 'account';
}

/** A member as plain data (structured clone: what a sweep's worker threads are given to load the portfolio). */
export interface MemberSpec {
  readonly module: string;
  readonly name: string;
  readonly params: Params;
  readonly risk?: RiskLimits;
}

/**
 * A member sweep's portfolio as recorded (sweep.json's `portfolio`, a queue's manifest: cli/optimize.ts
 * portfolioKey): the portfolio file, the swept member, whose figures the objective reads, and every
 * member with the hash of its module's code. Its canonical hash is the sweep's strategy hash.
 */
export type SweptPortfolio = {
  readonly file: string;
  readonly member: string;
  readonly objectiveOf: PortfolioSweep['of'];
  readonly members: readonly (MemberSpec & { readonly moduleHash: string })[];
};

const ENTRY_KEYS = new Set(['module', 'name', 'params', 'risk']);

/**
 * Reads a portfolio file: `{ "strategies": [ { "module": "…", "name": "…", "params": {…}, "risk": {…} }, … ] }`
 * (or the list alone). Modules are paths from the file's folder. Errors name the file, the entry and the field.
 */
export function readPortfolioFile(path: string): PortfolioEntry[] {
  const file = resolve(path);
  if (!existsSync(file))
    throw new ConfigError(path, '(file)', 'not found: give the path of a portfolio JSON file (--portfolio)');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(path, '(file)', `is not JSON: ${(e as Error).message}`);
  }
  const list = Array.isArray(raw) ? raw : (raw as { strategies?: unknown } | null)?.strategies;
  if (!Array.isArray(list) || list.length === 0)
    throw new ConfigError(
      path,
      'strategies',
      'must be a non-empty list of entries like { "module": "strategies/sma-cross.ts", "name": "sma-fast", "params": { "fast": 5 } }',
    );
  const dir = dirname(file);
  return list.map((e: unknown, i): PortfolioEntry => {
    const at = `strategies[${i}]`;
    if (typeof e !== 'object' || e === null || Array.isArray(e))
      throw new ConfigError(
        path,
        at,
        'must be an object with "module" (and optionally "name", "params", "risk")',
      );
    const o = e as Record<string, unknown>;
    for (const k of Object.keys(o))
      if (!ENTRY_KEYS.has(k))
        throw new ConfigError(
          path,
          `${at}.${k}`,
          'is not a portfolio entry field (use module, name, params, risk)',
        );
    if (typeof o.module !== 'string' || o.module === '')
      throw new ConfigError(
        path,
        `${at}.module`,
        'must be the path of a strategy module, e.g. "strategies/sma-cross.ts"',
      );
    if (o.name !== undefined && (typeof o.name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(o.name)))
      throw new ConfigError(
        path,
        `${at}.name`,
        'must be a name of letters, digits, "_", "." or "-", e.g. "sma-fast"',
      );
    if (
      o.params !== undefined &&
      (typeof o.params !== 'object' ||
        o.params === null ||
        (!Array.isArray(o.params) &&
          Object.values(o.params).some((v) => !['string', 'number', 'boolean'].includes(typeof v))))
    )
      throw new ConfigError(
        path,
        `${at}.params`,
        'must be an object of param values, e.g. { "fast": 5, "longOnly": true }',
      );
    let risk: RiskLimits | undefined;
    if (o.risk !== undefined) {
      if (typeof o.risk !== 'object' || o.risk === null || Array.isArray(o.risk))
        throw new ConfigError(path, `${at}.risk`, `must be an object of limits (${RISK_KEYS.join(', ')})`);
      for (const [k, v] of Object.entries(o.risk)) {
        if (!RISK_KEYS.includes(k))
          throw new ConfigError(path, `${at}.risk.${k}`, `is not a risk limit (use ${RISK_KEYS.join(', ')})`);
        if (typeof v !== 'number' || !(v >= 0))
          throw new ConfigError(path, `${at}.risk.${k}`, 'must be a number >= 0 (0 turns the limit off)');
      }
      risk = o.risk as RiskLimits;
    }
    const module = resolve(dir, o.module);
    if (!existsSync(module))
      throw new ConfigError(
        path,
        `${at}.module`,
        `'${o.module}' not found (paths are from the portfolio file's folder, ${dir})`,
      );
    return {
      module,
      ...(o.name !== undefined ? { name: o.name as string } : {}),
      ...(o.params !== undefined ? { params: o.params as PortfolioEntry['params'] } : {}),
      ...(risk !== undefined ? { risk } : {}),
    };
  });
}

/**
 * Loads a portfolio's members: each module, its params (the config's instrument and granularity as
 * for one strategy, then the entry's), its name (the entry's, else the strategy's; two members of
 * one name are an error that says to name them). `label` names the portfolio in errors.
 */
export async function loadPortfolio(
  entries: readonly PortfolioEntry[],
  config: BacktestConfig,
  given: RunGiven,
  label: string,
): Promise<LoadedPortfolio> {
  const members: LoadedMember[] = [];
  const names = new Map<string, number>();
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const probe = await loadStrategy(e.module, []);
    const overrides = Array.isArray(e.params)
      ? (e.params as readonly string[]).map(String)
      : Object.entries((e.params ?? {}) as Record<string, ParamValue>).map(([k, v]) => `${k}=${String(v)}`);
    const { implicit } = runParams(probe.strategy.params, overrides, config, given);
    const params = applyParams(e.module, probe.strategy.params, [...implicit, ...overrides]);
    const name = e.name ?? probe.name;
    const before = names.get(name);
    if (before !== undefined)
      throw new ConfigError(
        label,
        `strategies[${i}].name`,
        `'${name}' is the name of strategies[${before}] too: give each entry its own "name" (the same module twice needs two names)`,
      );
    if (isReservedClientID(`${name}-`))
      throw new ConfigError(
        label,
        `strategies[${i}].name`,
        `'${name}' is reserved for the runner's own orders: choose another name`,
      );
    names.set(name, i);
    members.push({ ...probe, name, params, ...(e.risk ? { risk: e.risk } : {}) });
  }
  return portfolioOf(members, label);
}

/** The portfolio of loaded members: one LoadedStrategy whose subscriptions are all of theirs. */
function portfolioOf(members: LoadedMember[], label: string): LoadedPortfolio {
  const subs = members.map((m) => subscriptionsOf(m.strategy, m.params, m.name));
  const union = (k: keyof Omit<Subscriptions, 'timers'>): string[] => [
    ...new Set(subs.flatMap((s) => (s[k] ?? []) as readonly string[])),
  ];
  const all: Subscriptions = {
    candles: union('candles'),
    ticks: union('ticks'),
    signals: union('signals'),
    calendar: union('calendar'),
    spreads: union('spreads'),
    cot: union('cot'),
  };
  // The longest history any member asks for: a live run warms the indicators up with it.
  const histories = members.map((m) => m.strategy.history).filter((h): h is number => h !== undefined);
  const strategy: Strategy<Params, unknown> = {
    name: 'portfolio',
    params: {},
    subscribe: all,
    ...(histories.length > 0 ? { history: Math.max(...histories) } : {}),
  };
  return {
    file: label,
    name: members.map((m) => m.name).join('+'),
    strategy,
    params: {},
    members,
  };
}

/** A loaded portfolio's members as plain data, their params as they are (for a sweep's worker threads). */
export function memberSpecs(p: LoadedPortfolio): MemberSpec[] {
  return p.members.map((m) => ({
    module: m.file,
    name: m.name,
    params: m.params,
    ...(m.risk ? { risk: m.risk } : {}),
  }));
}

/** Loads the members memberSpecs gave, each with exactly those params (a sweep's worker thread). */
export async function loadMemberSpecs(specs: readonly MemberSpec[], label: string): Promise<LoadedPortfolio> {
  const members: LoadedMember[] = [];
  for (const m of specs) {
    const probe = await loadStrategy(m.module, []);
    members.push({ ...probe, name: m.name, params: m.params, ...(m.risk ? { risk: m.risk } : {}) });
  }
  return portfolioOf(members, label);
}

/** The portfolio with one member's params replaced (a trial of a member sweep); the others keep theirs. */
export function withMemberParams(p: LoadedPortfolio, member: string, params: Params): LoadedPortfolio {
  return { ...p, members: p.members.map((m) => (m.name === member ? { ...m, params } : m)) };
}

/** Whether a loaded strategy is a portfolio. */
export function isPortfolio(l: LoadedStrategy): l is LoadedPortfolio {
  return Array.isArray((l as { members?: unknown }).members);
}
