// The shipped tick-momentum strategy on a slow transaction stream: the real engine, the real
// simulated broker and portfolio, and between broker and engine a queue the test releases (the
// stream lagging, as it does live). The strategy must wait for its own order's outcome.
import { Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SimBroker } from '../../src/adapters/sim/broker.ts';
import { instruments } from '../../src/adapters/sim/testkit.ts';
import type { MarketEvent } from '../../src/domain/events.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Engine } from '../../src/engine/engine.ts';
import { Portfolio } from '../../src/engine/portfolio.ts';
import type { Execution } from '../../src/ports/execution.ts';
import { VirtualClock } from '../../src/ports/clock.ts';
import tickMomentum from '../../strategies/tick-momentum.ts';
import { driveLive } from '../../src/app/assembly.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** The simulator's transactions, passed on at once or held (a lagging stream) until released. */
class LaggingStream implements Execution {
  readonly #out = new Subject<Transaction>();
  readonly transactions$: Observable<Transaction> = this.#out;
  readonly held: Transaction[] = [];
  /** Transactions for which this returns true are held. */
  hold: (t: Transaction) => boolean = () => false;
  readonly intents: OrderIntent[] = [];
  constructor(readonly sim: SimBroker) {
    sim.transactions$.subscribe((t) => (this.hold(t) ? this.held.push(t) : this.#out.next(t)));
  }
  submit(intent: OrderIntent): void {
    this.intents.push(intent);
    this.sim.submit(intent);
  }
  /** Passes on the held transactions `pick` selects (in ID order), keeps the others held. */
  release(pick: (t: Transaction) => boolean): Transaction[] {
    const out = this.held.filter(pick);
    for (const t of out) this.held.splice(this.held.indexOf(t), 1);
    for (const t of out) this.#out.next(t);
    return out;
  }
}

describe('strategies/tick-momentum.ts', () => {
  it("waits for its own order's outcome: the previous trade's linked SL cancel arriving late does not open a second trade", async () => {
    const inst = instruments();
    const sim = new SimBroker({
      instruments: inst,
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    const stream = new LaggingStream(sim);
    const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
    const engine = new Engine({
      strategy: tickMomentum as never,
      name: 'tick-momentum',
      params: tickMomentum.params,
      execution: stream,
      portfolio,
      instruments: inst,
      clock: new VirtualClock(),
      log: silent,
      marginRate: 0.02,
    });
    const events = new Subject<MarketEvent>();
    const done = driveLive(engine, events);
    const t0 = Date.UTC(2024, 0, 2, 10);
    let i = 0;
    const tick = (mid: number): void => {
      const e = {
        kind: 'tick' as const,
        instrument: 'EUR_USD',
        at: t0 + ++i * 1000,
        bid: Math.round((mid - 0.00005) * 1e5) / 1e5,
        ask: Math.round((mid + 0.00005) * 1e5) / 1e5,
      };
      sim.onEvent(e);
      events.next(e);
    };
    const entries = (): OrderIntent[] => stream.intents.filter((x) => x.kind === 'order');

    tick(1.1); // the average starts here
    tick(1.101); // 9.9 pips above it: entry 1 (TP 5 pips above, SL 5 pips below)
    expect(entries()).toHaveLength(1);
    tick(1.101); // entry 1 fills (TP and SL orders created); its outcome reaches the strategy
    expect(portfolio.ledger.trades.size).toBe(1);
    // From now on the stream lags: everything but the TP's fill is held.
    stream.hold = (t) =>
      !(t.type === 'ORDER_FILL' && (t as { clientOrderID?: string }).clientOrderID === undefined);
    tick(1.102); // the TP fills and closes the trade; its linked SL cancel is held. Flat: entry 2
    expect(portfolio.ledger.trades.size).toBe(0);
    expect(entries()).toHaveLength(2);
    stream.hold = () => true;
    tick(1.1021); // entry 2 fills at the broker (below its TP at 1.1025); the fill is held (the stream is slow)
    // The previous trade's SL cancel (LINKED_TRADE_CLOSED) reaches the strategy now.
    const late = stream.release((t) => t.type === 'ORDER_CANCEL');
    expect(late.map((t) => (t as { reason?: string }).reason)).toEqual(['LINKED_TRADE_CLOSED']);
    tick(1.1022); // still no outcome of entry 2 (and 22 pips above the average): no third entry
    tick(1.1023);
    const second = entries()[1]!.id;
    console.log(
      `[tick-momentum] entries ${entries().length} (waiting for ${second}); held on the stream: ${stream.held.map((t) => t.type).join(', ')}`,
    );
    expect(entries()).toHaveLength(2);
    // Entry 2's own outcome arrives: the strategy is ready again (its trade is open, so no entry yet).
    stream.hold = () => false;
    stream.release(() => true);
    expect(engine.state).toMatchObject({ pending: '' });
    expect(portfolio.ledger.trades.size).toBe(1);
    events.complete();
    await done;
  });
});
