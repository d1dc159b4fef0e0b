import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SimBroker, type SimStats } from '../adapters/sim/broker.ts';
import type { Candle } from '../domain/candle.ts';
import type { Tick } from '../domain/tick.ts';
import { conversionInstruments } from '../domain/conversion.ts';
import type { CalendarEvent, MarketEvent, SignalEvent } from '../domain/events.ts';
import { granularityMs, type Granularity } from '../domain/granularity.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import type { OrderIntent } from '../domain/intents.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { Engine, parseCandleSeries, subscriptionsOf, type EngineStats } from '../engine/engine.ts';
import { mergeBatches } from '../engine/merge.ts';
import { Portfolio, type ClosedTrade, type EquityPoint } from '../engine/portfolio.ts';
import { summarize, type Summary } from '../engine/report.ts';
import { toUnits } from '../domain/money.ts';
import { formatIsoMs } from '../domain/time.ts';
import { VirtualClock } from '../ports/clock.ts';
import type { StrategyLogger } from '../strategy/api.ts';
import { ConfigError, type BacktestConfig } from './config.ts';
import { SeriesWatch, dataReport } from './series-watch.ts';
import { LineFile, makeRunDir } from './line-file.ts';
import { parseDate } from './config.ts';
import { StrategyLoadError, type LoadedStrategy } from './load-strategy.ts';
import { CandleRecorder } from '../report/candle-recorder.ts';
import { writeRunReport } from '../report/run-report.ts';

/** What a backtest's data source knows of a series: where it came from, its price sides, synthetic or real. */
export interface SeriesOrigin {
  readonly source: string;
  readonly sides: string;
  readonly synthetic: boolean;
}

/**
 * What produced a backtest's numbers (summary.json `data`): the traded series' source, price sides
 * and whether synthetic; the spread model; the period the data really covered and its holes beyond
 * weekends and holidays (every series, conversion series included, in `series`).
 */
export interface DataReport {
  readonly source: string;
  readonly sides: string;
  readonly synthetic: boolean;
  readonly spreadModel: { readonly kind: BacktestConfig['data']['spread']; readonly pips?: number; readonly pipsByHour?: readonly number[]; readonly text: string };
  readonly coverage: { readonly from: string | null; readonly to: string | null; readonly holes: readonly DataHole[] };
  readonly series: readonly { readonly instrument: string; readonly granularity: Granularity; readonly source: string; readonly sides: string; readonly synthetic: boolean; readonly rows: number; readonly from: string | null; readonly to: string | null }[];
}

export interface DataHole {
  readonly instrument: string;
  readonly granularity: Granularity;
  readonly from: string;
  readonly to: string;
  readonly openHours: number;
}

/** Where a backtest gets the candles of one (instrument, granularity). */
export type CandleSourceFactory = (req: { instrument: string; granularity: Granularity; from: number; to: number }) => AsyncIterable<readonly Candle[]>;

export interface BacktestOptions {
  readonly loaded: LoadedStrategy;
  readonly config: BacktestConfig;
  readonly instruments: InstrumentRegistry;
  readonly candles: CandleSourceFactory;
  /** Where tick subscriptions get their ticks (required when the strategy subscribes to ticks). */
  readonly ticks?: (req: { instrument: string; from: number; to: number }) => AsyncIterable<readonly Tick[]>;
  /**
   * Where `signals` / `calendar` subscriptions get their recorded labs events, each at the time it
   * became known (docs/labs.md). Without it such subscriptions get nothing.
   */
  readonly labs?: {
    calendar(req: { currencies: readonly string[]; from: number; to: number }): AsyncIterable<readonly CalendarEvent[]>;
    signals(req: { instruments: readonly string[]; from: number; to: number }): AsyncIterable<readonly SignalEvent[]>;
  };
  /** Whether data exists for a series (used to choose conversion instruments); default: assume it does. */
  readonly available?: (instrument: string, granularity: Granularity) => boolean;
  readonly log: StrategyLogger;
  /** Keep every transaction in memory for the result (for --json and tests). */
  readonly keepTransactions?: boolean;
  /**
   * Keep every closed trade in memory for the result's `trades` (default: as keepTransactions). The
   * summary counts them either way and the run folder's trades.csv is written as they close, so a
   * long backtest does not hold them.
   */
  readonly keepTrades?: boolean;
  /** Save a run folder here (summary.json, transactions.jsonl, equity.csv, report.txt, config.json). */
  readonly runDir?: string;
  readonly onProgress?: (fraction: number, events: number) => void;
  /** What the source knows of each series (sides, synthetic, where from); unknown sides are read from the data. */
  readonly origin?: (instrument: string, granularity: Granularity) => SeriesOrigin;
  /** Stop at the first hole in the data beyond weekends and holidays (default: list them and run on). */
  readonly strictData?: boolean;
  /** Called for each hole as the run meets it. */
  readonly onHole?: (h: DataHole) => void;
}

