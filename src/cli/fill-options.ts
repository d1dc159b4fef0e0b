import type { Options } from 'yargs';

/**
 * The simulator's swappable fill models as flags: one definition for every command that runs the
 * simulator (`fxflow backtest`, `fxflow run --broker sim / --shadow`, `fxflow sandbox`), so they
 * read and check the same everywhere. The values are the configuration's (fill.slippage,
 * fill.latency, costs.commission / costs.commissionPerMillion), checked by the models' own parsers.
 */
export const FILL_MODEL_OPTIONS = {
  commission: {
    type: 'string',
    describe:
      "Commission: per million units in the account currency (costs.commissionPerMillion), or oanda-core for OANDA's core pricing schedule (costs.commission)",
  },
  slippage: {
    type: 'string',
    describe:
      'Slippage of market orders and stops (fill.slippage): none (default, as v20), fixed:<pips>, spread:<fraction of the spread>',
  },
  latency: {
    type: 'string',
    describe:
      'Delay from a decision to its order reaching the server (fill.latency): none (default), fixed:<ms>, file:<path of recorded delays in ms>',
  },
} as const satisfies Record<string, Options>;

/** The fill model flags a command was given. */
export interface FillModelArgs {
  commission?: string;
  slippage?: string;
  latency?: string;
}

/** The flags given, as a configuration fragment to merge over the config file (`loadConfig`'s overrides). */
export function fillModelOverrides(a: FillModelArgs): {
  fill?: { slippage?: string; latency?: string };
  costs?: { commission: string; commissionPerMillion?: string };
} {
  const out: ReturnType<typeof fillModelOverrides> = {};
  if (a.commission === 'oanda-core') out.costs = { commission: 'oanda-core' };
  else if (a.commission !== undefined)
    out.costs = { commission: 'per-million', commissionPerMillion: a.commission };
  if (a.slippage !== undefined || a.latency !== undefined) {
    out.fill = {
      ...(a.slippage !== undefined ? { slippage: a.slippage } : {}),
      ...(a.latency !== undefined ? { latency: a.latency } : {}),
    };
  }
  return out;
}
