import type { EquitySeries } from './rows.ts';

/** One figure of a report: its value, how to show it, and the one-line definition shown on hover. */
export interface Metric {
  readonly key: string;
  readonly label: string;
  readonly value: number | string | null;
  readonly kind: 'money' | 'pct' | 'ratio' | 'int' | 'hours' | 'days' | 'text';
  readonly def: string;
  /** Higher is better (compare highlights the best run), lower is better, or neither. */
  readonly better?: 'high' | 'low';
  /** What the page shows when the value is null, when it is more than "n/a" (e.g. why it is not shown). */
  readonly na?: string;
}

/** A closed (or still open) trade as a report shows it. */
export interface TradeRow {
  readonly id: string;
  readonly instrument: string;
  /** Signed initial units (negative: short). */
  readonly units: number;
  readonly openTime: number;
  /** Epoch seconds; null while open at the end. */
  readonly closeTime: number | null;
  readonly openPrice: number;
  readonly closePrice: number | null;
  readonly pl: number;
  readonly financing: number;
  readonly spreadCost: number;
  readonly commission: number;
  readonly closeReason: string;
  /** From trades.csv (absent in run folders from before them): MAE, MFE (account currency) and run-up (% of entry). */
  readonly mae?: number | null;
  readonly mfe?: number | null;
  readonly runUp?: number | null;
}

/** One drawdown: from a NAV peak to its trough, and when NAV got back above the peak (null: not yet). */
export interface Drawdown {
  readonly start: number;
  readonly trough: number;
  readonly end: number | null;
  readonly depth: number;
  readonly depthPct: number;
  readonly days: number;
}

const DAY = 86_400;

/** The drawdown episodes of a NAV curve, deepest first. */
export function drawdowns(e: EquitySeries): Drawdown[] {
  const out: Drawdown[] = [];
  let peak = -Infinity,
    peakT = 0,
    trough = Infinity,
    troughT = 0,
    inDd = false;
  const close = (end: number | null, lastT: number): void => {
    out.push({
      start: peakT,
      trough: troughT,
      end,
      depth: peak - trough,
      depthPct: peak > 0 ? ((peak - trough) / peak) * 100 : 0,
      days: ((end ?? lastT) - peakT) / DAY,
    });
  };
  for (let i = 0; i < e.nav.length; i++) {
    const v = e.nav[i]!,
      t = e.t[i]!;
    if (v >= peak) {
      if (inDd) close(t, t);
      inDd = false;
      peak = v;
      peakT = t;
      trough = v;
    } else {
      inDd = true;
      if (v < trough) {
        trough = v;
        troughT = t;
      }
    }
  }
  if (inDd) close(null, e.t[e.t.length - 1]!);
  return out.sort((a, b) => b.depth - a.depth);
}

