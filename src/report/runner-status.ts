import type { Transaction } from '../domain/v20/index.ts';
import type { Portfolio } from '../engine/portfolio.ts';
import { toUnits } from '../domain/money.ts';
import type { StatusProvider, StatusSnapshot } from './status-server.ts';

/** The parts of a running Runner the status page reads (all read-only). */
export interface RunnerView {
  readonly portfolio: Portfolio;
  readonly risk?:
    { readonly halted: boolean; readonly breaches: readonly unknown[]; dailyLoss(): number } | undefined;
  readonly pricingStats: {
    connects: number;
    reconnects: number;
    stalls: number;
    malformed: number;
    delivered: number;
  };
  readonly transactionStats: {
    connects: number;
    reconnects: number;
    stalls: number;
    malformed: number;
    delivered: number;
  };
  /** What the kill switch or the stop is doing (what is open, what it waits for); undefined while running. */
  readonly stopState?: string | undefined;
  /** Orders in doubt now (the in-doubt rule): until when each waits for a sign of itself. */
  readonly inDoubt?: readonly {
    readonly intentId: string;
    readonly instrument: string | undefined;
    readonly until: number;
  }[];
  /** Fills the runner did not expect (unknown fills), in order. */
  readonly unknownFills?: readonly {
    readonly transactionID: string;
    readonly time: string;
    readonly orderID: string;
    readonly clientID: string | undefined;
    readonly instrument: string;
    readonly units: string;
    readonly why: string;
  }[];
  /** A portfolio run's books (each strategy's own), when the run is a portfolio's. */
  readonly books?:
    | readonly {
        readonly name: string;
        readonly positions: Readonly<Record<string, number>>;
        readonly trades: readonly {
          readonly id: string;
          readonly instrument: string;
          readonly units: number;
        }[];
        readonly pendingOrders: number;
        readonly failed?: string;
      }[]
    | undefined;
  /** The drift guard (`--shadow --max-drift`), when there is one. */
  readonly drift?:
    | {
        readonly tolerances: string;
        readonly compared: number;
        readonly measures: { readonly pricePips: number; readonly missed: number; readonly plGap: number };
        readonly drifted: readonly {
          readonly clientID: string;
          readonly instrument: string;
          readonly what: string;
          readonly live?: string;
          readonly sim?: string;
          readonly pips?: number;
          readonly other?: string;
        }[];
        readonly breach?: {
          readonly tolerance: string;
          readonly value: number;
          readonly limit: number;
          readonly fills: readonly string[];
          readonly why: string;
        };
      }
    | undefined;
}

export interface RunnerStatusOptions {
  readonly strategy: string;
  readonly mode: string;
  readonly accountID: string;
  readonly marginRate?: number;
  readonly hedging?: boolean;
  readonly limits?: {
    maxUnits?: number;
    maxOpenTrades?: number;
    maxOrdersPerMinute?: number;
    maxDailyLoss?: number;
    maxSpreadPips?: number;
  };
  readonly killFile?: string;
  /** Pip size of an instrument (for the spread limit). */
  readonly pip?: (instrument: string) => number;
  readonly now?: () => number;
}

const KEEP = 25;

/** A StatusProvider over a Runner; feed it transactions (`transaction`) and intents (`intent`) as they happen. */
export class RunnerStatus implements StatusProvider {
  readonly #recent: Transaction[] = [];
  readonly #intents: number[] = [];
  readonly #seen = new Map<string, { delivered: number; at: number }>();
  constructor(
    readonly runner: () => RunnerView,
    readonly o: RunnerStatusOptions,
  ) {}

  transaction(tx: Transaction): void {
    this.#recent.push(tx);
    if (this.#recent.length > KEEP * 2) this.#recent.splice(0, this.#recent.length - KEEP);
  }

  intent(): void {
    this.#intents.push(this.#now());
  }

  #now(): number {
    return this.o.now ? this.o.now() : Date.now();
  }

