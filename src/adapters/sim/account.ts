import type { Candle } from '../../domain/candle.ts';
import type { HomeConversion, Quote } from '../../domain/conversion.ts';
import type { Instrument, InstrumentRegistry } from '../../domain/instrument.ts';
import type { Ledger, LedgerTrade } from '../../domain/ledger.ts';

/** A part of a trade a fill closes. */
export interface Chunk {
  readonly trade: LedgerTrade;
  readonly units: number;
}

/**
 * The account rules, as OANDA applies them: NAV and margin used, the margin check of a fill, when a
 * margin call starts and ends, when the margin closeout fires, and the FIFO rules of a US account.
 * It reads the simulator's ledger and quotes; it decides; execute.ts and closeout.ts act (emit the transactions).
 */
export class AccountRules {
  /** The account's margin rate; a sandbox configuration (PATCH /configuration) changes it. */
  marginRate: number;
  readonly #positionScratch = new Map<string, { long: number; short: number }>();
  /** `singleHomeTrade`'s answer, and the ledger version it was computed for. */
  #single: LedgerTrade | undefined = undefined;
  #singleVersion = -1;

  constructor(
    private readonly ledger: Ledger,
    private readonly instruments: InstrumentRegistry,
    private readonly quotes: ReadonlyMap<string, Quote>,
    private readonly conversion: HomeConversion,
    private readonly currency: string,
    marginRate: number,
    /** Hedging account: margin on the larger side of a position, not its net. */
    private readonly hedging: boolean,
  ) {
    this.marginRate = marginRate;
  }

  /**
   * NAV and margin used at the latest quotes. NAV uses each trade's closing side (v20 would use
   * its closeout prices; the simulator's are the quotes). Margin: per instrument the net units
   * (hedged: the larger side) × mid × quote→home (mid) × the stricter margin rate.
   */
  state(): { nav: number; marginUsed: number } {
    let nav = this.ledger.balance / 10_000;
    const pos = this.#positionScratch;
    pos.clear();
    for (const t of this.ledger.trades.values()) {
      nav += this.unrealized(t);
      let e = pos.get(t.instrument);
      if (e === undefined) pos.set(t.instrument, (e = { long: 0, short: 0 }));
      if (t.unitsNum > 0) e.long += t.unitsNum;
      else e.short -= t.unitsNum;
    }
    let marginUsed = 0;
    for (const [name, e] of pos) {
      const q = this.quotes.get(name);
      if (!q) continue;
      const inst = this.instruments.get(name);
      const units = this.hedging ? Math.max(e.long, e.short) : Math.abs(e.long - e.short);
      const f = this.conversion.tryFactors(inst.quote);
      if (!f) continue;
      marginUsed +=
        units * ((q.bid + q.ask) / 2) * ((f.gain + f.loss) / 2) * Math.max(this.marginRate, inst.marginRate);
    }
    return { nav, marginUsed };
  }

  /**
   * What the margin check says at the latest quotes: 'closeout' when NAV is at or below half the
   * margin used, 'call' when below it, 'ok' otherwise, undefined when no margin is used.
   */
  check(): 'closeout' | 'call' | 'ok' | undefined {
    const { nav, marginUsed } = this.state();
    if (marginUsed <= 0) return undefined;
    if (nav <= marginUsed / 2) return 'closeout';
    return nav < marginUsed ? 'call' : 'ok';
  }

  /**
   * A cheap test before a candle: could NAV fall below the margin used anywhere in it? Each trade of
   * the candle's instrument is valued at the candle's extreme against it; margin at the extreme that
   * makes it largest. When this says no, the candle needs no per-point margin checks.
   */
  mayCall(c: Candle, candleInstrument: Instrument): boolean {
    let nav = this.ledger.balance / 10_000;
    let used = 0;
    const one = this.#singleHomeTrade();
    if (one !== undefined && one.instrument === c.instrument) {
      // One trade, quoted in the home currency (factors 1): the loop below, term for term, without
      // the map walk and the factor lookup (× 1 and 0 + x are exact, so the figures are the same).
      const quotePL = ((one.unitsNum > 0 ? c.bl : c.ah) - one.priceNum) * one.unitsNum;
      nav += quotePL;
      used =
        Math.abs(one.unitsNum) * ((c.bh + c.ah) / 2) * Math.max(this.marginRate, candleInstrument.marginRate);
      return nav < used;
    }
    for (const t of this.ledger.trades.values()) {
      const inst = t.instrument === c.instrument ? candleInstrument : this.instruments.get(t.instrument);
      const f = this.conversion.tryFactors(inst.quote);
      if (!f) return true;
      let close: number;
      let high: number;
      if (t.instrument === c.instrument) {
        close = t.unitsNum > 0 ? c.bl : c.ah;
        high = (c.bh + c.ah) / 2;
      } else {
        const q = this.quotes.get(t.instrument);
        if (!q) continue;
        close = t.unitsNum > 0 ? q.bid : q.ask;
        high = (q.bid + q.ask) / 2;
      }
      const quotePL = (close - t.priceNum) * t.unitsNum;
      nav += quotePL * (quotePL < 0 ? f.loss : f.gain);
      // Gross units overstate netted margin: a safe upper bound.
      used += Math.abs(t.unitsNum) * high * f.loss * Math.max(this.marginRate, inst.marginRate);
    }
    return nav < used;
  }

