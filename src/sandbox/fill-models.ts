import type { Instrument } from '../domain/instrument.ts';
import { FillModelError, parseFillModels } from '../adapters/sim/fill-models.ts';
import { NO_LATENCY, type LatencyModel } from '../adapters/sim/latency.ts';
import { NO_SLIPPAGE, type SlippageModel } from '../adapters/sim/slippage.ts';

/**
 * The simulator's fill models a sandbox runs with, by the names the configuration uses
 * (`SandboxOptions.fill`, `fxflow sandbox --slippage/--latency`, `POST /sandbox/faults`):
 * slippage `none`, `fixed:<pips>`, `spread:<fraction>`; latency `none`, `fixed:<ms>`, `file:<path>`.
 */
export interface FillModelNames {
  slippage?: string;
  latency?: string;
}

/**
 * A slippage model a running sandbox can swap (`POST /sandbox/faults {"slippage": …}`): each
 * account's simulator holds one for its whole life and this delegates to the current model.
 * Delegating to `none` slips nothing, as the simulator's own default does.
 */
export class SwappableSlippage implements SlippageModel {
  #model: SlippageModel = NO_SLIPPAGE;

  get name(): string {
    return this.#model.name;
  }

  set(model: SlippageModel): void {
    this.#model = model;
  }

  slip(px: number, side: 1 | -1, bid: number, ask: number, inst: Instrument): number {
    return this.#model.slip(px, side, bid, ask, inst);
  }
}

/**
 * A latency model a running sandbox can swap (`POST /sandbox/faults {"latency": …}`). Every delay
 * it hands the simulator is also appended to `drawn`: the sandbox account clears it before a
 * submit and reads it after, to learn when the orders of that submit reach the simulator.
 */
export class SwappableLatency implements LatencyModel {
  #model: LatencyModel = NO_LATENCY;
  /** The delays drawn since the owner last cleared it, in the order the simulator drew them. */
  readonly drawn: number[] = [];

  get name(): string {
    return this.#model.name;
  }

  set(model: LatencyModel): void {
    this.#model = model;
  }

  next(): number {
    const d = this.#model.next();
    this.drawn.push(d);
    return d;
  }
}

/**
 * Checks fill model names and builds the models of one account (a recorded latency file cycles
 * per account). `field` prefixes the message of a bad name (`faults.` for the control route,
 * `fill.` for the options, `--` for flags); the error is a RangeError saying what is expected.
 * `quiet`: a latency file that does not parse is reported by its line only, never by its content
 * (the control route must not echo a file of the sandbox's machine).
 */
export function fillModels(
  names: FillModelNames,
  field: (name: 'slippage' | 'latency') => string,
  quiet = false,
): { slippage: SlippageModel; latency: LatencyModel } {
  try {
    const { slippage, latency } = parseFillModels(
      {
        ...(names.slippage !== undefined ? { slippage: names.slippage } : {}),
        ...(names.latency !== undefined ? { latency: names.latency } : {}),
      },
      'USD',
    );
    return { slippage, latency };
  } catch (e) {
    if (!(e instanceof FillModelError) || e.model === 'commission') throw e;
    let message = e.message.replace(new RegExp(`^${e.model} `), '');
    if (quiet && e.model === 'latency')
      message = message.replace(/: "[^\n]*" is not a delay/, ': a value is not a delay');
    throw new RangeError(`${field(e.model)} ${message}`);
  }
}
