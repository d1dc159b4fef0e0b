// A portfolio backtest's parts that one strategy's has not (runBacktest makes one of these when it
// is given a portfolio): the engines on their books (engine/portfolio-host.ts), each member's own
// risk limits, its trades in trades.csv with a strategy column, its figures in summary.json and its
// equity curve in strategies.json (report.html draws them beside the account's).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import type { OrderIntent } from '../domain/intents.ts';
import type { Clock } from '../ports/clock.ts';
import type { Execution } from '../ports/execution.ts';
import type { StrategyLogger } from '../strategy/api.ts';
import { bookGate, PortfolioHost } from '../engine/portfolio-host.ts';
import type { ClosedTrade, EquityPoint, Portfolio } from '../engine/portfolio.ts';
import { summarize, type DataReport, type Summary } from '../engine/report.ts';
import { activeLimits, type RiskExecution } from '../engine/risk.ts';
import type { BacktestConfig } from './config.ts';
import type { LineFile } from './line-file.ts';
import type { PlotFile } from './plot-file.ts';
import type { LoadedPortfolio } from './portfolio.ts';

export interface PortfolioRunOptions {
  readonly loaded: LoadedPortfolio;
  readonly config: BacktestConfig;
  readonly execution: Execution;
  readonly account: Portfolio;
  readonly instruments: InstrumentRegistry;
  readonly clock: Clock;
  readonly log: StrategyLogger;
  readonly keepClosedTrades: boolean;
  readonly plots?: PlotFile;
  readonly onIntent: (name: string, intent: OrderIntent) => void;
  readonly onProgress?: (at: number, events: number) => void;
}

/** trades.csv, and how one trade is written in it (the strategy's name is added as a last column). */
export interface PortfolioTrades {
  readonly out: LineFile;
  readonly row: (t: ClosedTrade) => string;
}

export class PortfolioRun {
  readonly host: PortfolioHost;
  readonly #o: PortfolioRunOptions;
  readonly #gates = new Map<string, RiskExecution>();
  #trades: PortfolioTrades | undefined;

  constructor(o: PortfolioRunOptions) {
    this.#o = o;
    const { loaded, config } = o;
    const limitsOf = new Map(loaded.members.map((m) => [m.name, m.risk]));
    this.host = new PortfolioHost({
      members: loaded.members,
      execution: o.execution,
      account: o.account,
      instruments: o.instruments,
      clock: o.clock,
      log: (name) => {
        const tag = (obj: object): object => ({ strategy: name, ...obj });
        return {
          debug: (obj, msg) => o.log.debug(tag(obj), msg),
          info: (obj, msg) => o.log.info(tag(obj), msg),
          warn: (obj, msg) => o.log.warn(tag(obj), msg),
          error: (obj, msg) => o.log.error(tag(obj), msg),
        };
      },
      marginRate: Number(config.account.marginRate),
      hedging: config.account.hedging,
      keepClosedTrades: o.keepClosedTrades,
      onIntent: o.onIntent,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      // Plots of a portfolio's strategies go to one plots.csv, each name prefixed with its strategy's.
      ...(o.plots
        ? {
            onPlot: (name: string) => (time, plot, value, pane, style, instrument) =>
              o.plots!.plot(time, `${name}.${plot}`, value, pane, style, instrument),
          }
        : {}),
      gate: (name, inner, book) => {
        const gate = bookGate({
          inner,
          book,
          limits: limitsOf.get(name),
          instruments: o.instruments,
          clock: o.clock,
          hedging: config.account.hedging,
          log: o.log,
        });
        if (gate !== undefined) this.#gates.set(name, gate);
        return gate;
      },
    });
  }

  /** Writes each book's closed trades to trades.csv as they close (a run with a run folder). */
  tradesTo(t: PortfolioTrades): void {
    this.#trades = t;
    for (const b of this.host.books.books)
      b.portfolio.onClosedTrade = (c) => t.out.line(`${t.row(c)},${b.name}`);
  }

  /** Writes the trades each book still holds at the end (END_OF_RUN) to trades.csv. */
  openAtEnd(): void {
    const t = this.#trades;
    if (t === undefined) return;
    for (const b of this.host.books.books)
      for (const c of b.portfolio.openAtEnd()) t.out.line(`${t.row(c)},${b.name}`);
  }

  /** Each strategy's figures from its book (the account's own `orders` and `risk` are the account's). */
  summaries(extra: { from: number; to: number; data: DataReport }): Record<string, Summary> {
    const out: Record<string, Summary> = {};
    for (const b of this.host.books.books) {
      const gate = this.#gates.get(b.name);
      out[b.name] = summarize(b.portfolio, {
        from: extra.from,
        to: extra.to,
        data: extra.data,
        ...(gate
          ? {
              risk: {
                limits: activeLimits(this.#o.loaded.members.find((m) => m.name === b.name)!.risk!),
                refused: gate.refused,
              },
            }
          : {}),
      });
    }
    return out;
  }

  /** Each strategy's equity curve (its book's), by name: a member sweep's trial reads its member's. */
  equities(): Record<string, readonly EquityPoint[]> {
    const out: Record<string, readonly EquityPoint[]> = {};
    for (const b of this.host.books.books) out[b.name] = b.portfolio.equity;
    return out;
  }

  /** The members' params by name (summary.json's `params` of a portfolio). */
  params(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const m of this.#o.loaded.members) out[m.name] = { module: m.file, params: m.params };
    return out;
  }

  /** strategies.json: each strategy's module, params and daily equity curve, and the correlation of their daily returns. */
  writeFiles(dir: string): void {
    const books = this.host.books.books;
    const curves = books.map((b) => b.portfolio.equity);
    const returns = curves.map(dailyReturns);
    const correlation = returns.map((a) => returns.map((b) => round4(correlationOf(a, b))));
    const doc = {
      strategies: books.map((b, i) => ({
        name: b.name,
        module: this.#o.loaded.members[i]!.file,
        params: this.#o.loaded.members[i]!.params,
        equity: curves[i]!.map((p) => [p.time, round2(p.balance), round2(p.nav)]),
      })),
      correlation: { names: books.map((b) => b.name), dailyReturns: correlation },
    };
    writeFileSync(join(dir, 'strategies.json'), `${JSON.stringify(doc)}\n`);
  }
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const round4 = (x: number): number => (Number.isFinite(x) ? Math.round(x * 10_000) / 10_000 : x);

/** Day-over-day changes of the NAV (the equity curve's points are the trading days' last marks). */
function dailyReturns(curve: readonly { readonly nav: number }[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < curve.length; i++) {
    const prev = curve[i - 1]!.nav;
    out.push(prev === 0 ? 0 : (curve[i]!.nav - prev) / prev);
  }
  return out;
}

/** Pearson correlation of two series of one length (NaN when either does not move). */
export function correlationOf(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  if (n < 2) return Number.NaN;
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i]! - ma;
    const db = b[i]! - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  return saa === 0 || sbb === 0 ? Number.NaN : sab / Math.sqrt(saa * sbb);
}
