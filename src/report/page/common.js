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
  /**
   * The IANA zone the page says times in: UTC unless the page sets another (a run's
   * report.timeZone: src/report/html.ts sets it right after this script).
   */
  zone: 'UTC',
  /** A time (epoch seconds) for people, in the page's zone (human-time.cjs, as report.txt writes it). */
  date(sec) {
    return humanTime(sec * 1000, fx.zone);
  },
  /** How the page names its zone after a period: "UTC", or "(America/New_York)" beside zoned times that carry their abbreviation. */
  zoneWord() {
    return fx.zone === 'UTC' ? 'UTC' : `(${fx.zone})`;
  },
  /**
   * A Lightweight Charts chart whose time axis and crosshair say the page's zone: the crosshair
   * label by fx.date, the axis labels by humanTimeTick, placed where the zone's days, months and
   * hours begin (a zone other than UTC gets a time scale that weighs its points on the zone's wall
   * clock; LC's own weighs them in UTC). `options` as LC.createChart takes them.
   */
  chart(box, options) {
    const LC = window.LightweightCharts;
    const o = Object.assign({}, options);
    o.localization = Object.assign({ dateFormat: "dd MMM 'yy" }, o.localization, {
      timeFormatter: (t) => fx.date(t),
    });
    o.timeScale = Object.assign({}, o.timeScale, {
      tickMarkFormatter: (t, type) => humanTimeTick(t * 1000, type, fx.zone),
    });
    if (fx.zone === 'UTC') return LC.createChart(box, o);
    return LC.createChartEx(box, new (zonedTimeScale(LC, fx.zone))(), o);
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

/**
 * Lightweight Charts' time scale with its tick marks weighed on a zone's wall clock: a point that
 * starts a year, a month or a day in the zone weighs as one (so the axis puts "Mar" where March
 * begins in New York, not at 19:00 the day before), and the hours divide on the zone's clock. The
 * same rule as LC's own fillWeightsForPoints (lightweight-charts 5), which reads the UTC clock.
 */
function zonedTimeScale(LC, zone) {
  const HOUR = 3600e3;
  // Intraday weights of LC's TickMarkWeight: a boundary of each divisor (ms) crossed.
  const DIVISORS = [
    [12 * HOUR, 33],
    [6 * HOUR, 32],
    [3 * HOUR, 31],
    [HOUR, 30],
    [30 * 60e3, 22],
    [5 * 60e3, 21],
    [60e3, 20],
    [1e3, 10],
  ];
  // The zone's offset (ms) by UTC hour: zones change their offset on a whole hour of UTC.
  const offsets = new Map();
  const wall = (sec) => {
    const ms = sec * 1000;
    const h = Math.floor(ms / HOUR);
    let off = offsets.get(h);
    if (off === undefined) {
      const p = humanTimeParts(h * HOUR, zone);
      off = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - h * HOUR;
      offsets.set(h, off);
    }
    return new Date(ms + off);
  };
  const weight = (cur, prev) => {
    if (cur.getUTCFullYear() !== prev.getUTCFullYear()) return 70;
    if (cur.getUTCMonth() !== prev.getUTCMonth()) return 60;
    if (cur.getUTCDate() !== prev.getUTCDate()) return 50;
    for (const [d, w] of DIVISORS)
      if (Math.floor(prev.getTime() / d) !== Math.floor(cur.getTime() / d)) return w;
    return 0;
  };
  return class extends LC.defaultHorzScaleBehavior() {
    fillWeightsForPoints(points, start) {
      if (points.length === 0) return;
      const sec = (p) => (typeof p.originalTime === 'number' ? p.originalTime : this.key(p.time));
      let prev = start > 0 ? wall(sec(points[start - 1])) : null;
      for (let i = start; i < points.length; i++) {
        const cur = wall(sec(points[i]));
        if (prev !== null) points[i].timeWeight = weight(cur, prev);
        prev = cur;
      }
      if (start === 0 && points.length > 1) {
        // The first point's weight as LC guesses it: against a point one average step before it.
        const first = sec(points[0]);
        const step = Math.ceil((sec(points[points.length - 1]) - first) / (points.length - 1));
        points[0].timeWeight = weight(wall(first), wall(first - step));
      }
    }
  };
}

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
