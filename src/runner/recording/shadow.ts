import type { SimBroker, SimBrokerOptions } from '../../adapters/sim/broker.ts';
import { simBroker } from '../../adapters/sim/factory.ts';
import { knownPart, type SimAccountState } from '../../adapters/sim/seed.ts';
import type { MarketEvent } from '../../domain/events.ts';
import type { InstrumentRegistry } from '../../domain/instrument.ts';
import { withClientID, type OrderIntent } from '../../domain/intents.ts';
import { parseTime } from '../../domain/time.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { formatFillModels } from '../session/fill-models.ts';

/** What became of one intent at one broker. */
export interface Outcome {
  readonly outcome: 'FILLED' | 'CANCELLED' | 'REJECTED' | 'PENDING';
  readonly price?: string;
  readonly time?: string;
  readonly reason?: string;
  /**
   * What a fill did to the trades, e.g. `reduce 57 -1000, open -500`: the units of a trade it
   * opened, and the trade ID and units of each trade it reduced or closed.
   */
  readonly trades?: string;
}

/** One intent's outcome at the account and in the simulator, and how they differ. */
export interface Divergence {
  readonly clientID: string;
  readonly live: Outcome;
  readonly sim: Outcome;
  /**
   * 'outcome', 'price', 'time' (more than `timeToleranceMs` apart), 'trades' (both filled, but they
   * opened, reduced or closed different trades or units); empty when they agree.
   */
  readonly differs: readonly string[];
  /** Live minus sim fill price (undefined unless both filled). */
  readonly priceDiff?: number;
  readonly timeDiffMs?: number;
}

/**
 * Outcomes per client ID from a transaction list: an order's create carries the client ID; its fill,
 * cancel or reject is matched through the order ID.
 */
export function outcomesOf(txs: readonly Transaction[]): Map<string, Outcome> {
  const byOrder = new Map<string, string>();
  const out = new Map<string, Outcome>();
  for (const t of txs) {
    const x = t as {
      type: string;
      id: string;
      orderID?: string;
      price?: string;
      time: string;
      reason?: string;
      rejectReason?: string;
      clientExtensions?: { id?: string };
    };
    const cid = x.clientExtensions?.id;
    if (x.type.endsWith('_REJECT')) {
      if (cid !== undefined)
        out.set(cid, { outcome: 'REJECTED', time: x.time, reason: x.rejectReason ?? '' });
      continue;
    }
    if (x.type.endsWith('_ORDER') && cid !== undefined) {
      byOrder.set(x.id, cid);
      out.set(cid, { outcome: 'PENDING', time: x.time });
      continue;
    }
    const owner = x.orderID !== undefined ? byOrder.get(x.orderID) : undefined;
    if (owner === undefined) continue;
    if (x.type === 'ORDER_FILL')
      out.set(owner, { outcome: 'FILLED', price: x.price ?? '', time: x.time, trades: tradesOf(t) });
    else if (x.type === 'ORDER_CANCEL')
      out.set(owner, { outcome: 'CANCELLED', time: x.time, reason: x.reason ?? '' });
  }
  return out;
}

/** A fill's effect on the trades: closed and reduced trades (ID and units), then the opened units. */
function tradesOf(t: Transaction): string {
  const x = t as {
    tradesClosed?: { tradeID: string; units: string }[];
    tradeReduced?: { tradeID: string; units: string };
    tradeOpened?: { units: string };
  };
  const parts: string[] = [];
  for (const c of x.tradesClosed ?? []) parts.push(`close ${c.tradeID} ${c.units}`);
  if (x.tradeReduced) parts.push(`reduce ${x.tradeReduced.tradeID} ${x.tradeReduced.units}`);
  // The opened trade's ID is the fill's own transaction ID: compared by units only.
  if (x.tradeOpened) parts.push(`open ${x.tradeOpened.units}`);
  return parts.join(', ');
}

/** Compares live and simulated outcomes intent by intent. */
export function divergences(
  live: Map<string, Outcome>,
  sim: Map<string, Outcome>,
  timeToleranceMs = 1000,
): Divergence[] {
  const out: Divergence[] = [];
  const ids = new Set([...live.keys(), ...sim.keys()]);
  for (const id of ids) {
    const l = live.get(id) ?? { outcome: 'PENDING' as const };
    const s = sim.get(id) ?? { outcome: 'PENDING' as const };
    const differs: string[] = [];
    if (l.outcome !== s.outcome) differs.push('outcome');
    let priceDiff: number | undefined;
    let timeDiffMs: number | undefined;
    if (l.outcome === 'FILLED' && s.outcome === 'FILLED') {
      priceDiff = Number(l.price) - Number(s.price);
      if (l.price !== s.price) differs.push('price');
      if (l.trades !== s.trades) differs.push('trades');
    }
    if (l.time !== undefined && s.time !== undefined) {
      timeDiffMs = parseTime(l.time) - parseTime(s.time);
      if (Math.abs(timeDiffMs) > timeToleranceMs) differs.push('time');
    }
    out.push({
      clientID: id,
      live: l,
      sim: s,
      differs,
      ...(priceDiff !== undefined ? { priceDiff } : {}),
      ...(timeDiffMs !== undefined ? { timeDiffMs } : {}),
    });
  }
  return out;
}

