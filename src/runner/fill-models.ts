import { parseCommission, type CommissionModel } from '../adapters/sim/commission.ts';
import { parseLatency, type LatencyModel } from '../adapters/sim/latency.ts';
import { parseSlippage, type SlippageModel } from '../adapters/sim/slippage.ts';
import { RunnerError } from './errors.ts';

/** The fill models of a run's simulators, as the configuration names them. */
export interface FillModelNames {
  readonly slippage?: string;
  readonly latency?: string;
  readonly commission?: string;
  /** Market orders decided while the market is closed are halted (fill.marketHours; default true). */
  readonly marketHours?: boolean;
}

/** The fill models a simulator used, by name (SimBroker.models without the candle path: live prices are ticks). */
export interface FillModelsUsed {
  readonly slippage: string;
  readonly latency: string;
  readonly commission: string;
}

/** `fill models: slippage … · latency … · commission …`, as a backtest's report.txt names them. */
export function formatFillModels(m: FillModelsUsed): string {
  return `fill models: slippage ${m.slippage} · latency ${m.latency} · commission ${m.commission}`;
}

/**
 * The models named by `names` for a simulator of an account in `currency` (each simulator gets its
 * own: a recorded latency file cycles per simulator). A name the models refuse is a RunnerError
 * naming its flag and config field.
 */
export function simModels(names: FillModelNames | undefined, currency: string): { slippage: SlippageModel; latency: LatencyModel; commission: CommissionModel; marketHours: boolean } {
  const parse = <T>(flag: string, field: string, f: () => T): T => {
    try {
      return f();
    } catch (e) {
      throw new RunnerError('RUNNER', `${flag} (${field}): ${(e as Error).message}`, { cause: e });
    }
  };
  return {
    slippage: parse('--slippage', 'fill.slippage', () => parseSlippage(names?.slippage ?? 'none')),
    latency: parse('--latency', 'fill.latency', () => parseLatency(names?.latency ?? 'none')),
    commission: parse('--commission', 'costs.commission', () => parseCommission(names?.commission ?? '0', currency)),
    marketHours: names?.marketHours !== false,
  };
}
