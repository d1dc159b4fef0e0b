import type { FillRow, TradeLevels } from './run-model.ts';
import type { EquitySeries, TxRecord } from './run-folder.ts';

const sec = (iso: string): number => Date.parse(iso) / 1000;
const num = (x: unknown): number => (typeof x === 'string' || typeof x === 'number' ? Number(x) : 0);

/** A trade as the fold builds it (report.html's trade row). */
export interface MutableTrade {
  id: string;
  instrument: string;
  units: number;
  openTime: number;
  closeTime: number | null;
  openPrice: number;
  closePrice: number | null;
  pl: number;
  financing: number;
  spreadCost: number;
  commission: number;
  closeReason: string;
}

/**
 * Folds transactions, one at a time as they are read, into trades, fills, protective levels and the
 * balance curve: the report keeps these rows, never the transactions themselves.
 */
export class TransactionFold {
  readonly #trades = new Map<string, MutableTrade>();
  readonly fills: FillRow[] = [];
  readonly levels: Record<string, TradeLevels> = {};
  readonly balance: EquitySeries = { t: [], balance: [], nav: [] };
  deposit = 0;

  #lv(id: string): TradeLevels {
    return (this.levels[id] ??= { sl: [], tp: [], ts: [] });
  }

  add(tx: TxRecord): void {
    const t = sec(tx.time);
    switch (tx.type) {
      case 'ORDER_FILL': {
        const opened = tx.tradeOpened as { tradeID: string; units: string; price?: string; halfSpreadCost?: string } | undefined;
        const closed = (tx.tradesClosed as { tradeID: string; realizedPL?: string; financing?: string; halfSpreadCost?: string }[] | undefined) ?? [];
        const reduced = tx.tradeReduced as { tradeID: string; realizedPL?: string; financing?: string; halfSpreadCost?: string } | undefined;
        const instrument = String(tx.instrument ?? '');
        const price = num(tx.price);
        const legs = closed.length + (reduced ? 1 : 0) + (opened ? 1 : 0);
        const commission = num(tx.commission);
        for (const c of reduced ? [...closed, reduced] : closed) {
          const tr = this.#trades.get(c.tradeID);
          if (!tr) continue;
          tr.pl += num(c.realizedPL);
          tr.financing += num(c.financing);
          tr.spreadCost += num(c.halfSpreadCost);
          tr.commission += legs > 0 ? commission / legs : 0;
          if (c !== reduced) {
            tr.closeTime = t;
            tr.closePrice = price;
            tr.closeReason = String(tx.reason ?? '');
          }
        }
        if (opened) {
          this.#trades.set(opened.tradeID, {
            id: opened.tradeID, instrument, units: num(opened.units), openTime: t, closeTime: null, openPrice: opened.price !== undefined ? num(opened.price) : price,
            closePrice: null, pl: 0, financing: 0, spreadCost: num(opened.halfSpreadCost), commission: legs > 0 ? commission / legs : 0, closeReason: '',
          });
        }
        this.fills.push({ id: tx.id, time: t, instrument, units: num(tx.units), price, reason: String(tx.reason ?? ''), tradeID: opened?.tradeID ?? closed[0]?.tradeID ?? reduced?.tradeID ?? '' });
        break;
      }
      case 'STOP_LOSS_ORDER':
      case 'GUARANTEED_STOP_LOSS_ORDER':
        if (typeof tx.tradeID === 'string' && tx.price !== undefined) this.#lv(tx.tradeID).sl.push([t, num(tx.price)]);
        break;
      case 'TAKE_PROFIT_ORDER':
        if (typeof tx.tradeID === 'string' && tx.price !== undefined) this.#lv(tx.tradeID).tp.push([t, num(tx.price)]);
        break;
      case 'TRAILING_STOP_LOSS_ORDER':
        if (typeof tx.tradeID === 'string' && tx.distance !== undefined) this.#lv(tx.tradeID).ts.push([t, num(tx.distance)]);
        break;
      case 'DAILY_FINANCING': {
        const pf = (tx.positionFinancings as { openTradeFinancings?: { tradeID: string; financing: string }[] }[] | undefined) ?? [];
        for (const p of pf) for (const f of p.openTradeFinancings ?? []) {
          const tr = this.#trades.get(f.tradeID);
          if (tr) tr.financing += num(f.financing);
        }
        break;
      }
      case 'TRANSFER_FUNDS':
        this.deposit += num(tx.amount);
        break;
    }
    if (tx.accountBalance !== undefined) {
      const b = num(tx.accountBalance);
      if (this.balance.t.length > 0 && this.balance.t[this.balance.t.length - 1] === t) {
        this.balance.balance[this.balance.balance.length - 1] = b;
        this.balance.nav[this.balance.nav.length - 1] = b;
      } else {
        this.balance.t.push(t);
        this.balance.balance.push(b);
        this.balance.nav.push(b);
      }
    }
  }

  result(): { trades: MutableTrade[]; fills: FillRow[]; levels: Record<string, TradeLevels>; balance: EquitySeries; deposit: number } {
    return { trades: [...this.#trades.values()], fills: this.fills, levels: this.levels, balance: this.balance, deposit: this.deposit };
  }
}