/** A text table of divergences, with totals first. */
export function formatDivergences(d: readonly Divergence[]): string {
  const diff = d.filter((x) => x.differs.length > 0);
  const count = (what: string): number => diff.filter((x) => x.differs.includes(what)).length;
  const lines = [
    `Shadow comparison: ${d.length} intents, ${diff.length} differ (outcome ${count('outcome')}, price ${count('price')}, time ${count('time')}); trades opened, reduced or closed differ for ${count('trades')}`,
  ];
  for (const x of diff) {
    const fmt = (o: Outcome): string =>
      `${o.outcome}${o.price ? ` @${o.price}` : ''}${o.time ? ` ${o.time}` : ''}${o.reason ? ` ${o.reason}` : ''}${o.trades ? ` [${o.trades}]` : ''}`;
    lines.push(
      `  ${x.clientID}: live ${fmt(x.live)} | sim ${fmt(x.sim)}${x.priceDiff !== undefined ? ` | Δprice ${x.priceDiff.toFixed(6)}` : ''}${x.timeDiffMs !== undefined ? ` | Δt ${x.timeDiffMs} ms` : ''}`,
    );
  }
  return lines.join('\n');
}

/**
 * Shadow mode: a simulated account fed the same prices as the live run, receiving every intent the
 * strategy sends to the real account. `report` lists, intent by intent, where the fill price, time,
 * outcome or the trades a fill opened, reduced or closed differ: the live-versus-backtest divergence.
 *
 * Give it the account as the run found it (`account`: open trades with their dependent orders,
 * pending orders, balance, lastTransactionID, as v20 reports them): the simulator starts from that
 * state, not from an empty account, so an intent that reduces or closes an existing trade does the
 * same in both, and the simulator's transaction and trade IDs continue after the account's last one
 * (while the two agree, their IDs agree too).
 */
export class ShadowBook {
  readonly sim: SimBroker;
  readonly txs: Transaction[] = [];
  /** Trades and orders of the account left out of the simulator (instruments it does not know), e.g. `trade 57 (XAU_USD)`. */
  readonly leftOut: readonly string[];
  #started = false;

  /**
   * `models`: the simulator's fill models (`fxflow run --shadow --slippage/--latency/--commission`);
   * default v20's own. The report names them.
   */
  constructor(o: {
    instruments: InstrumentRegistry;
    currency: string;
    balance: string;
    marginRate: string;
    hedging: boolean;
    account?: SimAccountState;
    models?: Pick<SimBrokerOptions, 'slippage' | 'latency' | 'commission'>;
  }) {
    this.sim = simBroker({
      instruments: o.instruments,
      account: {
        currency: o.currency,
        balance: o.balance,
        marginRate: o.marginRate,
        hedging: o.hedging,
        id: 'shadow',
      },
      ...(o.models !== undefined ? { models: o.models } : {}),
    });
    const known = o.account !== undefined ? knownPart(o.account, o.instruments) : undefined;
    this.leftOut = known?.leftOut ?? [];
    if (known !== undefined) this.sim.seed(known.state);
    this.sim.transactions$.subscribe((t) => this.txs.push(t));
  }

  onEvent(ev: MarketEvent): void {
    if (!this.#started) {
      this.#started = true;
      this.sim.start(ev.at);
    }
    this.sim.onEvent(ev);
  }

  /** Sends an intent to the simulator; false (nothing sent) before its first price. */
  submit(intent: OrderIntent, decidedAt?: number): boolean {
    if (!this.#started) return false;
    this.sim.submit(withClientID(intent), decidedAt);
    return true;
  }

  /** The divergence report against the live account's transactions; its last line names the simulator's fill models. */
  report(live: readonly Transaction[]): string {
    const m = this.sim.models;
    return `${formatDivergences(divergences(outcomesOf(live), outcomesOf(this.txs)))}\nShadow simulator ${formatFillModels({ slippage: m.slippage, latency: m.latency, commission: m.commission })}`;
  }
}
