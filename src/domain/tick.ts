import type { UnixMs } from './time.ts';

/**
 * One quote: the top of book of a v20 ClientPrice (or one row of a tick file).
 * `at` is the quote time. `liquidity` is the units available at that price, when known
 * (v20 `bids[0].liquidity`); undefined means unlimited for the simulator.
 */
export interface Tick {
  readonly kind: 'tick';
  readonly instrument: string;
  readonly at: UnixMs;
  readonly bid: number;
  readonly ask: number;
  readonly bidLiquidity?: number;
  readonly askLiquidity?: number;
}
