// Shared by every fxflow report page (plain browser script, no imports: it is inlined in the HTML).
'use strict';

/**
 * Decodes a series written by src/report/candle-codec.ts: returns { t, o, h, l, c } with t in epoch
 * seconds and prices as numbers.
 */
function decodeCandles(s) {
  const bin = atob(s.data);
  const n = s.count;
  const t = new Float64Array(n),
    o = new Float64Array(n),
    h = new Float64Array(n),
    l = new Float64Array(n),
    c = new Float64Array(n);
  const scale = 2 * Math.pow(10, s.precision);
  let p = 0;
  const next = () => {
    let z = 0,
      mul = 1,
      b;
    do {
      b = bin.charCodeAt(p++);
      z += (b & 127) * mul;
      mul *= 128;
    } while (b >= 128);
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  };
  let prevT = 0,
    prevC = 0;
  for (let i = 0; i < n; i++) {
    const ti = prevT + next();
    const oi = prevC + next();
    const up = next(),
      down = next(),
      body = next();
    const ci = oi + body;
    t[i] = ti;
    o[i] = oi / scale;
    c[i] = ci / scale;
    h[i] = (Math.max(oi, ci) + up) / scale;
    l[i] = (Math.min(oi, ci) - down) / scale;
    prevT = ti;
    prevC = ci;
  }
  if (p !== bin.length)
    throw new Error(`candles of ${s.instrument}: ${bin.length - p} bytes left after ${n} candles`);
  return { t, o, h, l, c };
}

const fx = {
  money(x, ccy) {
    if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
    const s = Math.abs(x).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    // No "-0.00": a loss that rounds to nothing is shown as nothing.
    return `${Math.round(x * 100) < 0 ? '-' : ''}${s}${ccy ? ' ' + ccy : ''}`;
  },
  num(x, d) {
    if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
    return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  },
  pct(x) {
    if (x === null || x === undefined || !Number.isFinite(x)) return 'n/a';
    // No "-0.00%": a change that rounds to nothing is 0.00%.
    const r = Math.round(x * 100) / 100;
    return `${(r === 0 ? 0 : r).toFixed(2)}%`;
  },
  date(sec) {
    return new Date(sec * 1000).toISOString().slice(0, 16).replace('T', ' ');
  },
  duration(hours) {
    if (hours === null || hours === undefined || !Number.isFinite(hours)) return 'n/a';
    if (hours < 1) return `${Math.round(hours * 60)} min`;
    if (hours < 48) return `${hours.toFixed(1)} h`;
    return `${(hours / 24).toFixed(1)} d`;
  },
  el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    if (attrs)
      for (const [k, v] of Object.entries(attrs)) {
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = v;
        else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v);
      }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  },
  /**
   * A figure's name as a reader says it (sweep and walk-forward pages, whose data name figures by
   * their summary.json keys): `cagrPct` → "CAGR %", an unknown `someField` → "Some field".
   */
  label(key) {
    const known = {
      netPL: 'Net P/L',
      returnPct: 'Return %',
      cagrPct: 'CAGR %',
      cagr: 'CAGR',
      sharpe: 'Sharpe',
      sortino: 'Sortino',
      calmar: 'Calmar',
      profitFactor: 'Profit factor',
      maxDrawdownPct: 'Max drawdown %',
      maxDrawdown: 'Max drawdown',
      trades: 'Trades',
      winRate: 'Win rate %',
      finalNAV: 'Final NAV',
      expectancy: 'Expectancy',
      marketHalted: 'Market-halted orders',
    };
    if (known[key]) return known[key];
    const words = String(key)
      .replace(/Pct$/, ' %')
      .replace(/PL/g, ' P/L')
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/_/g, ' ')
      .trim()
      .toLowerCase()
      .replace(/p\/l/g, 'P/L');
    return words.charAt(0).toUpperCase() + words.slice(1);
  },
  /** A v20 reason or type in words: TAKE_PROFIT_ORDER → "take profit", MARKET_HALTED → "market halted". */
  reason(r) {
    return String(r || '')
      .replace(/_ORDER$/, '')
      .replace(/_/g, ' ')
      .toLowerCase();
  },
  /** Formats a metric by its kind. */
  metric(m, ccy) {
    if (m.value === null && m.na) return m.na;
    if (m.kind === 'days') return m.value === null ? 'n/a' : `${m.value.toFixed(1)} d`;
    switch (m.kind) {
      case 'money':
        return fx.money(m.value, ccy);
      case 'pct':
        return fx.pct(m.value);
      case 'hours':
        return fx.duration(m.value);
      case 'int':
        return m.value === null ? 'n/a' : String(m.value);
      case 'text':
        return String(m.value);
      default:
        return fx.num(m.value, 2);
    }
  },
};

/** The data block of the page (JSON in a script tag). */
function pageData() {
  return JSON.parse(document.getElementById('fxflow-data').textContent);
}

// A script error must not leave a blank page: say what failed, where the reader looks.
if (typeof window !== 'undefined')
  window.addEventListener('error', (e) => {
    const app = document.getElementById('app');
    if (!app) return;
    const p = document.createElement('p');
    p.className = 'warn';
    p.textContent = `This page failed to draw part of the report: ${e.message}. The run folder's files (summary.json, trades.csv, transactions.jsonl) hold the figures.`;
    app.prepend(p);
  });
