import type { Instrument } from '../../domain/instrument.ts';
import type { SimOrderType } from './orders.ts';

/**
 * Slippage: how far a fill lands past the price the path gave it, always against the trader (a buy
 * higher, a sell lower). OANDA's v20 fills at the quoted price (default `none`); a fixed distance in
 * pips or a fraction of the current spread models the fills of a real market that moved between the
 * quote and the execution.
 */
export interface SlippageModel {
  /** How the model is named in the config, the report and config.json: `none`, `fixed:<pips>`, `spread:<fraction>`. */
  readonly name: string;
  /** The fill price after slippage of a fill at `px` on side `side` (1 buy, -1 sell), at the quotes `bid`/`ask`. Never better than `px`. */
  slip(px: number, side: 1 | -1, bid: number, ask: number, inst: Instrument): number;
}

/** v20's own fills: the quoted price, no slippage. */
export const NO_SLIPPAGE: SlippageModel = { name: 'none', slip: (px) => px };

/** A fixed distance in pips, against the trader. */
export function fixedSlippage(pips: number): SlippageModel {
  if (!(pips >= 0 && Number.isFinite(pips)))
    throw new RangeError(`slippage fixed:<pips> needs a number of pips >= 0, got ${pips}`);
  return { name: `fixed:${pips}`, slip: (px, side, _bid, _ask, inst) => px + side * pips * inst.pip };
}

/** A fraction of the spread at the fill's point (0.5: half the spread), against the trader. */
export function spreadSlippage(fraction: number): SlippageModel {
  if (!(fraction >= 0 && Number.isFinite(fraction)))
    throw new RangeError(`slippage spread:<fraction> needs a fraction >= 0, got ${fraction}`);
  return {
    name: `spread:${fraction}`,
    slip: (px, side, bid, ask) => px + side * fraction * Math.abs(ask - bid),
  };
}

const NUMBER = /^\d+(\.\d+)?$/;

/** A slippage model from its name (`none`, `fixed:<pips>`, `spread:<fraction>`); RangeError saying what is expected otherwise. */
export function parseSlippage(spec: string): SlippageModel {
  if (spec === 'none') return NO_SLIPPAGE;
  const [kind, value] = spec.split(':', 2) as [string, string | undefined];
  if ((kind === 'fixed' || kind === 'spread') && value !== undefined && NUMBER.test(value)) {
    return kind === 'fixed' ? fixedSlippage(Number(value)) : spreadSlippage(Number(value));
  }
  throw new RangeError(
    `slippage must be none, fixed:<pips> (e.g. fixed:0.5) or spread:<fraction> (e.g. spread:0.5), got "${spec}"`,
  );
}

/**
 * Which fills can slip: those that execute at the market once triggered (market orders and the
 * closes, stops, stop losses, trailing stops). Never a limit, a take profit or a market-if-touched
 * (they fill at their price or better), nor a guaranteed stop (its level is guaranteed).
 */
export function canSlip(type: SimOrderType): boolean {
  return type === 'MARKET' || type === 'STOP' || type === 'STOP_LOSS' || type === 'TRAILING_STOP_LOSS';
}