export interface BacktestResult {
  readonly summary: Summary;
  readonly transactions: Transaction[];
  /** Every trade closed in full, in closing order (with keepTrades; empty otherwise). */
  readonly trades: readonly ClosedTrade[];
  readonly equity: readonly EquityPoint[];
  readonly engine: EngineStats;
  readonly sim: SimStats;
  readonly intents: number;
  readonly wallMs: number;
  readonly runDir?: string;
  /** Which data and spread model produced the numbers, and what the data covered. */
  readonly data: DataReport;
}

/**
 * Applies the configured spread model ('native' leaves candles as they are). The model is centred
 * on the mid; for bid-only data (bid = ask in the catalog) the bid is kept and the ask put above
 * it, for ask-only data the other way round.
 */
export async function* withSpread(source: AsyncIterable<readonly Candle[]>, data: BacktestConfig['data'], pip: number, snap: (x: number) => number, sides = 'bid/ask'): AsyncIterable<readonly Candle[]> {
  const mode = data.spread;
  if (mode === 'native') {
    yield* source;
    return;
  }
  const byHour = mode === 'hourly' ? data.spreadPipsByHour! : undefined;
  const fixedHalf = mode === 'fixed' ? (data.spreadPips * pip) / 2 : 0;
  for await (const batch of source) {
    const out = new Array<Candle>(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const c = batch[i]!;
      const half = byHour ? (byHour[Math.floor(c.time / 3_600_000) % 24]! * pip) / 2 : fixedHalf;
      const shift = sides === 'bid' ? half : sides === 'ask' ? -half : 0;
      const o = (c.bo + c.ao) / 2 + shift, h = (c.bh + c.ah) / 2 + shift, l = (c.bl + c.al) / 2 + shift, cl = (c.bc + c.ac) / 2 + shift;
      out[i] = {
        kind: 'candle', instrument: c.instrument, granularity: c.granularity, time: c.time, at: c.at,
        bo: snap(o - half), bh: snap(h - half), bl: snap(l - half), bc: snap(cl - half),
        ao: snap(o + half), ah: snap(h + half), al: snap(l + half), ac: snap(cl + half),
        volume: c.volume, complete: c.complete,
      };
    }
    yield out;
  }
}

/**
 * Runs one backtest: the strategy's subscriptions become catalog sources merged in time order,
 * the simulated broker sees every event before the engine does, and the engine drives the
 * strategy. The same Engine, Portfolio and strategy code run live with other adapters.
 */
