import type { Observable } from 'rxjs';
import type { SimBroker } from '../adapters/sim/broker.ts';
import type { OrderIntent } from '../domain/intents.ts';
import type { Transaction } from '../domain/v20/index.ts';
import type { Execution } from '../ports/execution.ts';

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
 */
export class SimExecution implements Execution {
  readonly transactions$: Observable<Transaction>;
  /** Intents whose market order waits for a price, by instrument. */
  readonly #waiting = new Map<string, string[]>();

  constructor(
    readonly sim: SimBroker,
    readonly confirm: (intentID: string) => void,
  ) {
    this.transactions$ = sim.transactions$;
  }

  submit(intent: OrderIntent, decidedAt?: number): void {
    const before = this.sim.queuedMarketOrders();
    this.sim.submit(withClientID(intent), decidedAt);
    const instrument = this.sim.queuedMarketOrders() > before ? this.#instrumentOf(intent) : undefined;
    if (instrument === undefined) {
      this.confirm(intent.id);
      return;
    }
    const list = this.#waiting.get(instrument);
    if (list === undefined) this.#waiting.set(instrument, [intent.id]);
    else list.push(intent.id);
  }

  /** After a price of `instrument` reached the simulator: the intents that waited for it have their outcome. */
  priced(instrument: string): void {
    const list = this.#waiting.get(instrument);
    if (list === undefined || this.sim.queuedMarketOrders(instrument) > 0) return;
    this.#waiting.delete(instrument);
    for (const id of list) this.confirm(id);
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
        for (const t of this.sim.ledger.trades.values()) if (t.clientExtensions?.id === spec.slice(1)) return t.instrument;
        return undefined;
      }
      default:
        return undefined;
    }
  }
}

/** The intent with its ID as the order's client ID (`clientExtensions.id`, other extension fields kept). */
export function withClientID(intent: OrderIntent): OrderIntent {
  if (intent.kind !== 'order' && intent.kind !== 'replace') return intent;
  const ext = (intent.request as { clientExtensions?: Record<string, unknown> }).clientExtensions;
  if (ext?.id === intent.id) return intent;
  return { ...intent, request: { ...intent.request, clientExtensions: { ...ext, id: intent.id } } } as OrderIntent;
}
