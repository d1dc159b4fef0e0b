import type { Params } from '../strategy/api.ts';
import { readJsonFile, type BacktestConfig } from './config.ts';

/**
 * Where a run's instrument and granularity come from. A strategy that declares `instrument` and
 * `granularity` params runs on its own values unless the user names others: `--param`, a flag
 * (`--instrument`, `--granularity`) or a config file's `run` section. config/default.json's
 * `run.instrument` and `run.granularity` are for strategies that declare neither. Every mode
 * (backtest, optimize, walkforward, run) decides the same way, so a strategy's file backtests
 * and trades the same series.
 */

/** Who gave `run.instrument` / `run.granularity`, when someone did (a label like `--granularity` or `config file x.json`). */
export interface RunGiven {
  readonly instrument?: string;
  readonly granularity?: string;
}

type Json = ReturnType<typeof readJsonFile>;

function runField(j: Json | undefined, key: string): boolean {
  if (j === null || typeof j !== 'object' || Array.isArray(j)) return false;
  const run = (j as Record<string, Json>).run;
  return (
    run !== null &&
    typeof run === 'object' &&
    !Array.isArray(run) &&
    (run as Record<string, Json>)[key] !== undefined
  );
}

/** Who gave the run's instrument and granularity: the flags (`overrides`, labelled `flagLabel`) over a config file. */
export function runGiven(
  configFile: string | undefined,
  overrides: unknown,
  flags: { instrument: string; granularity: string } = {
    instrument: '--instrument',
    granularity: '--granularity',
  },
): RunGiven {
  const file = configFile !== undefined ? readJsonFile(configFile) : undefined;
  const out: { instrument?: string; granularity?: string } = {};
  for (const key of ['instrument', 'granularity'] as const) {
    if (runField(overrides as Json, key)) out[key] = flags[key];
    else if (runField(file, key)) out[key] = `config file ${configFile}`;
  }
  return out;
}

/** Where each of the strategy's run params came from, as the report says it. */
export type ParamSources = Readonly<Record<string, string>>;

/**
 * The `instrument=` / `granularity=` params to pass before the user's own (`overrides`): the run's
 * value where the user gave one, nothing (the strategy's default) where not. And where each came from.
 */
export function runParams(
  declared: Params,
  overrides: readonly string[],
  config: BacktestConfig,
  given: RunGiven,
): { implicit: string[]; sources: ParamSources } {
  const implicit: string[] = [];
  const sources: Record<string, string> = {};
  for (const key of ['instrument', 'granularity'] as const) {
    if (!(key in declared)) continue;
    if (overrides.some((p) => p.startsWith(`${key}=`))) sources[key] = '--param';
    else if (given[key] !== undefined) {
      implicit.push(`${key}=${config.run[key]}`);
      sources[key] = given[key]!;
    } else sources[key] = "the strategy's default";
  }
  return { implicit, sources };
}