  /**
   * The only open trade when there is exactly one and its instrument is quoted in the home
   * currency, else undefined. Recomputed only when the ledger's trades change (`version`).
   */
  #singleHomeTrade(): LedgerTrade | undefined {
    const ledger = this.ledger;
    if (this.#singleVersion !== ledger.version) {
      this.#singleVersion = ledger.version;
      this.#single = undefined;
      if (ledger.trades.size === 1) {
        for (const t of ledger.trades.values())
          if (this.instruments.get(t.instrument).quote === this.currency) this.#single = t;
      }
    }
    return this.#single;
  }

  /** The margin check of a fill that opens `openUnits` (signed) and closes `chunks`: margin used must stay within NAV. */
  marginOk(inst: Instrument, openUnits: number, chunks: readonly Chunk[], bid: number, ask: number): boolean {
    // Every open trade of the instrument being filled (the usual case): the same sums, in the same
    // order, as the general path below, without its map and entry objects.
    let nav = this.ledger.balance / 10_000;
    let long = 0;
    let short = 0;
    for (const t of this.ledger.trades.values()) {
      if (t.instrument !== inst.name) return this.#marginOkMixed(inst, openUnits, chunks, bid, ask);
      if (t.unitsNum > 0) long += t.unitsNum;
      else short -= t.unitsNum;
      nav += this.unrealized(t);
    }
    for (let i = 0; i < chunks.length; i++) {
      const ch = chunks[i]!;
      if (ch.trade.unitsNum > 0) long -= ch.units;
      else short -= ch.units;
    }
    if (openUnits > 0) long += openUnits;
    else short -= openUnits;
    const rate = Math.max(this.marginRate, inst.marginRate);
    const units = this.hedging ? Math.max(long, short) : Math.abs(long - short);
    const used = units * ((bid + ask) / 2) * this.conversion.mid(inst.quote) * rate;
    return used <= nav;
  }

  /** `marginOk` when trades of several instruments are open. */
  #marginOkMixed(
    inst: Instrument,
    openUnits: number,
    chunks: readonly Chunk[],
    bid: number,
    ask: number,
  ): boolean {
    const netBy = new Map<string, { long: number; short: number }>();
    let nav = this.ledger.balance / 10_000;
    for (const t of this.ledger.trades.values()) {
      let e = netBy.get(t.instrument);
      if (!e) {
        e = { long: 0, short: 0 };
        netBy.set(t.instrument, e);
      }
      if (t.unitsNum > 0) e.long += t.unitsNum;
      else e.short -= t.unitsNum;
      nav += this.unrealized(t);
    }
    let e = netBy.get(inst.name);
    if (!e) {
      e = { long: 0, short: 0 };
      netBy.set(inst.name, e);
    }
    for (const ch of chunks) {
      if (ch.trade.unitsNum > 0) e.long -= ch.units;
      else e.short -= ch.units;
    }
    if (openUnits > 0) e.long += openUnits;
    else e.short -= openUnits;
    let used = 0;
    for (const [name, pos] of netBy) {
      const i = this.instruments.get(name);
      const q = name === inst.name ? { bid, ask } : this.quotes.get(name);
      if (!q) continue;
      const rate = Math.max(this.marginRate, i.marginRate);
      const units = this.hedging ? Math.max(pos.long, pos.short) : Math.abs(pos.long - pos.short);
      used += units * ((q.bid + q.ask) / 2) * this.conversion.mid(i.quote) * rate;
    }
    return used <= nav;
  }

  /** The margin the opening of `units` takes at `bid`/`ask` (4-place integer amount): v20's initialMarginRequired. */
  initialMargin(
    inst: Instrument,
    units: number,
    bid: number,
    ask: number,
    gain: number,
    loss: number,
  ): number {
    const rate = Math.max(this.marginRate, inst.marginRate);
    return Math.round(units * ((bid + ask) / 2) * ((gain + loss) / 2) * rate * 10_000);
  }

  /** FIFO: an open trade of the same instrument and the same signed size, older than `t`. */
  olderTwin(t: LedgerTrade): boolean {
    for (const o of this.ledger.trades.values()) {
      if (o === t) return false; // the ledger keeps trades in the order they opened
      if (o.instrument === t.instrument && o.unitsNum === t.unitsNum) return true;
    }
    return false;
  }

  /** FIFO: whether an open trade of `instrument` other than those being closed has `size` units. */
  sizeTaken(instrument: string, size: number, closing: readonly Chunk[]): boolean {
    for (const o of this.ledger.trades.values()) {
      if (o.instrument !== instrument || Math.abs(o.unitsNum) !== size) continue;
      if (!closing.some((ch) => ch.trade === o && ch.units === size)) return true;
    }
    return false;
  }

  /** FIFO: whether a trade of `instrument` on the other side than `buy` is open (no hedging). */
  hasOpposite(instrument: string, buy: boolean): boolean {
    for (const o of this.ledger.trades.values())
      if (o.instrument === instrument && o.unitsNum > 0 !== buy) return true;
    return false;
  }

  /** Unrealized P/L of a trade in home currency at the latest quote (closing side). */
  unrealized(t: LedgerTrade): number {
    const q = this.quotes.get(t.instrument);
    if (!q) return 0;
    const close = t.unitsNum > 0 ? q.bid : q.ask;
    const quotePL = (close - t.priceNum) * t.unitsNum;
    const f = this.conversion.tryFactors(this.instruments.get(t.instrument).quote);
    if (!f) return 0;
    return quotePL * (quotePL < 0 ? f.loss : f.gain);
  }
}