  /** Time since a stream last delivered a line (price, transaction or heartbeat), as far as the counters show. */
  #lastLine(name: string, delivered: number): number | null {
    const now = this.#now();
    const s = this.#seen.get(name);
    if (!s || s.delivered !== delivered) this.#seen.set(name, { delivered, at: now });
    if (delivered === 0) return null;
    return now - this.#seen.get(name)!.at;
  }

  snapshot(): StatusSnapshot {
    const r = this.runner();
    const p = r.portfolio;
    const balance = toUnits(p.ledger.balance);
    const unrealized = p.unrealizedTotal();
    const nav = balance + unrealized;
    const marginUsed =
      this.o.marginRate !== undefined ? p.marginUsed(this.o.marginRate, this.o.hedging === true) : null;
    const trades = p.openTrades().map((t) => ({
      id: t.id,
      instrument: t.instrument,
      units: t.unitsNum,
      price: t.priceNum,
      openTime: t.openTime,
      unrealizedPL: p.unrealized(t),
    }));
    const byInst = new Map<string, { units: number; pl: number }>();
    for (const t of trades) {
      const e = byInst.get(t.instrument) ?? { units: 0, pl: 0 };
      e.units += t.units;
      e.pl += t.unrealizedPL;
      byInst.set(t.instrument, e);
    }
    const positions = [...byInst].map(([instrument, e]) => {
      const q = p.quote(instrument);
      return { instrument, units: e.units, unrealizedPL: e.pl, bid: q?.bid ?? null, ask: q?.ask ?? null };
    });
    const now = this.#now();
    while (this.#intents.length > 0 && this.#intents[0]! < now - 60_000) this.#intents.shift();
    const L = this.o.limits ?? {};
    const limits: StatusSnapshot['limits'][number][] = [];
    const add = (name: string, label: string, value: number | null, limit: number | undefined): void => {
      if (limit !== undefined)
        limits.push({ name, label, value, limit, used: value === null ? null : value / limit });
    };
    add(
      'maxUnits',
      'largest net position (units)',
      Math.max(0, ...positions.map((x) => Math.abs(x.units))),
      L.maxUnits,
    );
    add('maxOpenTrades', 'open trades', trades.length, L.maxOpenTrades);
    add('maxOrdersPerMinute', 'intents in the last minute', this.#intents.length, L.maxOrdersPerMinute);
    add(
      'maxDailyLoss',
      "today's loss (17:00 New York day)",
      r.risk ? Math.max(0, r.risk.dailyLoss()) : null,
      L.maxDailyLoss,
    );
    if (L.maxSpreadPips !== undefined && this.o.pip) {
      const spreads = positions
        .concat([])
        .map((x) => (x.bid !== null && x.ask !== null ? (x.ask - x.bid) / this.o.pip!(x.instrument) : 0));
      add(
        'maxSpreadPips',
        'widest spread now (pips, open positions)',
        spreads.length ? Math.max(...spreads) : null,
        L.maxSpreadPips,
      );
    }
    const pick = (tx: Transaction): StatusSnapshot['transactions'][number] => {
      const x = tx as unknown as Record<string, unknown>;
      const s = (k: string): string | undefined => (typeof x[k] === 'string' ? (x[k] as string) : undefined);
      const out: Record<string, string> = { id: tx.id, type: tx.type, time: tx.time };
      for (const k of ['instrument', 'units', 'price', 'pl', 'reason', 'rejectReason']) {
        const v = s(k);
        if (v !== undefined) out[k === 'rejectReason' ? 'reason' : k] = v;
      }
      return out as unknown as StatusSnapshot['transactions'][number];
    };
    const stream = (name: string, st: RunnerView['pricingStats']) => ({
      name,
      connects: st.connects,
      reconnects: st.reconnects,
      stalls: st.stalls,
      malformed: st.malformed,
      lastLineAgoMs: this.#lastLine(name, st.delivered),
    });
    const parts = this.o.accountID.split('-');
    return {
      at: new Date(now).toISOString(),
      strategy: this.o.strategy,
      mode: this.o.mode,
      account:
        parts.length > 1
          ? `${parts
              .slice(0, -1)
              .map((g) => '•'.repeat(g.length))
              .join('-')}-${parts[parts.length - 1]}`
          : '•••',
      currency: p.currency,
      balance,
      nav,
      unrealizedPL: unrealized,
      realizedPL: toUnits(p.ledger.pl),
      marginUsed,
      marginAvailable: marginUsed === null ? null : nav - marginUsed,
      trades,
      positions,
      transactions: this.#recent.slice(-KEEP).reverse().map(pick),
      limits,
      killSwitch: {
        engaged: r.risk?.halted === true,
        file: this.o.killFile ?? null,
        riskRefusals: r.risk?.breaches.length ?? 0,
        state: r.stopState ?? null,
      },
      streams: [stream('pricing', r.pricingStats), stream('transactions', r.transactionStats)],
      inDoubt: (r.inDoubt ?? []).map((d) => ({
        intentId: d.intentId,
        instrument: d.instrument ?? null,
        until: new Date(d.until).toISOString(),
      })),
      unknownFills: (r.unknownFills ?? []).map((u) => ({
        transactionID: u.transactionID,
        time: u.time,
        orderID: u.orderID,
        clientID: u.clientID ?? null,
        instrument: u.instrument,
        units: u.units,
        why: u.why,
      })),
      ...(r.drift !== undefined ? { drift: driftOf(r.drift) } : {}),
      ...(r.books !== undefined
        ? {
            books: Object.fromEntries(
              r.books.map((b) => [
                b.name,
                {
                  positions: { ...b.positions },
                  trades: b.trades.map((t) => ({ id: t.id, instrument: t.instrument, units: t.units })),
                  pendingOrders: b.pendingOrders,
                  ...(b.failed !== undefined ? { failed: b.failed } : {}),
                },
              ]),
            ),
          }
        : {}),
    };
  }
}

/** The drift guard's part of the snapshot: whitelisted fields only. */
function driftOf(d: NonNullable<RunnerView['drift']>): NonNullable<StatusSnapshot['drift']> {
  const b = d.breach;
  return {
    tolerances: d.tolerances,
    compared: d.compared,
    pricePips: d.measures.pricePips,
    missed: d.measures.missed,
    plGap: d.measures.plGap,
    drifted: d.drifted.map((f) => ({
      clientID: f.clientID,
      instrument: f.instrument,
      what: f.what,
      ...(f.live !== undefined ? { live: f.live } : {}),
      ...(f.sim !== undefined ? { sim: f.sim } : {}),
      ...(f.pips !== undefined ? { pips: f.pips } : {}),
      ...(f.other !== undefined ? { other: f.other } : {}),
    })),
    breach:
      b === undefined
        ? null
        : { tolerance: b.tolerance, value: b.value, limit: b.limit, fills: [...b.fills], why: b.why },
  };
}