/** P/L per calendar month (UTC) from the NAV curve: each month's last NAV less the month before's. */
export function monthlyPL(
  e: EquitySeries,
  initial: number,
): { year: number; month: number; pl: number; pct: number }[] {
  const out: { year: number; month: number; pl: number; pct: number }[] = [];
  let prev = initial;
  // A point is the state at its time, the end of what came before it: a mark at midnight (a run's
  // end, `to`, is exclusive) closes the day before, so a run to 2025-01-01T00:00Z has no 2025 month.
  const day = (t: number): Date => new Date((t - 1) * 1000);
  for (let i = 0; i < e.t.length; i++) {
    const d = day(e.t[i]!);
    const next = i + 1 < e.t.length ? day(e.t[i + 1]!) : undefined;
    if (next && next.getUTCFullYear() === d.getUTCFullYear() && next.getUTCMonth() === d.getUTCMonth())
      continue;
    const nav = e.nav[i]!;
    out.push({
      year: d.getUTCFullYear(),
      month: d.getUTCMonth(),
      pl: nav - prev,
      pct: prev !== 0 ? ((nav - prev) / prev) * 100 : 0,
    });
    prev = nav;
  }
  return out;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The closed trades as the figures read them, in closing order: rows, or the fold's columns
 * (trade-columns.ts TradeView.closedTrades), so a run's figures need no object per trade.
 */
export interface ClosedTrades {
  readonly count: number;
  pl(i: number): number;
  openTime(i: number): number;
  closeTime(i: number): number;
  id(i: number): string;
  instrument(i: number): string;
}

/** Rows' closed trades as ClosedTrades. */
export function closedRows(trades: readonly TradeRow[]): ClosedTrades {
  const closed = trades.filter((t) => t.closeTime !== null);
  return {
    count: closed.length,
    pl: (i) => closed[i]!.pl,
    openTime: (i) => closed[i]!.openTime,
    closeTime: (i) => closed[i]!.closeTime!,
    id: (i) => closed[i]!.id,
    instrument: (i) => closed[i]!.instrument,
  };
}

/** The figures report.txt does not have, from the equity curve and the trades (rows, or only the closed ones). */
export function extendedMetrics(
  e: EquitySeries | undefined,
  trades: readonly TradeRow[] | ClosedTrades,
  initial: number,
  maxDrawdownPct: number | null,
  periodSeconds?: number,
  barSeconds?: number,
): Metric[] {
  const closed = 'count' in trades ? trades : closedRows(trades);
  const pls: number[] = [];
  for (let i = 0; i < closed.count; i++) pls.push(closed.pl(i));
  const out: Metric[] = [];
  let cagr: number | null = null;
  let sortino: number | null = null;
  let ddDays: number | null = null;
  if (e && e.t.length >= 2 && initial > 0) {
    const years = (e.t[e.t.length - 1]! - e.t[0]!) / (365.25 * DAY);
    const final = e.nav[e.nav.length - 1]!;
    // Annualised only over a year or more (the run's period when known, else the curve's span).
    const long = (periodSeconds ?? e.t[e.t.length - 1]! - e.t[0]!) >= YEAR_SECONDS;
    if (long && years > 0 && final > 0) cagr = ((final / initial) ** (1 / years) - 1) * 100;
    const r: number[] = [];
    for (let i = 1; i < e.nav.length; i++) if (e.nav[i - 1]! !== 0) r.push(e.nav[i]! / e.nav[i - 1]! - 1);
    if (r.length >= 2) {
      const down = Math.sqrt(r.reduce((a, x) => a + Math.min(x, 0) ** 2, 0) / r.length);
      if (down > 0) sortino = (mean(r) / down) * Math.sqrt(252);
    }
    const dds = drawdowns(e);
    ddDays = dds.reduce((a, d) => Math.max(a, d.days), 0);
  }
  const runUp = maxRunUp(e);
  const calmar =
    cagr !== null && maxDrawdownPct !== null && maxDrawdownPct > 0 ? cagr / maxDrawdownPct : null;
  const yearNote =
    cagr === null && e && e.t.length >= 2
      ? ' Shown for runs of a year or more: over a shorter run it extrapolates a few weeks to a year.'
      : '';
  let streak = 0,
    longest = 0;
  for (const pl of pls) {
    streak = pl < 0 ? streak + 1 : 0;
    longest = Math.max(longest, streak);
  }
  const expectancy = pls.length > 0 ? mean(pls) : null;
  let sqn: number | null = null;
  if (pls.length >= 2) {
    const m = mean(pls);
    const sd = Math.sqrt(pls.reduce((a, x) => a + (x - m) ** 2, 0) / (pls.length - 1));
    if (sd > 0) sqn = (Math.sqrt(pls.length) * m) / sd;
  }
  const held: number[] = [];
  for (let i = 0; i < closed.count; i++) held.push((closed.closeTime(i) - closed.openTime(i)) / 3600);
  // The first of the largest and of the smallest P/L, as a reduce over the rows finds them.
  let bestAt = -1,
    worstAt = -1;
  for (let i = 0; i < closed.count; i++) {
    if (bestAt < 0 || pls[i]! > pls[bestAt]!) bestAt = i;
    if (worstAt < 0 || pls[i]! < pls[worstAt]!) worstAt = i;
  }
  const best =
    bestAt < 0
      ? undefined
      : { pl: pls[bestAt]!, id: closed.id(bestAt), instrument: closed.instrument(bestAt) };
  const worst =
    worstAt < 0
      ? undefined
      : { pl: pls[worstAt]!, id: closed.id(worstAt), instrument: closed.instrument(worstAt) };
  out.push(
    {
      key: 'cagr',
      label: 'CAGR',
      value: cagr,
      kind: 'pct',
      better: 'high',
      def: `Compound annual growth rate: (final NAV / initial balance)^(1 / years) − 1, over the equity curve\'s span.${yearNote}`,
      ...(yearNote ? { na: 'needs a year' } : {}),
    },
    {
      key: 'sortino',
      label: 'Sortino (daily, √252)',
      value: sortino,
      kind: 'ratio',
      better: 'high',
      def: 'Mean daily NAV return over the downside deviation (root mean square of the negative daily returns), annualised with √252; risk-free rate 0',
    },
    {
      key: 'calmar',
      label: 'Calmar',
      value: calmar,
      kind: 'ratio',
      better: 'high',
      def: `CAGR divided by the maximum drawdown in percent.${yearNote}`,
      ...(yearNote ? { na: 'needs a year' } : {}),
    },
    {
      key: 'maxDrawdownDays',
      label: 'Max drawdown duration',
      value: ddDays,
      kind: 'days',
      better: 'low',
      def: 'Longest time from a NAV peak until NAV is back above it (or until the end, if it never is), in days on the daily curve',
    },
    {
      key: 'expectancy',
      label: 'Expectancy',
      value: expectancy,
      kind: 'money',
      better: 'high',
      def: 'Average realized P/L per closed trade (win rate × average win + loss rate × average loss)',
    },
    {
      key: 'sqn',
      label: 'SQN',
      value: sqn,
      kind: 'ratio',
      better: 'high',
      def: "Van Tharp's system quality number: √(closed trades) × mean trade P/L / standard deviation of trade P/L",
    },
    {
      key: 'averageTradeHours',
      label: 'Average trade duration',
      value: held.length > 0 ? mean(held) : null,
      kind: 'hours',
      def: "Mean time from a trade's opening fill to its closing fill, closed trades",
    },
    {
      key: 'maxRunUp',
      label: 'Max run-up',
      value: runUp?.amount ?? null,
      kind: 'money',
      def: 'Largest rise of NAV from a trough to a later high, on the daily equity curve (the mirror of the max drawdown)',
    },
    {
      key: 'maxRunUpPct',
      label: 'Max run-up %',
      value: runUp?.pct ?? null,
      kind: 'pct',
      def: 'That rise as a percentage of its trough',
    },
    {
      key: 'averageBarsInTrade',
      label: 'Average bars in trade',
      value:
        barSeconds !== undefined && held.length > 0
          ? Math.round(((mean(held) * 3600) / barSeconds) * 100) / 100
          : null,
      kind: 'ratio',
      def: "Mean holding time of the closed trades in bars of the strategy's charted candles",
    },
    {
      key: 'longestLosingStreak',
      label: 'Longest losing streak',
      value: longest,
      kind: 'int',
      better: 'low',
      def: 'Most consecutive closed trades (in closing order) with a negative realized P/L',
    },
    {
      key: 'bestTrade',
      label: 'Best trade',
      value: best?.pl ?? null,
      kind: 'money',
      better: 'high',
      def: `Largest realized P/L of one closed trade${best ? ` (trade ${best.id}, ${best.instrument})` : ''}`,
    },
    {
      key: 'worstTrade',
      label: 'Worst trade',
      value: worst?.pl ?? null,
      kind: 'money',
      better: 'high',
      def: `Smallest realized P/L of one closed trade${worst ? ` (trade ${worst.id}, ${worst.instrument})` : ''}`,
    },
  );
  return out;
}

/** One figure of the All / Long / Short table: its value over all closed trades, the long ones and the short ones. */
export interface SideFigure {
  readonly key: string;
  readonly label: string;
  readonly kind: Metric['kind'];
  readonly def: string;
  readonly all: number | null;
  readonly long: number | null;
  readonly short: number | null;
}

/**
 * The closed trades' figures for all of them, the long ones and the short ones (TradingView's
 * "Performance summary" columns). Net P/L is a trade's realized P/L + financing − commission, as
 * summary.json's long and short groups count it. `barSeconds`: the charted candles' bar, for bars in trade.
 */
export function sideFigures(rows: readonly TradeRow[], barSeconds?: number): SideFigure[] {
  type Acc = {
    n: number;
    wins: number;
    losses: number;
    gp: number;
    gl: number;
    net: number;
    best: number;
    worst: number;
    held: number;
  };
  const acc = (): Acc => ({
    n: 0,
    wins: 0,
    losses: 0,
    gp: 0,
    gl: 0,
    net: 0,
    best: -Infinity,
    worst: Infinity,
    held: 0,
  });
  const all = acc(),
    long = acc(),
    short = acc();
  for (const t of rows) {
    if (t.closeTime === null) continue;
    for (const a of [all, t.units > 0 ? long : short]) {
      a.n++;
      // As summary.json counts them: a trade that made nothing is not a win, so it is a loss.
      if (t.pl > 0) {
        a.wins++;
        a.gp += t.pl;
      } else {
        a.losses++;
        a.gl += t.pl;
      }
      a.net += t.pl + t.financing - t.commission;
      a.best = Math.max(a.best, t.pl);
      a.worst = Math.min(a.worst, t.pl);
      a.held += t.closeTime - t.openTime;
    }
  }
  const r = (x: number, d = 4): number => Math.round(x * 10 ** d) / 10 ** d;
  const fig = (
    key: string,
    label: string,
    kind: Metric['kind'],
    def: string,
    f: (a: Acc) => number | null,
  ): SideFigure => ({ key, label, kind, def, all: f(all), long: f(long), short: f(short) });
  const some =
    (f: (a: Acc) => number) =>
    (a: Acc): number | null =>
      a.n === 0 ? null : f(a);
  return [
    fig('netPL', 'Net P/L', 'money', 'Realized P/L + financing − commission of the closed trades', (a) =>
      r(a.net),
    ),
    fig('grossProfit', 'Gross profit', 'money', "Sum of the winning trades' realized P/L", (a) => r(a.gp)),
    fig('grossLoss', 'Gross loss', 'money', "Sum of the losing trades' realized P/L", (a) => r(a.gl)),
    fig('profitFactor', 'Profit factor', 'ratio', 'Gross profit / |gross loss| (n/a with no loss)', (a) =>
      a.gl === 0 ? null : r(a.gp / -a.gl),
    ),
    fig('trades', 'Trades (closed)', 'int', 'Trades closed in full', (a) => a.n),
    fig('wins', 'Won', 'int', 'Closed trades with a positive realized P/L', (a) => a.wins),
    fig('losses', 'Lost', 'int', 'Closed trades with a realized P/L of zero or less', (a) => a.losses),
    fig(
      'winRate',
      'Win rate',
      'pct',
      'Won / closed trades',
      some((a) => r((a.wins / a.n) * 100, 2)),
    ),
    fig(
      'averageTrade',
      'Average trade',
      'money',
      'Net P/L / closed trades',
      some((a) => r(a.net / a.n)),
    ),
    fig('averageWin', 'Average win', 'money', 'Gross profit / won trades', (a) =>
      a.wins === 0 ? null : r(a.gp / a.wins),
    ),
    fig('averageLoss', 'Average loss', 'money', 'Gross loss / lost trades', (a) =>
      a.losses === 0 ? null : r(a.gl / a.losses),
    ),
    fig('winLossRatio', 'Ratio average win / average loss', 'ratio', 'Average win / |average loss|', (a) =>
      a.wins === 0 || a.losses === 0 ? null : r(a.gp / a.wins / (-a.gl / a.losses)),
    ),
    fig(
      'largestWin',
      'Largest win',
      'money',
      'Largest realized P/L of one trade',
      some((a) => r(a.best)),
    ),
    fig(
      'largestLoss',
      'Largest loss',
      'money',
      'Smallest realized P/L of one trade',
      some((a) => r(a.worst)),
    ),
    fig(
      'averageHoldingHours',
      'Average holding',
      'hours',
      'Mean time from opening to closing fill',
      some((a) => r(a.held / a.n / 3600, 2)),
    ),
    fig(
      'averageBarsInTrade',
      'Average bars in trade',
      'ratio',
      'Mean holding in bars of the charted candles',
      (a) => (a.n === 0 || barSeconds === undefined ? null : r(a.held / a.n / barSeconds, 2)),
    ),
  ];
}

/**
 * The largest rise of NAV from a trough to a later point (a scan keeping the lowest NAV so far), in
 * money and in % of that trough; undefined without a curve.
 */
export function maxRunUp(e: EquitySeries | undefined): { amount: number; pct: number | null } | undefined {
  if (!e || e.nav.length === 0) return undefined;
  let low = e.nav[0]!,
    amount = 0,
    pct: number | null = 0;
  for (const nav of e.nav) {
    if (nav < low) low = nav;
    if (nav - low > amount) {
      amount = nav - low;
      pct = low > 0 ? (amount / low) * 100 : null;
    }
  }
  return {
    amount: Math.round(amount * 100) / 100,
    pct: pct === null ? null : Math.round(pct * 10_000) / 10_000,
  };
}

/** The report.txt figures with their definitions, in report.txt's order; unknown fields follow as they are. */
export const SUMMARY_METRICS: readonly {
  key: string;
  label: string;
  kind: Metric['kind'];
  def: string;
  better?: 'high' | 'low';
}[] = [
  {
    key: 'initialBalance',
    label: 'Initial balance',
    kind: 'money',
    def: 'Account balance at the start (the deposit)',
  },
  {
    key: 'finalBalance',
    label: 'Final balance',
    kind: 'money',
    better: 'high',
    def: 'Balance at the end: deposit + realized P/L + financing − commission',
  },
  {
    key: 'finalNAV',
    label: 'Final NAV',
    kind: 'money',
    better: 'high',
    def: 'Net asset value at the end: balance + unrealized P/L of the trades still open',
  },
  { key: 'netPL', label: 'Net P/L', kind: 'money', better: 'high', def: 'Final NAV − initial balance' },
  {
    key: 'returnPct',
    label: 'Return',
    kind: 'pct',
    better: 'high',
    def: 'Net P/L as a percentage of the initial balance',
  },
  {
    key: 'realizedPL',
    label: 'Realized P/L',
    kind: 'money',
    better: 'high',
    def: 'P/L of the closed trades and reductions (before financing and commission)',
  },
  {
    key: 'unrealizedPL',
    label: 'Unrealized P/L',
    kind: 'money',
    def: 'P/L of the trades still open at the end, on the closing side of the last price',
  },
  { key: 'trades', label: 'Trades (closed)', kind: 'int', def: 'Trades closed in full during the run' },
  { key: 'openTrades', label: 'Open at end', kind: 'int', def: 'Trades still open when the run ended' },
  { key: 'wins', label: 'Won', kind: 'int', def: 'Closed trades with a positive realized P/L' },
  {
    key: 'losses',
    label: 'Lost',
    kind: 'int',
    def: 'Closed trades with a realized P/L of zero or less (a trade that made nothing is not a win)',
  },
  { key: 'winRate', label: 'Win rate', kind: 'pct', better: 'high', def: 'Won / closed trades' },
  {
    key: 'grossProfit',
    label: 'Gross profit',
    kind: 'money',
    def: "Sum of the winning trades' realized P/L",
  },
  { key: 'grossLoss', label: 'Gross loss', kind: 'money', def: "Sum of the losing trades' realized P/L" },
  {
    key: 'profitFactor',
    label: 'Profit factor',
    kind: 'ratio',
    better: 'high',
    def: 'Gross profit / |gross loss| (n/a with no loss)',
  },
  {
    key: 'averageWin',
    label: 'Average win',
    kind: 'money',
    better: 'high',
    def: 'Gross profit / won trades',
  },
  {
    key: 'averageLoss',
    label: 'Average loss',
    kind: 'money',
    better: 'high',
    def: 'Gross loss / lost trades',
  },
  { key: 'largestWin', label: 'Largest win', kind: 'money', def: 'Largest realized P/L of one trade' },
  { key: 'largestLoss', label: 'Largest loss', kind: 'money', def: 'Smallest realized P/L of one trade' },
  {
    key: 'averageHoldingHours',
    label: 'Average holding',
    kind: 'hours',
    def: 'Mean holding time of the closed trades',
  },
  {
    key: 'maxDrawdown',
    label: 'Max drawdown',
    kind: 'money',
    better: 'low',
    def: 'Largest fall of NAV from a peak, marked on every price',
  },
  {
    key: 'maxDrawdownPct',
    label: 'Max drawdown %',
    kind: 'pct',
    better: 'low',
    def: 'Largest fall of NAV from a peak, as a percentage of that peak',
  },
  {
    key: 'sharpe',
    label: 'Sharpe (daily, √252)',
    kind: 'ratio',
    better: 'high',
    def: 'Mean daily NAV return over its standard deviation, annualised with √252; risk-free rate 0',
  },
  {
    key: 'exposurePct',
    label: 'Exposure',
    kind: 'pct',
    def: "Share of the run's time with at least one trade open",
  },
  {
    key: 'spreadCost',
    label: 'Cost: spread',
    kind: 'money',
    better: 'low',
    def: 'Half-spread paid on every fill (v20 halfSpreadCost), account currency',
  },
  {
    key: 'financing',
    label: 'Cost: financing',
    kind: 'money',
    better: 'high',
    def: 'Daily financing charged or paid at 17:00 New York (negative: paid by the account)',
  },
  {
    key: 'commission',
    label: 'Cost: commission',
    kind: 'money',
    better: 'low',
    def: 'Commission charged on fills',
  },
  {
    key: 'ambiguousCandles',
    label: 'Path-ambiguous candles',
    kind: 'int',
    better: 'low',
    def: 'Candles where both a take profit and a stop loss were in range, so the intra-candle path model decided the outcome',
  },
  {
    key: 'ambiguousPL',
    label: 'P/L resting on ambiguity',
    kind: 'money',
    def: 'Realized P/L of the exits decided on path-ambiguous candles: how much of the result rests on the path assumption',
  },
  {
    key: 'riskRefusals',
    label: 'Risk refusals',
    kind: 'int',
    better: 'low',
    def: 'Intents the risk gate refused (never sent): the same limits as fxflow run (risk.*, --max-daily-loss...); by limit under risk.refused',
  },
  {
    key: 'marketHalted',
    label: 'Market-halted orders',
    kind: 'int',
    better: 'low',
    def: 'Orders cancelled MARKET_HALTED: submitted while their market was closed (fill.marketHours false for data that trades around the clock)',
  },
];

/**
 * A field name as words: `marketHalted` → "market halted", `exposurePct` → "exposure %". For the
 * fields a page does not know: no raw key reaches a reader.
 */
export function humanize(key: string): string {
  const words = key
    .replace(/Pct$/, ' %')
    .replace(/PL/g, ' P/L')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/p\/l/g, 'P/L');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A year: CAGR and Calmar annualise, and over less than this they extrapolate a few weeks to a year. */
export const YEAR_SECONDS = 365 * DAY;

/** The summary's figures as metrics (known ones defined; extra numeric fields kept with their key as label). */
export function summaryMetrics(summary: Record<string, unknown>): Metric[] {
  const out: Metric[] = [];
  const known = new Set(SUMMARY_METRICS.map((m) => m.key));
  for (const m of SUMMARY_METRICS) {
    if (!(m.key in summary)) continue;
    const v = summary[m.key];
    out.push({ ...m, value: typeof v === 'number' ? v : v === null ? null : String(v) });
  }
  for (const [k, v] of Object.entries(summary)) {
    if (known.has(k) || k === 'currency' || k === 'from' || k === 'to') continue;
    if (typeof v === 'number')
      out.push({
        key: k,
        label: humanize(k),
        value: v,
        kind: Number.isInteger(v) ? 'int' : 'ratio',
        def: `summary.json field "${k}" (no definition known to this report)`,
      });
  }
  return out;
}
