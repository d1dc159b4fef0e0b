import type { Observable } from 'rxjs';
import type { OrderIntent } from '../domain/intents.ts';
import type { TransactionNote } from '../domain/transaction-note.ts';
import type { Transaction } from '../domain/v20/index.ts';

/**
 * Where order intents go: the simulated broker in backtests and shadow paper, the v20 adapter live.
 *
 * `submit` never returns a fill. Every outcome (create, fill, cancel, reject) arrives as v20
 * transactions on `transactions$`, in ID order, exactly once. An implementation may emit
 * synchronously from inside `submit` (the simulator rejects an invalid request at once); the engine
 * queues what arrives while a handler runs, so handlers are never re-entered.
 *
 * `transactions$` is hot: what was emitted before a subscription is not replayed. The engine
 * subscribes before it subscribes to the market events, and a live adapter backfills with
 * `sinceid` from the last ID it saw.
 */
export interface Execution {
  readonly transactions$: Observable<Transaction>;
  /**
   * `decidedAt`: when the strategy decided (the engine's clock: a candle's close, a timer's time, a
   * labs item's), which can be before the last price the execution saw (a weekend timer fires when
   * Sunday's first price arrives). The simulator halts a market order decided while its market was
   * closed (MARKET_HALTED); v20 itself ignores it.
   */
  submit(intent: OrderIntent, decidedAt?: number): void;
  /**
   * Optional: the same deliveries as `transactions$` to a plain callback, for an execution that
   * emits synchronously in process (the simulator), where an rxjs Subscriber per transaction is a
   * measurable share of a backtest. Returns the function that stops the deliveries.
   */
  listen?(listener: (tx: Transaction) => void): () => void;
  /**
   * Optional: the same deliveries as notes (domain/transaction-note.ts): the fields a fold needs,
   * the v20 object only if the listener asks (`transaction()`, during the call). For an execution
   * that holds its transactions as numbers (the simulator's fills), a reader that needs no object
   * makes none. Returns the function that stops the deliveries.
   */
  listenNotes?(listener: (note: TransactionNote) => void): () => void;
}