export async function runBacktest(o: BacktestOptions): Promise<BacktestResult> {
  const { loaded, config, instruments } = o;
  const from = parseDate(config.run.from);
  const to = parseDate(config.run.to);
  const subs = subscriptionsOf(loaded.strategy, loaded.params, loaded.name);
  const tickInstruments = subs.ticks ?? [];
  if ((subs.candles ?? []).length === 0 && tickInstruments.length === 0) {
    throw new StrategyLoadError(loaded.file, "the strategy subscribes to no candles and no ticks; a backtest replays what it subscribes to (e.g. subscribe: { candles: ['EUR_USD:H1'] })");
  }
  if (config.fill.path === 'exact' && !o.ticks) {
    throw new ConfigError('configuration', 'fill.path', '"exact" replays the ticks inside each candle: give a tick file or folder with --ticks, or use "adaptive" or "worst"');
  }
  if (tickInstruments.length > 0 && !o.ticks) {
    throw new StrategyLoadError(loaded.file, `the strategy subscribes to ticks (${tickInstruments.join(', ')}): give a tick file with --ticks <file or folder>`);
  }
  // One source per (instrument, granularity), finest first so ties resolve to the finer candle.
  const wanted = new Map<string, { instrument: string; granularity: Granularity }>();
  for (const spec of subs.candles ?? []) {
    const s = parseCandleSeries(spec, instruments);
    wanted.set(`${s.instrument}:${s.granularity}`, { instrument: s.instrument, granularity: s.granularity });
  }
  // Conversion prices: a non-USD account trading GBP_USD needs EUR_USD too. They reach the
  // simulator and the portfolio, not the strategy (it did not subscribe to them).
  // The report charts the finest subscribed series of each instrument (not the conversion prices).
  const charted = new Set<string>();
  for (const s of [...wanted.values()].sort((a, b) => granularityMs(a.granularity) - granularityMs(b.granularity))) {
    if (![...charted].some((k) => k.startsWith(`${s.instrument}:`))) charted.add(`${s.instrument}:${s.granularity}`);
  }
  const recorder = o.runDir ? new CandleRecorder() : undefined;
  const finest = wanted.size === 0 ? 'M1' : [...wanted.values()].reduce((a, b) => (granularityMs(b.granularity) < granularityMs(a.granularity) ? b : a)).granularity;
  const traded = [...new Set([...tickInstruments, ...[...wanted.values()].map((s) => s.instrument)])];
  const available = o.available ?? (() => true);
  for (const name of conversionInstruments(traded, config.account.currency, (n) => instruments.has(n), (n) => available(n, finest))) {
    wanted.set(`${name}:${finest}`, { instrument: name, granularity: finest });
  }
  const series = [...wanted.values()].sort((a, b) => granularityMs(a.granularity) - granularityMs(b.granularity));
  // Each series is watched as it streams: its coverage and holes, and (when its source does not
  // know) whether it is one-sided. One-sided data never gets a free spread.
  const watched = series.map((s) => new SeriesWatch(s.instrument, s.granularity, o.origin?.(s.instrument, s.granularity) ?? { source: 'unknown', sides: 'unknown', synthetic: false }, from, to, config.data.spread, o.strictData === true, o.onHole));
  for (const w of watched) w.requireSpreadModel();
  // Ticks first: at an instant shared with a candle close, the tick is seen first, and ticks (the
  // finest prices) drive the simulator's matching for their instrument.
  // The exact path model matches each candle on its own ticks: every traded instrument gets a tick
  // source, which reaches the simulator only (the engine delivers ticks to tick subscribers alone).
  const tickSources = config.fill.path === 'exact' ? traded : tickInstruments;
  const sources = [
    ...tickSources.map((instrument) => o.ticks!({ instrument, from, to })),
    ...series.map((s, k) => {
      const inst = instruments.get(s.instrument);
      const source = withSpread(watched[k]!.read(o.candles({ ...s, from, to })), config.data, inst.pip, (x) => inst.snap(x), watched[k]!.origin.sides);
      return recorder && charted.has(`${s.instrument}:${s.granularity}`) ? recorder.tap(source, s.instrument, s.granularity, inst.displayPrecision) : source;
    }),
    // Labs last: an item known at the instant a candle closes is seen after that candle.
    ...(o.labs && (subs.calendar ?? []).length > 0 ? [o.labs.calendar({ currencies: subs.calendar!, from, to })] : []),
    ...(o.labs && (subs.signals ?? []).length > 0 ? [o.labs.signals({ instruments: subs.signals!, from, to })] : []),
  ] as AsyncIterable<readonly MarketEvent[]>[];

  const sim = new SimBroker({
    instruments,
    currency: config.account.currency,
    initialBalance: config.account.initialBalance,
    marginRate: config.account.marginRate,
    hedging: config.account.hedging,
    fifo: config.account.fifo,
    financing: config.costs.financing,
    commissionPerMillion: config.costs.commissionPerMillion,
    path: config.fill.path,
    marketHours: config.fill.marketHours,
  });
  // The portfolio shares the simulator's ledger: the simulator folds each transaction before it
  // hands it on, so the one fold serves both (live, the portfolio folds what the stream delivers).
  const portfolio = new Portfolio({
    currency: config.account.currency,
    instruments,
    initialBalance: config.account.initialBalance,
    ledger: sim.ledger,
    shared: true,
    keepClosedTrades: o.keepTrades ?? o.keepTransactions === true,
  });

  const transactions: Transaction[] = [];
  let txOut: LineFile | undefined;
  let intentsOut: LineFile | undefined;
  let tradesOut: LineFile | undefined;
  if (o.runDir) {
    makeRunDir(o.runDir);
    txOut = new LineFile(join(o.runDir, 'transactions.jsonl'));
    intentsOut = new LineFile(join(o.runDir, 'intents.jsonl'));
    const out = (tradesOut = new LineFile(join(o.runDir, 'trades.csv')));
    out.line(TRADES_CSV_HEADER);
    portfolio.onClosedTrade = (t) => out.line(tradeCsvRow(t));
  }
  // A listener only when someone keeps or writes the transactions (one call less per transaction).
  const stopKeeping = o.keepTransactions || txOut
    ? sim.listen((tx) => {
        if (o.keepTransactions) transactions.push(tx);
        txOut?.line(JSON.stringify(tx));
      })
    : undefined;
  let intents = 0;
  const engine = new Engine({
    strategy: loaded.strategy,
    name: loaded.name,
    params: loaded.params,
    execution: sim,
    portfolio,
    instruments,
    clock: new VirtualClock(from),
    log: o.log,
    marginRate: Number(config.account.marginRate),
    onIntent: (intent: OrderIntent) => {
      intents++;
      intentsOut?.line(JSON.stringify({ at: sim.now, intent }));
    },
    onProgress: o.onProgress ? (at, n) => o.onProgress!(Math.min(1, Math.max(0, (at - from) / (to - from))), n) : undefined,
  });

  const t0 = performance.now();
  // The engine folds transactions from the start, so the account's CREATE and deposit reach the
  // portfolio. Then each merged batch goes through one plain loop: the simulator sees every event
  // before the engine (fills land before the strategy sees the price), with no operator per event.
  const detach = engine.attach();
  const simOnEvent = (ev: MarketEvent): void => sim.onEvent(ev);
  try {
    sim.start(from);
    for await (const batch of mergeBatches(sources)) engine.feed(batch, simOnEvent);
    engine.stop();
  } finally {
    detach();
    stopKeeping?.();
    try {
      txOut?.close();
    } finally {
      try {
        intentsOut?.close();
      } finally {
        tradesOut?.close();
      }
    }
  }
  const wallMs = performance.now() - t0;
  const summary = summarize(portfolio, {
    ambiguousCandles: sim.stats.ambiguousCandles,
    ambiguousPL: toUnits(sim.stats.ambiguousPL),
    marketHalted: sim.stats.halted,
    from,
    to,
  });
  const data = dataReport(watched, subs.candles?.length ? parseCandleSeries(subs.candles[0]!, instruments) : undefined, config.data);
  if (o.runDir) {
    writeFileSync(join(o.runDir, 'summary.json'), `${JSON.stringify({ strategy: loaded.name, params: loaded.params, summary, data, engine: engine.stats, wallMs }, null, 2)}\n`);
    writeFileSync(join(o.runDir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
    const csv = ['time,balance,nav', ...portfolio.equity.map((e) => `${new Date(e.time).toISOString()},${e.balance},${e.nav}`)];
    writeFileSync(join(o.runDir, 'equity.csv'), `${csv.join('\n')}\n`);
    recorder?.write(o.runDir);
    writeRunReport(o.runDir);
  }
  return { summary, transactions, trades: portfolio.closedTrades, equity: portfolio.equity, engine: engine.stats, sim: sim.stats, intents, wallMs, data, ...(o.runDir ? { runDir: resolve(o.runDir) } : {}) };
}

const TRADES_CSV_HEADER = 'id,instrument,units,openTime,closeTime,openPrice,closePrice,realizedPL,financing';

/** One closed trade as a trades.csv row (times in ISO 8601, money in the account currency). */
function tradeCsvRow(t: ClosedTrade): string {
  return `${t.id},${t.instrument},${t.units},${formatIsoMs(t.openTime)},${formatIsoMs(t.closeTime)},${t.openPrice},${t.closePrice},${t.realizedPL},${t.financing}`;
}

/** The closed trades as CSV, as the run folder's trades.csv holds them (one row per trade). */
export function tradesCsv(trades: readonly ClosedTrade[]): string {
  return `${[TRADES_CSV_HEADER, ...trades.map(tradeCsvRow)].join('\n')}\n`;
}
