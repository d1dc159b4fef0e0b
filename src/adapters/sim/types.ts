// The simulated broker's options and figures: types the parts of the simulator read (state.ts), in a
// module apart, so that broker.ts, which composes the parts, is imported by none of them.
import type { Amount } from '../../domain/money.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import type { CommissionModel } from './commission.ts';
import type { FinancingRates } from './financing.ts';
import type { LatencyModel } from './latency.ts';
import type { SlippageModel } from './slippage.ts';

export interface SimBrokerOptions {
  readonly instruments: InstrumentRegistry;
  /** Account (home) currency. */
  readonly currency: string;
  /** Initial deposit, a decimal string in the home currency. */
  readonly initialBalance: string;
  /** The account's margin rate (0.02 = 50:1). Each instrument uses the stricter of this and its own. */
  readonly marginRate: string;
  /**
   * Hedging account: DEFAULT positionFill opens new trades instead of reducing (v20 OPEN_ONLY), and
   * OPEN_ONLY may open beside an opposite position. Without it (netting) an OPEN_ONLY order against
   * an open opposite position is cancelled with FIFO_VIOLATION: one side per instrument.
   */
  readonly hedging?: boolean;
  /**
   * FIFO account (OANDA's US division, NFA rule 2-43b): no hedging (DEFAULT and OPEN_ONLY never open
   * against an opposite position); a trade may only be closed by name (trade close, TP/SL/trailing)
   * when no older trade of the same instrument has the same size; a trade opened with TP/SL/trailing
   * stops on fill must have a size no other open trade of the instrument has. An order that would
   * break this is cancelled with FIFO_VIOLATION when it fills. Overrides `hedging`.
   */
  readonly fifo?: boolean;
  /**
   * A portfolio's account (docs/portfolios.md): an order that reduces (netting's DEFAULT,
   * REDUCE_FIRST, REDUCE_ONLY) reduces only the open trades whose client extensions carry its own
   * `tag` (its strategy's), as if each strategy had a sub-account; balance, margin, margin closeout
   * and financing stay the one account's. Orders without a tag, closeouts and trade closes by ID
   * are not affected.
   */
  readonly netByTag?: boolean;
  /**
   * Market hours: a market order (client, trade close, position close) submitted while its
   * instrument's market is closed (`Instrument.hours`: the FX week from Sunday to Friday 17:00 New
   * York, metals and CFDs with their daily breaks) is created and cancelled at once with
   * MARKET_HALTED, as v20 does. Default true; false (24/7 or synthetic data) lets orders wait for
   * the next price instead.
   */
  readonly marketHours?: boolean;
  readonly accountID?: string;
  /**
   * Which series drives matching per instrument: a granularity, or 'TICK'. Unlisted instruments are
   * driven by the first series seen for them (the finest, since the merge orders ties that way).
   */
  readonly drivers?: ReadonlyMap<string, string>;
  /** Charge DAILY_FINANCING at 17:00 New York. Default true. */
  readonly financing?: boolean;
  /** The rates of each rollover (financing.ts), e.g. a recorded history; default each instrument's own. */
  readonly financingRates?: FinancingRates;
  /** Commission in home currency per million units filled. Default 0 (spread-only pricing). Ignored when `commission` is given. */
  readonly commissionPerMillion?: string;
  /** The commission model (commission.ts): per million units, or OANDA's core pricing schedule. Default: `commissionPerMillion`. */
  readonly commission?: CommissionModel;
  /** The slippage model (slippage.ts) of fills that can slip (market orders, stops). Default none, as v20. */
  readonly slippage?: SlippageModel;
  /** The latency model (latency.ts): the delay between a decision and its order reaching the server. Default none. */
  readonly latency?: LatencyModel;
  /**
   * The order of a candle's extremes. adaptive: the extreme nearer to the open first. worst: the
   * extreme adverse to the instrument's open position first (low first when net long, high first
   * when net short; adaptive when flat), so ambiguous candles resolve against the trader. exact: the
   * ticks of the instrument (fed alongside the candles) do the matching inside every candle that has
   * ticks, whatever drives the strategy; a candle without ticks falls back to adaptive.
   */
  readonly path?: 'adaptive' | 'worst' | 'exact';
  /**
   * Skip the path walk of candles in which no resting order can trigger (default true). The
   * outcome is the same either way (pinned by a property test); false walks every point.
   */
  readonly quickPath?: boolean;
}

/** Figures about the simulation itself, for the report. */
export interface SimStats {
  fills: number;
  rejects: number;
  cancels: number;
  /** Candles where the order of the intra-candle path decided an outcome (e.g. TP and SL both in range). */
  ambiguousCandles: number;
  /** Realized P/L of fills made inside ambiguous candles (home currency). */
  ambiguousPL: Amount;
  /** Margin closeouts (all positions closed because NAV fell to half the margin used). */
  marginCloseouts: number;
  /** Market orders cancelled MARKET_HALTED: submitted while their instrument's market was closed. */
  halted: number;
  /**
   * ORDER_FILL objects built: one per fill that a listener asked the object of (`listen`, or a
   * note's `transaction()`), none when every listener reads notes only (`listenNotes`).
   */
  fillObjects: number;
  /**
   * Order-creating transaction objects built from their values (a MARKET_ORDER, a common on-fill
   * order): one per order whose `created` or note's `transaction()` was read, none otherwise.
   */
  orderObjects: number;
}
