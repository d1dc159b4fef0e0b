import { parseCommission, type CommissionModel } from './commission.ts';
import { parseLatency, type LatencyModel } from './latency.ts';
import { parseSlippage, type SlippageModel } from './slippage.ts';

/**
 * The simulator's swappable fill models by the names the configuration, the flags and the sandbox's
 * control route use: slippage `none`, `fixed:<pips>`, `spread:<fraction>`; latency `none`,
 * `fixed:<ms>`, `file:<path>`; commission a rate per million units (`"50"`) or `oanda-core`.
 * Absent means v20's own behaviour (none, none, 0; market hours on).
 */
export interface FillModelNames {
  readonly slippage?: string;
  readonly latency?: string;
  readonly commission?: string;
  /** Market orders decided while the market is closed are halted (fill.marketHours; default true). */
  readonly marketHours?: boolean;
}

/** The models, ready for a SimBroker. */
export interface FillModels {
  readonly slippage: SlippageModel;
  readonly latency: LatencyModel;
  readonly commission: CommissionModel;
  readonly marketHours: boolean;
}

/** A fill model name that does not parse: which model, and the model's own message (what is expected). */
export class FillModelError extends RangeError {
  constructor(
    readonly model: 'slippage' | 'latency' | 'commission',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FillModelError';
  }

  /** The flag and configuration field that named the model, e.g. `--slippage (fill.slippage)`. */
  get flag(): string {
    return `--${this.model} (${this.model === 'commission' ? 'costs.commission' : `fill.${this.model}`})`;
  }
}

/**
 * The one parser of fill model names, for every simulator (backtest, sweep trials, `run --broker
 * sim`, `--shadow`, replay, the sandbox): each model built fresh (a recorded latency file cycles per
 * simulator). `currency` is the account's (oanda-core's schedule depends on it). A bad name throws a
 * FillModelError; callers name their flag or field around its message.
 */
export function parseFillModels(names: FillModelNames, currency: string): FillModels {
  const parse = <T>(model: FillModelError['model'], f: () => T): T => {
    try {
      return f();
    } catch (e) {
      throw new FillModelError(model, (e as Error).message, { cause: e });
    }
  };
  return {
    slippage: parse('slippage', () => parseSlippage(names.slippage ?? 'none')),
    latency: parse('latency', () => parseLatency(names.latency ?? 'none')),
    commission: parse('commission', () => parseCommission(names.commission ?? '0', currency)),
    marketHours: names.marketHours !== false,
  };
}
