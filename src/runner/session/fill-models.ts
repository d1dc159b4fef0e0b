import {
  FillModelError,
  parseFillModels,
  type FillModelNames,
  type FillModels,
} from '../../adapters/sim/fill-models.ts';
import { RunnerError } from './errors.ts';

/** The fill models of a run's simulators, as the configuration names them. */
export type { FillModelNames };

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
export function simModels(names: FillModelNames | undefined, currency: string): FillModels {
  try {
    return parseFillModels(names ?? {}, currency);
  } catch (e) {
    if (!(e instanceof FillModelError)) throw e;
    throw new RunnerError('RUNNER', `${e.flag}: ${e.message}`, { cause: e.cause });
  }
}
