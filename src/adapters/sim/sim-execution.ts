import type { Observable } from 'rxjs';
import type { QueuedMarket } from './book.ts';
import type { SimBroker } from './broker.ts';
import { withClientID, type OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { Execution } from '../../ports/execution.ts';

/**
 * `--broker sim` (shadow paper): the simulator as the runner's broker, with what a restart needs.
 *
 * - Orders and replacements carry the intent's ID as their client ID, as the v20 adapter sends them:
 *   the journal then shows which intents reached the simulator.
 * - `confirm(id)` is called once an intent's outcome exists as transactions: at once for most
 *   intents; a market order, a trade close or a position close waits in the simulator for the next
 *   price of its instrument, so its intent is confirmed after that price (`priced`). An intent
 *   still waiting when the run stops or crashes stays unconfirmed in the journal, and the restarted
 *   runner submits it again to the restored simulator, unless the journal shows its outcome. (The
 *   kill switch waits up to 5 s for that price before the run stops: see `waiting`.)
 * - `drop(which)` withdraws waiting intents from the simulator before their price comes (the kill
 *   switch: the strategy's market orders and closes still queued never fill).
 */
export class SimExecution implements Execution {
  readonly transactions$: Observable<Transaction>;
  /** Intents whose market order waits for a price, by instrument, with the simulator's queue entries they made. */
  readonly #waiting = new Map<string, Waiting[]>();

  constructor(
    readonly sim: SimBroker,
    readonly confirm: (intentID: string) => void,
  ) {
    this.transactions$ = sim.transactions$;
  }

  submit(intent: OrderIntent, decidedAt?: number): void {
    const before = this.sim.queuedMarketOrders();
    this.sim.submit(withClientID(intent), decidedAt);
    const added = this.sim.queuedMarketOrders() - before;
    const instrument = added > 0 ? this.#instrumentOf(intent) : undefined;
    if (instrument === undefined) {
      this.confirm(intent.id);
      return;
    }
    // What this intent queued: the newest entries of its instrument's queue.
    const w: Waiting = { intent, entries: this.sim.queuedMarket(instrument).slice(-added) };
    const list = this.#waiting.get(instrument);
    if (list === undefined) this.#waiting.set(instrument, [w]);
    else list.push(w);
  }

  /**
   * Withdraws from the simulator every waiting intent that `which` selects and whose orders have
   * not met a price yet: none of them fills. Returns them (unconfirmed: the caller settles each).
   * An intent part of which has filled already is left to its price.
   */
  drop(which: (intent: OrderIntent) => boolean): OrderIntent[] {
    const out: OrderIntent[] = [];
    for (const [instrument, list] of [...this.#waiting]) {
      const queued = new Set(this.sim.queuedMarket(instrument));
      const kept: Waiting[] = [];
      for (const w of list) {
        if (which(w.intent) && w.entries.every((q) => queued.has(q))) {
          this.sim.withdrawQueued(instrument, new Set(w.entries));
          out.push(w.intent);
        } else kept.push(w);
      }
      if (kept.length === 0) this.#waiting.delete(instrument);
      else {
        this.#waiting.set(instrument, kept);
        this.priced(instrument); // what is left may have no order queued any more: it has its outcome
      }
    }
    return out;
  }

  /** After a price of `instrument` reached the simulator: the intents that waited for it have their outcome. */
  priced(instrument: string): void {
    const list = this.#waiting.get(instrument);
    if (list === undefined || this.sim.queuedMarketOrders(instrument) > 0) return;
    this.#waiting.delete(instrument);
    for (const w of list) this.confirm(w.intent.id);
  }

  /** Intents whose outcome waits for a price. */
  get waiting(): number {
    let n = 0;
    for (const l of this.#waiting.values()) n += l.length;
    return n;
  }

  /** The instrument whose next price settles a queued intent. */
  #instrumentOf(intent: OrderIntent): string | undefined {
    switch (intent.kind) {
      case 'order':
      case 'replace':
        return (intent.request as { instrument?: string }).instrument;
      case 'closePosition':
        return intent.instrument;
      case 'closeTrade': {
        const spec = intent.tradeSpecifier;
        if (!spec.startsWith('@')) return this.sim.ledger.trades.get(spec)?.instrument;
        for (const t of this.sim.ledger.trades.values())
          if (t.clientExtensions?.id === spec.slice(1)) return t.instrument;
        return undefined;
      }
      default:
        return undefined;
    }
  }
}

/** An intent waiting in the simulator for a price, and the queue entries it made there. */
interface Waiting {
  readonly intent: OrderIntent;
  readonly entries: readonly QueuedMarket[];
}
