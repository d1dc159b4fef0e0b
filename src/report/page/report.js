// The run report page: reads the JSON data block and draws everything (plain browser script).
'use strict';
(function () {
  const state = (window.fxReport = {
    ready: false,
    charts: {},
    markerCount: 0,
    fills: 0,
    lastNav: null,
    errors: [],
  });
  const T0 = performance.now();
  const timings = (state.timings = { start: Math.round(T0) });
  const mark = (k) => (timings[k] = Math.round(performance.now() - T0));
  const D = unpack(pageData());
  mark('parse');
  const LC = window.LightweightCharts;
  const { el } = fx;
  const ccy = D.currency;
  const app = document.getElementById('app');
  app.textContent = '';

  /** Rows from the packed columns (src/report/pack.ts; unpackRun there is the same in TypeScript). */
  function unpack(p) {
    if (!p.packed) return p;
    const { names, trades: T, fills: F, levels: L } = p.packed;
    const r6 = (x) => Math.round(x * 1e6) / 1e6;
    const undelta = (xs) => {
      const out = new Array(xs.length);
      let acc = 0;
      for (let i = 0; i < xs.length; i++) out[i] = acc = i === 0 ? xs[0] : r6(acc + xs[i]);
      return out;
    };
    const tid = undelta(T.id),
      open = undelta(T.open);
    p.trades = tid.map((id, i) => ({
      id: String(id),
      instrument: names[T.inst[i]],
      units: T.units[i],
      openTime: open[i],
      closeTime: T.held[i] < 0 ? null : r6(open[i] + T.held[i]),
      openPrice: T.openPrice[i],
      closePrice: T.held[i] < 0 ? null : T.closePrice[i],
      pl: T.pl[i],
      financing: T.financing[i],
      spreadCost: T.spread[i],
      commission: T.commission[i],
      closeReason: names[T.reason[i]],
      mae: T.mae ? T.mae[i] : null,
      mfe: T.mfe ? T.mfe[i] : null,
      runUp: T.runUp ? T.runUp[i] : null,
    }));
    const fid = undelta(F.id),
      ftime = undelta(F.time);
    p.fills = fid.map((id, i) => ({
      id: String(id),
      time: ftime[i],
      instrument: names[F.inst[i]],
      units: F.units[i],
      price: F.price[i],
      reason: names[F.reason[i]],
      tradeID: F.trade[i] === null ? '' : String(id + F.trade[i]),
    }));
    p.levels = {};
    const ltrade = undelta(L.trade),
      ltime = undelta(L.time),
      kinds = ['sl', 'tp', 'ts'];
    for (let i = 0; i < ltrade.length; i++) {
      const lv = (p.levels[String(ltrade[i])] ??= { sl: [], tp: [], ts: [] });
      lv[kinds[L.kind[i]]].push([ltime[i], L.value[i]]);
    }
    delete p.packed;
    return p;
  }
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const GRAN = {
    S5: 5,
    S10: 10,
    S15: 15,
    S30: 30,
    M1: 60,
    M2: 120,
    M4: 240,
    M5: 300,
    M10: 600,
    M15: 900,
    M30: 1800,
    H1: 3600,
    H2: 7200,
    H3: 10800,
    H4: 14400,
    H6: 21600,
    H8: 28800,
    H12: 43200,
    D: 86400,
    W: 604800,
  };
  const STEPS = [60, 300, 900, 3600, 14400, 86400, 604800];
  /** Bars a chart holds at most before it switches to coarser candles (the wide view). */
  const MAX_BARS = 4000;
  /** Markers on a chart at most: above this many fills in view, fills are grouped (see show). */
  const MAX_MARKERS = 600;
  /** Fill markers carry labels (trade, side or P/L) while at most this many are in view, ... */
  const LABEL_UNDER = 150;
  /** ... one label at most every this many pixels (the others stay unlabelled: zoom in for them). */
  const LABEL_PX = 90;
  /** Entry → exit lines are drawn while at most this many trades are in view. */
  const PATHS_UNDER = 120;
  const chartOptions = (height) => ({
    height,
    layout: { attributionLogo: true, background: { color: '#ffffff' }, textColor: '#1d2330' },
    grid: { vertLines: { color: '#f0f1f4' }, horzLines: { color: '#f0f1f4' } },
    // A bar may be narrower than a pixel: fitContent then shows the whole run at any length (the
    // default floor of half a pixel a bar cut a 12-year daily curve to its last five years).
    timeScale: { timeVisible: true, secondsVisible: false, rightOffset: 4, minBarSpacing: 0.001 },
  });

  /**
   * One time axis for every chart of the run: the chart the reader drags, zooms or focuses (the
   * driver) sets the others' visible range to its own. Only the driver's changes are passed on, so
   * a chart that snaps a range to its own bars does not pass it back.
   */
  const linked = [];
  let driver = null;
  function link(chart, box) {
    linked.push(chart);
    for (const ev of ['pointerdown', 'wheel', 'touchstart', 'keydown'])
      box.addEventListener(
        ev,
        () => {
          driver = chart;
        },
        { passive: true, capture: true },
      );
    chart.timeScale().subscribeVisibleTimeRangeChange((r) => {
      if (driver !== chart || !r) return;
      for (const c of linked) {
        if (c === chart) continue;
        try {
          c.timeScale().setVisibleRange(r);
        } catch {
          /* a chart with no data there */
        }
      }
    });
  }
  state.linked = linked;
  state.drive = (chart) => {
    driver = chart;
  };

  /** An RFC 3339 time as people write it, in the page's zone: 2024-01-01 00:00 (the exact time on hover). */
  const when = (iso) => (iso ? fx.date(Date.parse(iso) / 1000) : '?');

  // ---- header and warnings
  const params = Object.entries(D.params)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const kind = D.live
    ? el('span', {
        class: 'badge live',
        id: 'run-kind',
        text: `LIVE run · ${D.live.env} · broker ${D.live.broker} · ${D.live.sessions} session${D.live.sessions === 1 ? '' : 's'}`,
      })
    : el('span', { class: 'badge', id: 'run-kind', text: 'backtest' });
  app.append(
    el('h1', null, `${D.strategy} `, kind),
    el('div', {
      class: 'sub',
      id: 'period',
      title: `${D.period.from ?? '?'} → ${D.period.to ?? '?'}`,
      text: `${params}  ·  ${when(D.period.from)} → ${when(D.period.to)} ${fx.zoneWord()}  ·  run ${D.name}`,
    }),
  );
  if (D.live)
    app.append(
      el('p', {
        class: 'sub',
        id: 'live-note',
        text: "A live run: trades and fills are the broker's transactions; the price charts draw the fill prices (a live run folder records its prices in its recording, not as chart candles); no buy-and-hold benchmark.",
      }),
    );
  if (D.warnings.length > 0) {
    app.append(
      el(
        'div',
        { class: 'warn', id: 'warnings' },
        el('strong', { text: 'This report is incomplete:' }),
        el('ul', null, ...D.warnings.map((w) => el('li', { text: w }))),
      ),
    );
  }

  // ---- metrics
  const grid = el('div', { class: 'metrics', id: 'metrics' });
  // Drawdowns read as falls, as in report.txt, the drawdown chart and the worst-drawdowns table:
  // summary.json keeps the depth (a positive number), the page shows it negative.
  const FALLS = ['maxDrawdown', 'maxDrawdownPct'];
  for (const m of D.metrics) {
    const fall = FALLS.includes(m.key) && typeof m.value === 'number' && m.value > 0;
    const v = fx.metric(fall ? { ...m, value: -m.value } : m, ccy);
    const sign = fall
      ? 'neg'
      : m.kind === 'money' &&
          typeof m.value === 'number' &&
          [
            'netPL',
            'realizedPL',
            'expectancy',
            'bestTrade',
            'worstTrade',
            'largestWin',
            'largestLoss',
            'unrealizedPL',
          ].includes(m.key)
        ? m.value > 0
          ? 'pos'
          : m.value < 0
            ? 'neg'
            : ''
        : '';
    grid.append(
      el(
        'div',
        { class: 'metric', 'data-key': m.key, 'data-def': m.def, title: m.def },
        el('div', { class: 'k', text: m.label }),
        el('div', { class: `v ${sign}`, text: v }),
      ),
    );
  }
  app.append(el('section', null, el('h2', { text: 'Figures' }), grid));
  // All / Long / Short: the closed trades' figures side by side, as TradingView's performance summary.
  state.sides = D.sides || [];
  if (D.sides && D.sides.length) {
    const cell = (f, v) =>
      el('td', {
        class:
          f.kind === 'money' && typeof v === 'number'
            ? Math.round(v * 100) > 0
              ? 'pos'
              : Math.round(v * 100) < 0
                ? 'neg'
                : ''
            : '',
        text: v === null ? 'n/a' : fx.metric({ kind: f.kind, value: v }, ccy),
      });
    app.lastChild.append(
      el('h3', { text: 'All, long and short (closed trades)' }),
      el(
        'div',
        { style: 'overflow-x:auto' },
        el(
          'table',
          { id: 'sides' },
          el(
            'thead',
            null,
            el(
              'tr',
              null,
              el('th', { class: 'l', text: '' }),
              el('th', { text: 'All' }),
              el('th', { text: 'Long' }),
              el('th', { text: 'Short' }),
            ),
          ),
          el(
            'tbody',
            null,
            ...D.sides.map((f) =>
              el(
                'tr',
                { 'data-key': f.key, title: f.def },
                el('td', { class: 'l', text: f.label }),
                cell(f, f.all),
                cell(f, f.long),
                cell(f, f.short),
              ),
            ),
          ),
        ),
      ),
    );
  }
  breakdown(D.breakdown || {});

  /** Orders, exits, long/short, per instrument and the data: the report.txt lines that are not one figure. */
  function breakdown(B) {
    const sec = el(
      'section',
      { id: 'breakdown' },
      el('h2', { text: 'Orders, exits, long and short, instruments, data' }),
    );
    const parts = el('div', { class: 'cols3' });
    const kv = (id, rows) =>
      el(
        'table',
        { id, class: 'kv' },
        el(
          'tbody',
          null,
          ...rows.map(([k, v, title]) =>
            el(
              'tr',
              null,
              el('td', { class: 'l', text: k }),
              el('td', { class: 'l', text: v, title: title || '' }),
            ),
          ),
        ),
      );
    const reasons = (rs) => rs.map((r) => `${fx.reason(r.reason)} ${r.count}`).join(', ');
    const O = B.orders;
    if (O) {
      const rows = [
        ['placed', String(O.placed)],
        ['filled', String(O.filled)],
        ['cancelled', String(O.cancelled)],
        ['rejected', String(O.rejected)],
      ];
      if (O.pending) rows.push(['pending at the end', String(O.pending)]);
      if (O.cancelReasons.length)
        rows.push([
          'cancelled, why',
          reasons(O.cancelReasons),
          O.cancelReasons.map((r) => r.reason).join(', '),
        ]);
      if (O.rejectReasons.length)
        rows.push([
          'rejected, why',
          reasons(O.rejectReasons),
          O.rejectReasons.map((r) => r.reason).join(', '),
        ]);
      const d = O.dependent;
      if (d && d.placed > 0) {
        rows.push([
          'exit orders (TP/SL/trailing)',
          `${d.placed} placed, ${d.filled} filled, ${d.cancelled} cancelled${d.rejected ? `, ${d.rejected} rejected` : ''}`,
        ]);
        if (d.cancelReasons.length) rows.push(['exit orders cancelled, why', reasons(d.cancelReasons)]);
        if (d.rejectReasons.length) rows.push(['exit orders rejected, why', reasons(d.rejectReasons)]);
      }
      const box = el('div', null, el('h3', { text: "Orders (the strategy's own)" }), kv('orders', rows));
      if (O.warning) box.prepend(el('p', { class: 'warn', text: O.warning }));
      parts.append(box);
    }
    const ex = Object.entries(B.exitReasons || {});
    if (ex.length) {
      const total = ex.reduce((a, [, n]) => a + n, 0);
      parts.append(
        el(
          'div',
          null,
          el('h3', { text: 'Closed trades by exit' }),
          el(
            'table',
            { id: 'exits' },
            el(
              'thead',
              null,
              el(
                'tr',
                null,
                el('th', { class: 'l', text: 'exit by' }),
                el('th', { text: 'trades' }),
                el('th', { text: 'share' }),
              ),
            ),
            el(
              'tbody',
              null,
              ...ex.map(([r, n]) =>
                el(
                  'tr',
                  { 'data-reason': r },
                  el('td', { class: 'l', title: r, text: fx.reason(r) }),
                  el('td', { text: String(n) }),
                  el('td', { text: fx.pct((n / total) * 100) }),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const groups = [];
    if (B.long) groups.push(['long', B.long]);
    if (B.short) groups.push(['short', B.short]);
    for (const [k, g] of Object.entries(B.byInstrument || {})) groups.push([k, g]);
    if (groups.length) {
      const cols = [
        'trades',
        'won',
        'win rate',
        'net P/L',
        'profit factor',
        'spread cost',
        'financing',
        'commission',
      ];
      parts.append(
        el(
          'div',
          { class: 'wide' },
          el('h3', { text: 'Long, short and per instrument (closed trades)' }),
          el(
            'div',
            { style: 'overflow-x:auto' },
            el(
              'table',
              { id: 'groups' },
              el(
                'thead',
                null,
                el('tr', null, el('th', { class: 'l', text: '' }), ...cols.map((c) => el('th', { text: c }))),
              ),
              el(
                'tbody',
                null,
                ...groups.map(([k, g]) =>
                  el(
                    'tr',
                    { 'data-group': k },
                    el('td', { class: 'l', text: k }),
                    el('td', { text: String(g.trades) }),
                    el('td', { text: String(g.wins) }),
                    el('td', { text: fx.pct(g.winRate) }),
                    el('td', {
                      class: g.netPL > 0 ? 'pos' : g.netPL < 0 ? 'neg' : '',
                      text: fx.money(g.netPL, ccy),
                    }),
                    el('td', { text: g.profitFactor === null ? 'n/a' : fx.num(g.profitFactor, 2) }),
                    el('td', { text: fx.money(g.spreadCost, ccy) }),
                    el('td', { text: fx.money(g.financing, ccy) }),
                    el('td', { text: fx.money(g.commission, ccy) }),
                  ),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const DR = B.data;
    if (DR) {
      const cov = DR.coverage || { holes: [] };
      const rows = [
        ['data', `${DR.source}${DR.synthetic && !/synthetic/i.test(DR.source) ? ' (synthetic)' : ''}`],
        ['price sides', DR.sides],
        ['spread model', DR.spreadModel ? DR.spreadModel.text : '?'],
      ];
      if (DR.financing) rows.push(['financing rates', DR.financing.text]);
      rows.push(
        ['data covered', `${cov.from ?? '-'} → ${cov.to ?? '-'}`],
        ['holes beyond market closures', String(cov.holes.length)],
      );
      const box = el('div', null, el('h3', { text: 'Data' }), kv('data', rows));
      if (cov.holes.length)
        box.append(
          el(
            'div',
            { class: 'scroll short' },
            el(
              'table',
              { id: 'holes' },
              el(
                'thead',
                null,
                el(
                  'tr',
                  null,
                  ...['instrument', 'granularity', 'from', 'to', 'open hours missing'].map((h, i) =>
                    el('th', { class: i < 4 ? 'l' : '', text: h }),
                  ),
                ),
              ),
              el(
                'tbody',
                null,
                ...cov.holes.map((h) =>
                  el(
                    'tr',
                    null,
                    el('td', { class: 'l', text: h.instrument }),
                    el('td', { class: 'l', text: h.granularity }),
                    el('td', { class: 'l', text: h.from }),
                    el('td', { class: 'l', text: h.to }),
                    el('td', { text: fx.num(h.openHours, 1) }),
                  ),
                ),
              ),
            ),
          ),
        );
      parts.append(box);
    }
    if (!parts.children.length)
      parts.append(
        el('p', {
          class: 'sub',
          text: 'summary.json holds no order, exit, side or data figures (a run folder from an older fxflow, or no summary.json).',
        }),
      );
    sec.append(parts);
    app.append(sec);
  }

  // ---- price charts
  const instruments = [
    ...new Set([...D.fills.map((f) => f.instrument), ...D.trades.map((t) => t.instrument)]),
  ];
  for (const s of D.candles)
    if (!instruments.includes(s.instrument) && D.candles.length === 1) instruments.push(s.instrument);
  mark('figures');
  const priceSection = el(
    'section',
    { id: 'prices' },
    el('h2', { text: 'Prices, fills and protective levels' }),
  );
  app.append(priceSection);
  if (instruments.length === 0)
    priceSection.append(el('p', { class: 'sub', text: 'No instrument was traded: nothing to chart.' }));
  // The strategy's own plots (ctx.plot): each on the chart of its instrument (none, or one not
  // charted: the first chart), overlaid on the prices or in a pane below them, by pane name.
  const PLOT_COLORS = [
    '#7b1fa2',
    '#0277bd',
    '#ef6c00',
    '#2e7d32',
    '#c2185b',
    '#5d4037',
    '#00838f',
    '#9e9d24',
  ];
  const plots = (D.plots || []).map((p, i) => ({
    ...p,
    color: PLOT_COLORS[i % PLOT_COLORS.length],
    chartOf: instruments.includes(p.instrument) ? p.instrument : instruments[0],
  }));
  state.plots = [];
  const byInstrument = {};
  for (const inst of instruments) byInstrument[inst] = priceChart(inst, priceSection);

  function upper(arr, x) {
    // Index of the last element <= x (-1 when none).
    let lo = 0,
      hi = arr.length - 1,
      r = -1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      if (arr[m] <= x) {
        r = m;
        lo = m + 1;
      } else hi = m - 1;
    }
    return r;
  }

  function lower(arr, x) {
    // Index of the first element >= x (arr.length when none).
    let lo = 0,
      hi = arr.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (arr[m] < x) lo = m + 1;
      else hi = m;
    }
    return lo;
  }

  function aggregate(b, step) {
    const n = b.t.length;
    const t = [],
      o = [],
      h = [],
      l = [],
      c = [];
    for (let i = 0; i < n; i++) {
      const k = Math.floor(b.t[i] / step) * step;
      const j = t.length - 1;
      if (j >= 0 && t[j] === k) {
        if (b.h[i] > h[j]) h[j] = b.h[i];
        if (b.l[i] < l[j]) l[j] = b.l[i];
        c[j] = b.c[i];
      } else {
        t.push(k);
        o.push(b.o[i]);
        h.push(b.h[i]);
        l.push(b.l[i]);
        c.push(b.c[i]);
      }
    }
    return { t: Float64Array.from(t), o, h, l, c, step };
  }

  function priceChart(inst, parent) {
    const enc = D.candles.find((s) => s.instrument === inst);
    const fills = D.fills.filter((f) => f.instrument === inst).sort((a, b) => a.time - b.time);
    const trades = D.trades.filter((t) => t.instrument === inst);
    const info = el('div', { class: 'chart-info' });
    const box = el('div', { class: 'chart', id: `chart-${inst}` });
    const legend = el(
      'div',
      { class: 'legend' },
      el('span', null, el('i', { style: 'background:#2962ff' }), 'buy fill'),
      el('span', null, el('i', { style: 'background:#e65100' }), 'sell fill'),
      el('span', null, el('i', { style: 'background:#c62f2f' }), 'stop loss'),
      el('span', null, el('i', { style: 'background:#138a4b' }), 'take profit'),
      el('span', null, el('i', { style: 'background:#b8860b' }), 'trailing stop (initial level)'),
      el(
        'span',
        null,
        el('i', { style: 'background:#138a4b;height:2px' }),
        el('i', { style: 'background:#c62f2f;height:2px' }),
        `entry → exit of a trade, gain or loss (with ${PATHS_UNDER} trades or fewer in view)`,
      ),
    );
    const myPlots = plots.filter((p) => p.chartOf === inst);
    const panes = [...new Set(myPlots.filter((p) => p.pane !== '').map((p) => p.pane))];
    const PANE_H = 150;
    box.style.height = `${420 + PANE_H * panes.length}px`;
    for (const p of myPlots)
      legend.append(
        el(
          'span',
          { class: 'plot-legend', 'data-plot': p.name },
          el('i', { style: `background:${p.color}${p.style === 'line' ? ';height:2px' : ''}` }),
          `${p.name}${p.style === 'line' ? '' : p.style === 'up' ? ' ▲' : p.style === 'down' ? ' ▼' : ' ●'}${p.pane ? ` (pane ${p.pane})` : ''}`,
        ),
      );
    parent.append(el('h3', { text: `${inst}${enc ? ` · ${enc.granularity}` : ''}` }), info, box, legend);
    const chart = fx.chart(box, chartOptions(420 + PANE_H * panes.length));
    const digits = enc ? enc.precision : 5;
    const priceFormat = { type: 'price', precision: digits, minMove: Math.pow(10, -digits) };
    const view = {
      chart,
      inst,
      fills,
      trades,
      series: null,
      markers: null,
      lanes: [],
      pathSeries: [],
      paths: 0,
      thinned: 0,
      level: null,
      lo: 0,
      hi: -1,
      lines: [],
    };
    const tradeById = new Map(trades.map((t) => [t.id, t]));
    const fillT = Float64Array.from(fills.map((f) => f.time));
    /** Fills with from <= time < to. */
    const countFills = (from, to) => lower(fillT, to) - lower(fillT, from);
    let base;
    if (enc && enc.count > 0) {
      const b = decodeCandles(enc);
      mark(`decode ${inst}`);
      base = { t: b.t, o: b.o, h: b.h, l: b.l, c: b.c, step: GRAN[enc.granularity] || 60 };
      view.series = chart.addSeries(LC.CandlestickSeries, {
        priceFormat,
        upColor: '#26a69a',
        downColor: '#ef5350',
        wickUpColor: '#26a69a',
        wickDownColor: '#ef5350',
        borderVisible: false,
      });
    } else {
      // No candles (an older run folder): the fill prices as a line, so the fills still show.
      const t = [],
        c = [];
      for (const f of fills) {
        if (t.length > 0 && t[t.length - 1] === f.time) c[c.length - 1] = f.price;
        else {
          t.push(f.time);
          c.push(f.price);
        }
      }
      base = { t: Float64Array.from(t), o: c, h: c, l: c, c, step: 60, line: true };
      view.series = chart.addSeries(LC.LineSeries, { priceFormat, color: '#8a93a6', lineWidth: 1 });
    }
    const levels = [base];
    for (const s of STEPS) if (s > base.step && !base.line) levels.push(null);
    const stepOf = (k) => (k === 0 ? base.step : STEPS.filter((s) => s > base.step)[k - 1]);
    // Each level is aggregated once, when first shown, from the nearest finer level already built.
    const level = (k) => {
      if (levels[k]) return levels[k];
      let j = k - 1;
      while (j > 0 && !levels[j]) j--;
      return (levels[k] = aggregate(levels[j], stepOf(k)));
    };
    view.markers = LC.createSeriesMarkers(view.series, []);
    // One series per plot: a line, or an invisible line carrying the markers, in its pane (0: the prices).
    view.plots = myPlots.map((p) => {
      const pane = p.pane === '' ? 0 : 1 + panes.indexOf(p.pane);
      const line = p.style === 'line';
      const series = chart.addSeries(
        LC.LineSeries,
        {
          color: p.color,
          lineWidth: line ? 2 : 1,
          lineVisible: line,
          pointMarkersVisible: false,
          priceLineVisible: false,
          lastValueVisible: line,
          crosshairMarkerVisible: line,
          title: line ? p.name : '',
          ...(pane === 0 ? { priceFormat } : {}),
        },
        pane,
      );
      const markers = line ? null : LC.createSeriesMarkers(series, []);
      const entry = {
        name: p.name,
        pane: p.pane,
        paneIndex: pane,
        style: p.style,
        instrument: inst,
        count: p.count,
        buckets: p.buckets,
        points: 0,
        markers: 0,
      };
      state.plots.push(entry);
      return { p, series, markers, entry, t: Float64Array.from(p.t) };
    });
    for (let k = 0; k < panes.length; k++) chart.panes()[k + 1]?.setHeight(PANE_H);
    view.panes = panes;
    const laneSeries = (k, kind) => {
      view.lanes[k] ??= {};
      const color = kind === 'sl' ? '#c62f2f' : kind === 'tp' ? '#138a4b' : '#b8860b';
      return (view.lanes[k][kind] ??= chart.addSeries(LC.LineSeries, {
        color,
        lineWidth: 1,
        lineStyle: kind === 'ts' ? 1 : 2,
        priceLineVisible: false,
        lastValueVisible: false,
        crosshairMarkerVisible: false,
        priceFormat,
      }));
    };
    const LANES = 4;
    const totalBars = base.t.length;
    info.textContent = `${totalBars.toLocaleString('en-US')} ${base.line ? 'fill prices (no candles in the run folder)' : 'candles'} · ${fills.length} fills · ${trades.length} trades`;

    /** The finest level that shows `span` seconds in at most MAX_BARS bars (decided before aggregating). */
    function pickLevel(span) {
      if (base.t.length <= MAX_BARS) return 0;
      for (let k = 0; k < levels.length; k++) if (span / stepOf(k) <= MAX_BARS) return k;
      return levels.length - 1;
    }

    /** Puts the candles of the level that suits [from, to] on the chart, around that range. */
    function show(from, to, force) {
      const span = Math.max(to - from, base.step * 10);
      const k = pickLevel(span);
      const L = level(k);
      const all = L.t.length <= 3 * MAX_BARS;
      let lo = all ? 0 : Math.max(0, upper(L.t, from - span));
      let hi = all ? L.t.length - 1 : Math.min(L.t.length - 1, upper(L.t, to + span) + 1);
      if (!force && view.level === k && view.lo <= lo && view.hi >= hi) {
        drawMarks(L, view.lo, view.hi, from, to);
        return false;
      }
      if (!all) {
        // A little wider than needed, so panning does not rebuild on every move.
        lo = Math.max(0, upper(L.t, from - 1.5 * span));
        hi = Math.min(L.t.length - 1, upper(L.t, to + 1.5 * span) + 1);
      }
      view.level = k;
      view.lo = lo;
      view.hi = hi;
      view.step = L.step;
      const data = new Array(hi - lo + 1);
      for (let i = lo; i <= hi; i++)
        data[i - lo] = base.line
          ? { time: L.t[i], value: L.c[i] }
          : { time: L.t[i], open: L.o[i], high: L.h[i], low: L.l[i], close: L.c[i] };
      view.series.setData(data);
      drawPlots(L, lo, hi);
      drawLevels(L, lo, hi);
      drawMarks(L, lo, hi, from, to);
      return true;
    }

    /** Fill markers, their labels and the entry → exit lines for the visible range [from, to] of the window [lo, hi] of level L. */
    function drawMarks(L, lo, hi, from, to) {
      // Fills in the window, each on the bar that holds it; when more than MAX_MARKERS, only those
      // within a view's width of the visible range (the chart shows no more), then thinned if still more.
      const span = Math.max(0, to - from);
      let tLo = L.t[lo],
        tHi = L.t[hi] + L.step;
      if (countFills(tLo, tHi) > MAX_MARKERS) {
        tLo = Math.max(tLo, from - span);
        tHi = Math.min(tHi, to + span);
      }
      const visible = lower(fillT, to + 1) - lower(fillT, from); // times are whole seconds
      const marks = [];
      for (let j = lower(fillT, tLo); j < fills.length && fillT[j] < tHi; j++) {
        const f = fills[j];
        const i = upper(L.t, f.time);
        if (i < lo) continue;
        const buy = f.units > 0;
        marks.push({
          time: L.t[i],
          position: 'atPriceMiddle',
          price: f.price,
          shape: buy ? 'arrowUp' : 'arrowDown',
          color: buy ? '#2962ff' : '#e65100',
          id: f.id,
          text: '',
          bar: i,
          f,
        });
      }
      view.fillsMarked = marks.length;
      // Labels while few fills are in view (the trade and side at an entry, the trade and its P/L at
      // an exit), spaced so that they do not overlap: one at most every LABEL_PX pixels of the chart.
      view.labelGap = 0;
      if (visible <= LABEL_UNDER && marks.length <= 3 * LABEL_UNDER) {
        const pxPerBar = box.clientWidth / Math.max(1, (to - from) / L.step);
        const gap = (view.labelGap = Math.max(1, Math.ceil(LABEL_PX / Math.max(pxPerBar, 1e-9))));
        let last = -Infinity;
        for (const m of marks) {
          if (m.bar - last < gap) continue;
          last = m.bar;
          const f = m.f,
            tr = tradeById.get(f.tradeID);
          m.text =
            f.tradeID === f.id
              ? `#${f.tradeID} ${f.units > 0 ? 'buy' : 'sell'} ${Math.abs(f.units)}`
              : tr && tr.closeTime !== null && tr.closeTime === f.time
                ? `#${f.tradeID} ${tr.pl >= 0 ? '+' : ''}${fx.num(tr.pl, 2)}`
                : `#${f.tradeID} ${f.units > 0 ? 'B' : 'S'} ${Math.abs(f.units)}`;
        }
      }
      let shownMarks = marks;
      view.thinned = 0;
      if (marks.length > MAX_MARKERS) {
        // Zoomed out over a busy run: one marker per side and group of bars (at most MAX_MARKERS in
        // all), at its fills' mean price, no label; the line above the chart says how many fills each stands for.
        const bars = Math.max(1, upper(L.t, tHi) - Math.max(lo, upper(L.t, tLo)) + 1);
        const per = Math.ceil(bars / (MAX_MARKERS / 2));
        const groups = new Map();
        for (const m of marks) {
          const key = `${Math.floor((m.bar - lo) / per)}${m.shape}`;
          const g = groups.get(key);
          if (g) {
            g.n++;
            g.sum += m.price;
          } else
            groups.set(key, {
              time: L.t[Math.max(m.bar - ((m.bar - lo) % per), lo)],
              position: 'atPriceMiddle',
              shape: m.shape,
              color: m.color,
              id: `g${m.id}`,
              n: 1,
              sum: m.price,
              text: '',
            });
        }
        shownMarks = [...groups.values()]
          .sort((a, b) => a.time - b.time)
          .map((g) => ({
            time: g.time,
            position: g.position,
            price: g.sum / g.n,
            shape: g.shape,
            color: g.color,
            id: g.id,
            text: '',
          }));
        view.thinned = per;
      }
      view.markers.setMarkers(
        shownMarks.map((m) => ({
          time: m.time,
          position: m.position,
          price: m.price,
          shape: m.shape,
          color: m.color,
          id: m.id,
          text: m.text,
        })),
      );
      drawPaths(L, lo, hi, from, to);
      const thin =
        view.thinned > 0
          ? ` · fill markers thinned (one per side for every ${view.thinned} bars; zoom in to see each fill)`
          : '';
      info.textContent = `${totalBars.toLocaleString('en-US')} ${base.line ? 'fill prices' : `${enc.granularity} candles${enc.recorded ? ` (the run's ${enc.recorded} candles, folded to ${enc.granularity} to keep the report bounded)` : ''}`} · showing ${view.level === 0 ? 'full detail' : `${stepLabel(L.step)} bars (downsampled; zoom in for ${enc ? enc.granularity : 'full detail'})`} · ${fills.length} fills · ${trades.length} trades${thin}`;
    }

    /**
     * The plots on the bars of the window [lo, hi] of level L: a line takes, per bar, the last value
     * plotted in it (a coarser level: its bar's last), a marker style the first; markers past
     * MAX_MARKERS in the window are thinned to every n-th.
     */
    function drawPlots(L, lo, hi) {
      const tLo = L.t[lo],
        tHi = L.t[hi] + L.step;
      for (const v of view.plots) {
        const pts = [];
        for (let j = lower(v.t, tLo); j < v.t.length && v.t[j] < tHi; j++) {
          const i = upper(L.t, v.t[j]);
          if (i < lo) continue;
          const time = L.t[i];
          const last = pts[pts.length - 1];
          if (last && last.time === time) {
            if (v.markers === null) last.value = v.p.v[j];
            continue;
          }
          pts.push({ time, value: v.p.v[j] });
        }
        v.series.setData(pts);
        v.entry.points = pts.length;
        if (v.markers !== null) {
          const every = Math.ceil(pts.length / MAX_MARKERS) || 1;
          const shape = v.p.style === 'up' ? 'arrowUp' : v.p.style === 'down' ? 'arrowDown' : 'circle';
          const ms = [];
          for (let k = 0; k < pts.length; k += every)
            ms.push({
              time: pts[k].time,
              position: 'atPriceMiddle',
              price: pts[k].value,
              shape,
              color: v.p.color,
            });
          v.markers.setMarkers(ms);
          v.entry.markers = ms.length;
        }
      }
    }

    /** Entry → exit lines of the trades in view (green: a gain, red: a loss), only while few enough to read. */
    function drawPaths(L, lo, hi, from, to) {
      const span = Math.max(0, to - from);
      const tLo = Math.max(L.t[lo], from - span),
        tHi = Math.min(L.t[hi] + L.step, to + span);
      const visible = trades.filter(
        (tr) => tr.closeTime !== null && tr.closeTime >= from && tr.openTime <= to,
      ).length;
      const inView = trades.filter((tr) => tr.closeTime !== null && tr.closeTime >= tLo && tr.openTime < tHi);
      const out = [];
      const laneEnd = [];
      if (visible <= PATHS_UNDER) {
        for (const tr of inView.slice().sort((a, b) => a.openTime - b.openTime)) {
          const a = upper(L.t, tr.openTime),
            b = upper(L.t, tr.closeTime);
          if (a < 0 || b <= a) continue;
          let lane = laneEnd.findIndex((e) => e < a);
          if (lane < 0) {
            if (laneEnd.length >= LANES) continue;
            lane = laneEnd.length;
            laneEnd.push(-1);
            out.push([]);
          }
          laneEnd[lane] = b;
          const color = tr.pl >= 0 ? '#138a4b' : '#c62f2f';
          out[lane].push(
            { time: L.t[a], value: tr.openPrice, color },
            { time: L.t[b], value: tr.closePrice, color: 'rgba(0,0,0,0)' },
          );
        }
      }
      view.paths = out.reduce((n, x) => n + x.length / 2, 0);
      for (let k = 0; k < LANES; k++) {
        if (!out[k] && !view.pathSeries[k]) continue;
        view.pathSeries[k] ??= chart.addSeries(LC.LineSeries, {
          lineWidth: 2,
          priceLineVisible: false,
          lastValueVisible: false,
          crosshairMarkerVisible: false,
          priceFormat,
        });
        view.pathSeries[k].setData(dedupe(out[k] || []));
      }
    }

    function drawLevels(L, lo, hi) {
      const lanes = [];
      const out = [];
      for (let k = 0; k < LANES; k++) out.push({ sl: [], tp: [], ts: [] });
      const tLo = L.t[lo],
        tHi = L.t[hi];
      for (const tr of trades) {
        const lv = D.levels[tr.id];
        if (!lv) continue;
        const end = tr.closeTime ?? tHi;
        if (end < tLo || tr.openTime > tHi) continue;
        const a = Math.max(lo, upper(L.t, tr.openTime)),
          b = Math.min(hi, upper(L.t, end));
        if (b <= a) continue;
        let lane = -1;
        for (let k = 0; k < LANES; k++)
          if ((lanes[k] ?? -2) + 1 < a) {
            lane = k;
            break;
          }
        if (lane < 0) continue;
        lanes[lane] = b;
        const sign = tr.units > 0 ? 1 : -1;
        const put = (arr, changes) => {
          if (changes.length === 0) return;
          // Whitespace does not break a line series: the segment that joins this trade to the
          // lane's next one is drawn transparent (a point's colour is that of the segment starting on it).
          let prevIdx = -1,
            prevPrice = null;
          for (const [t, p] of changes) {
            const i = Math.min(b, Math.max(a, upper(L.t, t)));
            if (prevPrice !== null && i - 1 > prevIdx) arr.push({ time: L.t[i - 1], value: prevPrice });
            if (i > prevIdx) arr.push({ time: L.t[i], value: p });
            else arr[arr.length - 1] = { time: L.t[i], value: p };
            prevIdx = i;
            prevPrice = p;
          }
          if (b > prevIdx) arr.push({ time: L.t[b], value: prevPrice });
          arr[arr.length - 1] = { ...arr[arr.length - 1], color: 'rgba(0,0,0,0)' };
        };
        put(out[lane].sl, lv.sl);
        put(out[lane].tp, lv.tp);
        put(
          out[lane].ts,
          lv.ts.map(([t, d]) => [t, tr.openPrice - sign * d]),
        );
      }
      for (let k = 0; k < LANES; k++)
        for (const kind of ['sl', 'tp', 'ts']) {
          const pts = out[k][kind];
          if (pts.length > 0 || view.lanes[k]?.[kind]) laneSeries(k, kind).setData(dedupe(pts));
        }
    }

    let pending = false;
    chart.timeScale().subscribeVisibleTimeRangeChange((r) => {
      if (!r || pending || base.line) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        const cur = chart.timeScale().getVisibleRange();
        if (!cur) return;
        if (show(cur.from, cur.to, false)) chart.timeScale().setVisibleRange(cur);
      });
    });
    if (base.t.length > 0) show(base.t[0], base.t[base.t.length - 1], true);
    mark(`show ${inst}`);
    chart.timeScale().fitContent();
    link(chart, box);
    state.markerCount += view.markers.markers().length;
    state.fillsMarked = (state.fillsMarked ?? 0) + (view.fillsMarked ?? 0);
    state.fills += fills.length;
    state.charts[inst] = view;

    view.focus = (tr) => {
      const end = tr.closeTime ?? base.t[base.t.length - 1];
      const pad = Math.max((end - tr.openTime) * 1.5, base.step * 40);
      const from = tr.openTime - pad,
        to = end + pad;
      show(from, to, true);
      driver = chart;
      chart.timeScale().setVisibleRange({ from, to });
      for (const l of view.lines) view.series.removePriceLine(l);
      view.lines = [];
      const lv = D.levels[tr.id] || { sl: [], tp: [], ts: [] };
      const line = (price, color, title, style) =>
        view.lines.push(
          view.series.createPriceLine({
            price,
            color,
            title,
            lineWidth: 1,
            lineStyle: style,
            axisLabelVisible: true,
          }),
        );
      line(tr.openPrice, '#2962ff', `#${tr.id} entry`, 0);
      if (tr.closePrice !== null) line(tr.closePrice, '#e65100', `#${tr.id} exit`, 0);
      if (lv.sl.length) line(lv.sl[lv.sl.length - 1][1], '#c62f2f', 'SL', 2);
      if (lv.tp.length) line(lv.tp[lv.tp.length - 1][1], '#138a4b', 'TP', 2);
      if (lv.ts.length)
        line(tr.openPrice - (tr.units > 0 ? 1 : -1) * lv.ts[lv.ts.length - 1][1], '#b8860b', 'TS start', 1);
      box.scrollIntoView({ block: 'center' });
    };
    return view;
  }

  function dedupe(pts) {
    const out = [];
    for (const p of pts) {
      if (out.length > 0 && out[out.length - 1].time >= p.time) {
        if (out[out.length - 1].time === p.time) out[out.length - 1] = p;
        continue;
      }
      out.push(p);
    }
    return out;
  }
  function stepLabel(s) {
    return s >= 604800
      ? 'weekly'
      : s >= 86400
        ? 'daily'
        : s >= 3600
          ? `${s / 3600}-hour`
          : `${s / 60}-minute`;
  }

  mark('prices');
  // ---- equity (money, % or log scale) with buy and hold, drawdown, underwater periods
  const eqSection = el('section', { id: 'equity' }, el('h2', { text: 'Equity and drawdown' }));
  app.append(eqSection);
  const E = D.equity;
  const eqPts = { bal: [], nav: [], dd: [], shade: [] };
  const worst3 = D.drawdowns.slice(0, 3);
  {
    let peak = -Infinity;
    for (let i = 0; i < E.t.length; i++) {
      const t = E.t[i];
      if (eqPts.nav.length > 0 && eqPts.nav[eqPts.nav.length - 1].time >= t) {
        eqPts.nav.pop();
        eqPts.bal.pop();
        eqPts.dd.pop();
        eqPts.shade.pop();
      }
      peak = Math.max(peak, E.nav[i]);
      eqPts.bal.push({ time: t, value: E.balance[i] });
      eqPts.nav.push({ time: t, value: E.nav[i] });
      eqPts.dd.push({ time: t, value: peak > 0 ? ((E.nav[i] - peak) / peak) * 100 : 0 });
      // A drawdown that recovered is shaded from its peak to its recovery; one that never recovered,
      // from its peak to its trough only (to the end would shade all that follows, recovered or not).
      const under = worst3.some((d) => t >= d.start && t <= (d.end ?? d.trough));
      eqPts.shade.push({ time: t, value: under ? 1 : 0 });
    }
  }
  // Buy and hold on each charted instrument: 1× the initial balance bought at the first ask, marked at the bid.
  const bench = (D.benchmarks || [])
    .filter((b) => b.t.length > 0 && b.ask > 0)
    .map((b) => {
      const pts = [{ time: b.from, value: D.initialBalance }];
      for (let i = 0; i < b.t.length; i++) {
        const p = { time: b.t[i], value: D.initialBalance * (b.bid[i] / b.ask) };
        if (pts[pts.length - 1].time >= p.time) pts[pts.length - 1] = p;
        else pts.push(p);
      }
      return { instrument: b.instrument, pts, last: (b.bid[b.bid.length - 1] / b.ask - 1) * 100 };
    });
  state.benchmarks = bench.map((b) => ({
    instrument: b.instrument,
    returnPct: b.last,
    points: b.pts.length,
  }));
  if (eqPts.nav.length === 0) eqSection.append(el('p', { class: 'sub', text: 'No equity points.' }));
  else {
    const eqBox = el('div', { class: 'chart', id: 'equity-chart' });
    const ddBox = el('div', { class: 'chart small', id: 'drawdown-chart' });
    const BENCH_COLORS = ['#f57c00', '#8e24aa', '#00838f'];
    const modeBtns = ['money', '%', 'log'].map((m) =>
      el('button', {
        type: 'button',
        'data-mode': m,
        text: m === 'money' ? `money (${ccy})` : m === '%' ? '% return' : 'log scale',
        onclick: () => setMode(m),
      }),
    );
    const lastWorst = worst3.find((d) => d.end === null);
    let eqLegend;
    eqSection.append(
      el(
        'div',
        { class: 'filters toggle', id: 'equity-mode' },
        el('span', { class: 'sub', text: 'Equity in' }),
        ...modeBtns,
      ),
      (eqLegend = el(
        'div',
        { class: 'legend' },
        el('span', null, el('i', { style: 'background:#2962ff' }), 'NAV'),
        el('span', null, el('i', { style: 'background:#8a93a6' }), 'balance'),
        ...bench.map((b, i) =>
          el(
            'span',
            { class: 'bench-legend' },
            el('i', { style: `background:${BENCH_COLORS[i % 3]}` }),
            `buy and hold ${b.instrument} (${fx.pct(b.last)})`,
          ),
        ),
        el(
          'span',
          null,
          el('i', { style: 'background:rgba(198,47,47,0.4)' }),
          `underwater: the ${Math.min(3, worst3.length)} worst drawdowns${lastWorst ? ' (one not recovered: shaded to its trough)' : ''}`,
        ),
      )),
      eqBox,
      bench.length
        ? el('p', {
            class: 'note',
            id: 'benchmark-note',
            text: `Buy and hold: the initial balance's worth of ${bench.map((b) => b.instrument).join(', ')} bought at the first candle's ask and marked at each day's last bid, on the same candles and spread model as the run; no financing, and in the instrument's own terms (no conversion to ${ccy}).`,
          })
        : el('p', {
            class: 'note',
            id: 'benchmark-note',
            text: D.live
              ? 'No buy-and-hold line: a live run records no chart candles.'
              : 'No buy-and-hold line: this run folder has no benchmark (rerun the backtest with this fxflow).',
          }),
      el('h3', { text: 'Drawdown (% below the NAV peak, daily curve)' }),
      ddBox,
    );
    const eq = fx.chart(eqBox, chartOptions(420));
    // Underwater periods: a band on a hidden 0..1 scale, 1 inside the worst drawdowns.
    const shade = eq.addSeries(LC.AreaSeries, {
      priceScaleId: 'shade',
      priceLineVisible: false,
      lastValueVisible: false,
      crosshairMarkerVisible: false,
      lineVisible: false,
      lineColor: 'rgba(0,0,0,0)',
      topColor: 'rgba(198,47,47,0.13)',
      bottomColor: 'rgba(198,47,47,0.13)',
      lineType: 1,
    });
    eq.priceScale('shade').applyOptions({ scaleMargins: { top: 0, bottom: 0 }, visible: false });
    shade.setData(eqPts.shade);
    const bal = eq.addSeries(LC.LineSeries, { color: '#8a93a6', lineWidth: 1, title: 'balance' });
    const nav = eq.addSeries(LC.LineSeries, { color: '#2962ff', lineWidth: 2, title: 'NAV' });
    const benchSeries = bench.map((b, i) =>
      eq.addSeries(LC.LineSeries, {
        color: BENCH_COLORS[i % 3],
        lineWidth: 1,
        lineStyle: 2,
        title: `B&H ${b.instrument}`,
      }),
    );
    const money2 = { type: 'price', precision: 2, minMove: 0.01 };
    const pct2 = { type: 'custom', minMove: 0.01, formatter: (v) => `${v.toFixed(2)}%` };
    const asPct = (pts) => pts.map((p) => ({ time: p.time, value: (p.value / D.initialBalance - 1) * 100 }));
    function setMode(m) {
      const pct = m === '%' && D.initialBalance > 0;
      const f = pct ? asPct : (x) => x;
      for (const [series, pts] of [
        [bal, eqPts.bal],
        [nav, eqPts.nav],
        ...benchSeries.map((s, i) => [s, bench[i].pts]),
      ]) {
        series.applyOptions({ priceFormat: pct ? pct2 : money2 });
        series.setData(f(pts));
      }
      eq.priceScale('right').applyOptions({
        mode: m === 'log' ? LC.PriceScaleMode.Logarithmic : LC.PriceScaleMode.Normal,
      });
      for (const b of modeBtns) b.classList.toggle('on', b.dataset.mode === m);
      state.equityMode = m;
      const last = nav.data();
      state.lastPlotted = last.length ? last[last.length - 1].value : null;
    }
    setMode('money');
    // The deepest point of a drawdown never recovered: a marker, its words in the legend (a label on
    // the chart is cut off when the point is near an edge).
    if (lastWorst) {
      const at =
        eqPts.nav.find((p) => p.time >= lastWorst.trough)?.time ?? eqPts.nav[eqPts.nav.length - 1].time;
      LC.createSeriesMarkers(nav, [{ time: at, position: 'belowBar', shape: 'arrowUp', color: '#c62f2f' }]);
      eqLegend.append(
        el(
          'span',
          { id: 'deepest-legend' },
          el('b', { style: 'color:#c62f2f', text: '▲ ' }),
          `deepest point of the drawdown not recovered by the end (${fx.date(at)})`,
        ),
      );
    }
    eq.timeScale().fitContent();
    link(eq, eqBox);
    const dd = fx.chart(ddBox, chartOptions(220));
    // Values are already percentages: a custom format (Lightweight Charts' "percent" format shows the
    // change from the first value, which is not what a drawdown in % is).
    const ddSeries = dd.addSeries(LC.AreaSeries, {
      lineColor: '#c62f2f',
      topColor: 'rgba(198,47,47,0.05)',
      bottomColor: 'rgba(198,47,47,0.35)',
      invertFilledArea: true,
      priceFormat: pct2,
    });
    ddSeries.setData(eqPts.dd);
    dd.timeScale().fitContent();
    link(dd, ddBox);
    state.navSeries = nav;
    state.ddSeries = ddSeries;
    state.ddChart = dd;
    state.equityChart = eq;
    state.benchSeries = benchSeries;
    state.setEquityMode = setMode;
    const last = nav.data();
    state.lastNav = last.length ? last[last.length - 1].value : null;
  }
  if (D.drawdowns.length > 0) {
    const tb = el('tbody');
    D.drawdowns.forEach((d, i) =>
      tb.append(
        el(
          'tr',
          null,
          el('td', { text: String(i + 1) }),
          el('td', { class: 'l', text: fx.date(d.start) }),
          el('td', { class: 'l', text: fx.date(d.trough) }),
          el('td', { class: 'l', text: d.end === null ? 'not recovered' : fx.date(d.end) }),
          el('td', { class: 'neg', text: fx.money(-d.depth, ccy) }),
          el('td', { class: 'neg', text: fx.pct(-d.depthPct) }),
          el('td', { text: `${d.days.toFixed(1)} d` }),
        ),
      ),
    );
    const figMax = D.metrics.find((m) => m.key === 'maxDrawdown');
    const tableMax = D.drawdowns[0].depth;
    const note =
      figMax && typeof figMax.value === 'number'
        ? `Measured on the daily equity curve (equity.csv: the last NAV of each FX trading day, ending 17:00 New York, and the last mark). The Figures' max drawdown (${fx.money(-figMax.value, ccy)}) is marked on every price the run saw, so it can be deeper than the deepest here (${fx.money(-tableMax, ccy)}): a fall inside a day that was made up by the day's end shows only there.`
        : 'Measured on the daily equity curve (equity.csv: the last NAV of each FX trading day, ending 17:00 New York, and the last mark).';
    eqSection.append(
      el('h3', { text: 'Worst drawdowns' }),
      el('p', { class: 'note', id: 'drawdowns-note', text: note }),
      el(
        'table',
        { id: 'drawdowns' },
        el(
          'thead',
          null,
          el(
            'tr',
            null,
            ...['#', 'peak', 'trough', 'recovered', 'depth', 'depth %', 'duration'].map((h, i) =>
              el('th', { class: i > 0 && i < 4 ? 'l' : '', text: h }),
            ),
          ),
        ),
        tb,
      ),
    );
  }

  mark('equity');
  // ---- a portfolio's strategies: each one's P/L beside the account's, and their daily returns' correlation
  if (D.strategies && D.strategies.strategies.length > 0) {
    const S = D.strategies;
    const stSection = el('section', { id: 'strategies' }, el('h2', { text: 'Strategies' }));
    app.append(stSection);
    stSection.append(
      el('p', {
        class: 'sub',
        text: `Each strategy's own book (P/L of its NAV, ${ccy}) beside the account's, which is their sum.`,
      }),
    );
    const COLORS = ['#2e7d32', '#f57c00', '#8e24aa', '#00838f', '#c62828', '#6d4c41'];
    const box = el('div', { class: 'chart', id: 'strategies-chart' });
    const legend = el(
      'div',
      { class: 'legend', id: 'strategies-legend' },
      el('span', { text: 'account', style: 'color:#2962ff' }),
      ...S.strategies.map((x, i) =>
        el('span', { text: ` · ${x.name}`, style: `color:${COLORS[i % COLORS.length]}` }),
      ),
    );
    stSection.append(legend, box);
    const ch = LC.createChart(box, chartOptions(320));
    const line = (pts) => {
      const out = [];
      for (const p of pts) {
        if (out.length > 0 && out[out.length - 1].time >= p.time) out.pop();
        out.push(p);
      }
      return out;
    };
    const acc = [];
    for (let i = 0; i < E.t.length; i++) acc.push({ time: E.t[i], value: E.nav[i] - D.initialBalance });
    const accSeries = ch.addSeries(LC.LineSeries, { color: '#2962ff', lineWidth: 2, title: 'account' });
    accSeries.setData(line(acc));
    const drawn = [{ name: 'account', series: accSeries }];
    S.strategies.forEach((x, i) => {
      const pts = x.equity.map((p) => ({ time: Math.floor(p[0] / 1000), value: p[2] - D.initialBalance }));
      const series = ch.addSeries(LC.LineSeries, {
        color: COLORS[i % COLORS.length],
        lineWidth: 1,
        title: x.name,
      });
      series.setData(line(pts));
      drawn.push({ name: x.name, series });
    });
    state.strategies = { chart: ch, series: drawn };
    ch.timeScale().fitContent();
    const names = S.correlation.names;
    const cell = (v) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(2));
    stSection.append(
      el('h3', { text: 'Correlation of daily returns' }),
      el(
        'table',
        { id: 'strategies-correlation' },
        el('tr', null, el('th', { text: '' }), ...names.map((n) => el('th', { text: n }))),
        ...names.map((n, r) =>
          el(
            'tr',
            null,
            el('th', { text: n }),
            ...S.correlation.dailyReturns[r].map((v) => el('td', { text: cell(v) })),
          ),
        ),
      ),
    );
  }
  // ---- monthly returns and the P/L distribution
  const cols = el('div', { class: 'cols' });
  app.append(cols);
  const monSection = el('section', { id: 'monthly' }, el('h2', { text: 'Monthly returns' }));
  cols.append(monSection);
  if (D.monthly.length === 0)
    monSection.append(el('p', { class: 'sub', text: 'No equity curve: no monthly figures.' }));
  else {
    // % of the month's opening NAV (the year: the months compounded), or the P/L in the account currency.
    const monthBtns = [
      ['pct', '%'],
      ['money', ccy || 'money'],
    ].map(([m, label]) =>
      el('button', { type: 'button', 'data-mode': m, text: label, onclick: () => drawMonthly(m) }),
    );
    const holder = el('div', { style: 'overflow-x:auto' });
    const monNote = el('p', { class: 'note' });
    monSection.append(
      el(
        'div',
        { class: 'filters toggle', id: 'monthly-mode' },
        el('span', { class: 'sub', text: 'Show' }),
        ...monthBtns,
      ),
      holder,
      monNote,
    );
    function drawMonthly(mode) {
      const years = [...new Set(D.monthly.map((m) => m.year))].sort();
      const tb = el('tbody');
      for (const y of years) {
        const row = el('tr', null, el('td', { class: 'l', text: String(y) }));
        let total = 0,
          growth = 1;
        for (let m = 0; m < 12; m++) {
          const c = D.monthly.find((x) => x.year === y && x.month === m);
          if (!c) {
            row.append(el('td'));
            continue;
          }
          total += c.pl;
          growth *= 1 + c.pct / 100;
          const v = mode === 'pct' ? c.pct : c.pl;
          const shown = mode === 'pct' ? Math.round(v * 100) : Math.round(v);
          row.append(
            el('td', {
              class: shown > 0 ? 'pos' : shown < 0 ? 'neg' : '',
              'data-pl': String(c.pl),
              'data-pct': String(c.pct),
              title: mode === 'pct' ? fx.money(c.pl, ccy) : fx.pct(c.pct),
              text: mode === 'pct' ? fx.pct(c.pct) : fx.num(Math.round(c.pl) || 0, 0),
            }),
          );
        }
        const yearPct = (growth - 1) * 100;
        const v = mode === 'pct' ? yearPct : total;
        const shownY = mode === 'pct' ? Math.round(v * 100) : Math.round(v);
        row.append(
          el('td', {
            'data-total': String(total),
            'data-total-pct': String(yearPct),
            class: shownY > 0 ? 'pos' : shownY < 0 ? 'neg' : '',
            title: mode === 'pct' ? fx.money(total, ccy) : fx.pct(yearPct),
            text: mode === 'pct' ? fx.pct(yearPct) : fx.num(Math.round(total) || 0, 0),
          }),
        );
        tb.append(row);
      }
      holder.replaceChildren(
        el(
          'table',
          { class: 'monthly' },
          el(
            'thead',
            null,
            el(
              'tr',
              null,
              el('th', { class: 'l', text: 'year' }),
              ...MONTHS.map((m) => el('th', { text: m })),
              el('th', { text: 'year' }),
            ),
          ),
          tb,
        ),
      );
      monNote.textContent =
        mode === 'pct'
          ? "Each month's NAV change as a % of its opening NAV (the first month: of the initial balance); the year compounds its months. Hover a cell for the amount."
          : `Each month's last NAV less the previous month's (the first month: less the initial balance), in ${ccy}: the cells add up to the net P/L. Hover a cell for the %.`;
      for (const b of monthBtns) b.classList.toggle('on', b.dataset.mode === mode);
      state.monthlyMode = mode;
    }
    drawMonthly('pct');
  }
  const distSection = el(
    'section',
    { id: 'distribution' },
    el('h2', { text: 'Trade P/L distribution (closed trades)' }),
  );
  cols.append(distSection);
  distSection.append(histogram(D.trades.filter((t) => t.closeTime !== null).map((t) => t.pl)));

  function histogram(xs) {
    if (xs.length === 0) return el('p', { class: 'sub', text: 'No closed trades.' });
    // Loops, not Math.min(...xs): a spread of 100k+ arguments overflows the stack.
    let lo = Infinity,
      hi = -Infinity;
    for (const x of xs) {
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    const bins = Math.min(40, Math.max(5, Math.ceil(Math.sqrt(xs.length))));
    const w = (hi - lo) / bins || 1;
    const counts = new Array(bins).fill(0);
    for (const x of xs) counts[Math.min(bins - 1, Math.floor((x - lo) / w))]++;
    const max = Math.max(...counts);
    const W = 600,
      H = 240,
      pad = 24;
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', `0 0 ${W} ${H + 2 * pad}`);
    svg.setAttribute('width', '100%');
    svg.id = 'pl-histogram';
    const bw = W / bins;
    counts.forEach((n, i) => {
      const r = document.createElementNS(ns, 'rect');
      const h = (n / max) * H;
      r.setAttribute('x', String(i * bw + 1));
      r.setAttribute('y', String(pad + H - h));
      r.setAttribute('width', String(bw - 2));
      r.setAttribute('height', String(h));
      const mid = lo + (i + 0.5) * w;
      r.setAttribute('fill', mid >= 0 ? '#26a69a' : '#ef5350');
      const t = document.createElementNS(ns, 'title');
      t.textContent = `${fx.money(lo + i * w, ccy)} to ${fx.money(lo + (i + 1) * w, ccy)}: ${n} trades`;
      r.append(t);
      svg.append(r);
    });
    const label = (x, anchor, text) => {
      const t = document.createElementNS(ns, 'text');
      t.setAttribute('x', String(x));
      t.setAttribute('y', String(H + 2 * pad - 4));
      t.setAttribute('text-anchor', anchor);
      t.setAttribute('font-size', '12');
      t.setAttribute('fill', '#6a7385');
      t.textContent = text;
      svg.append(t);
    };
    label(0, 'start', fx.money(lo, ccy));
    label(W, 'end', fx.money(hi, ccy));
    if (lo < 0 && hi > 0) label(((0 - lo) / (hi - lo)) * W, 'middle', '0');
    return el(
      'div',
      null,
      svg,
      el('div', {
        class: 'sub',
        text: `${xs.length} trades, ${bins} bins of ${fx.money(w, ccy)}; largest bin ${max}`,
      }),
    );
  }

  mark('monthly');
  // ---- trades table
  const trSection = el('section', { id: 'trades-section' }, el('h2', { text: 'Trades' }));
  app.append(trSection);
  const instSel = el(
    'select',
    { id: 'filter-instrument' },
    el('option', { value: '', text: 'all instruments' }),
    ...instruments.map((i) => el('option', { value: i, text: i })),
  );
  const sideSel = el(
    'select',
    { id: 'filter-side' },
    el('option', { value: '', text: 'long and short' }),
    el('option', { value: 'long', text: 'long' }),
    el('option', { value: 'short', text: 'short' }),
  );
  const plSel = el(
    'select',
    { id: 'filter-pl' },
    el('option', { value: '', text: 'any P/L' }),
    el('option', { value: 'win', text: 'winners (P/L > 0)' }),
    el('option', { value: 'loss', text: 'losers (P/L < 0)' }),
  );
  const exitReasons = [...new Set(D.trades.map((t) => t.closeReason))].sort();
  const exitSel = el(
    'select',
    { id: 'filter-exit' },
    el('option', { value: '', text: 'any exit' }),
    ...exitReasons.map((r) =>
      el('option', { value: r === '' ? '(open)' : r, text: r === '' ? 'still open' : fx.reason(r) }),
    ),
  );
  const day = (t) => (t === undefined ? '' : new Date(t * 1000).toISOString().slice(0, 10));
  const firstOpen = D.trades.reduce((a, t) => Math.min(a, t.openTime), Infinity);
  const lastTime = D.trades.reduce((a, t) => Math.max(a, t.closeTime ?? t.openTime), -Infinity);
  const fromIn = el('input', {
    type: 'date',
    id: 'filter-from',
    value: day(D.trades.length ? firstOpen : undefined),
  });
  const toIn = el('input', {
    type: 'date',
    id: 'filter-to',
    value: day(D.trades.length ? lastTime : undefined),
  });
  const count = el('span', { class: 'sub', id: 'trades-count' });
  const csvBtn = el('button', {
    type: 'button',
    id: 'export-csv',
    text: 'Export CSV',
    onclick: () => download(),
  });
  trSection.append(
    el(
      'div',
      { class: 'filters' },
      instSel,
      sideSel,
      plSel,
      exitSel,
      el('label', null, 'opened from ', fromIn),
      el('label', null, 'to ', toIn),
      csvBtn,
      count,
    ),
    el('p', {
      class: 'note',
      text: `${fx.zone === 'UTC' ? 'Dates are UTC and filter by the opening day' : `Times are ${fx.zone}'s; the dates filter by the opening day in UTC`}; the export holds the rows that pass the filters, in the order shown. Click a trade to centre its chart on it; click a heading to sort. MAE and MFE: the lowest and highest P/L (${ccy}) the trade showed while open, from the bid/ask highs and lows of the candles marked meanwhile and its exit; run-up: its best price move in its favour, in % of the entry price.${D.trades.length && D.trades.every((t) => t.mae === null) ? " This run folder's trades.csv has no MAE/MFE columns (an older fxflow): rerun the backtest for them." : ''}`,
    }),
  );
  // Prices at each instrument's display precision (the recorded candles'), P/L cumulated in closing order.
  const precisionOf = Object.fromEntries(D.candles.map((c) => [c.instrument, c.precision]));
  const price = (t, x) =>
    x === null
      ? ''
      : precisionOf[t.instrument] !== undefined
        ? x.toFixed(precisionOf[t.instrument])
        : String(x);
  const cumPL = new Map();
  {
    let acc = 0;
    for (const t of D.trades.filter((x) => x.closeTime !== null)) cumPL.set(t.id, (acc += t.pl));
  }
  state.cumPL = (id) => cumPL.get(id) ?? null;
  const COLS = [
    ['id', 'trade', (t) => Number(t.id), (t) => t.id],
    ['instrument', 'instrument', (t) => t.instrument, (t) => t.instrument, 'l'],
    ['side', 'side', (t) => (t.units > 0 ? 'long' : 'short'), (t) => (t.units > 0 ? 'long' : 'short'), 'l'],
    ['units', 'units', (t) => Math.abs(t.units), (t) => String(Math.abs(t.units))],
    ['openTime', 'opened', (t) => t.openTime, (t) => fx.date(t.openTime), 'l'],
    ['openPrice', 'entry', (t) => t.openPrice, (t) => price(t, t.openPrice)],
    [
      'closeTime',
      'closed',
      (t) => t.closeTime ?? Infinity,
      (t) => (t.closeTime === null ? 'open' : fx.date(t.closeTime)),
      'l',
    ],
    ['closePrice', 'exit', (t) => t.closePrice ?? 0, (t) => price(t, t.closePrice)],
    ['pl', 'P/L', (t) => t.pl, (t) => fx.num(t.pl, 2)],
    [
      'cumPL',
      'cumulative P/L',
      (t) => cumPL.get(t.id) ?? -Infinity,
      (t) => (cumPL.has(t.id) ? fx.num(cumPL.get(t.id), 2) : ''),
    ],
    ['financing', 'financing', (t) => t.financing, (t) => fx.num(t.financing, 2)],
    ['spreadCost', 'spread cost', (t) => t.spreadCost, (t) => fx.num(t.spreadCost, 2)],
    ['mae', 'MAE', (t) => t.mae ?? -Infinity, (t) => (t.mae === null ? '' : fx.num(t.mae, 2))],
    ['mfe', 'MFE', (t) => t.mfe ?? -Infinity, (t) => (t.mfe === null ? '' : fx.num(t.mfe, 2))],
    ['runUp', 'run-up %', (t) => t.runUp ?? -Infinity, (t) => (t.runUp === null ? '' : fx.num(t.runUp, 3))],
    [
      'held',
      'held',
      (t) => (t.closeTime ?? Infinity) - t.openTime,
      (t) => (t.closeTime === null ? '' : fx.duration((t.closeTime - t.openTime) / 3600)),
    ],
    ['closeReason', 'exit by', (t) => t.closeReason, (t) => fx.reason(t.closeReason), 'l'],
  ];
  let sortKey = null,
    sortDir = 1,
    shown = 200,
    selected = null;
  const thead = el('tr');
  const ths = COLS.map(([key, label, , , cls]) =>
    el('th', {
      class: `sortable ${cls || ''}`,
      'data-key': key,
      text: label,
      onclick: () => {
        sortDir = sortKey === key ? -sortDir : 1;
        sortKey = key;
        render();
      },
    }),
  );
  thead.append(...ths);
  const tbody = el('tbody');
  const more = el('button', {
    type: 'button',
    text: 'Show more',
    onclick: () => {
      shown += 1000;
      render();
    },
  });
  trSection.append(
    el('div', { class: 'scroll' }, el('table', { id: 'trades' }, el('thead', null, thead), tbody)),
    more,
  );
  for (const x of [instSel, sideSel, plSel, exitSel, fromIn, toIn])
    x.addEventListener('change', () => {
      shown = 200;
      render();
    });
  function rows() {
    const inst = instSel.value,
      side = sideSel.value,
      pl = plSel.value,
      exit = exitSel.value;
    const from = fromIn.value ? Date.parse(`${fromIn.value}T00:00:00Z`) / 1000 : -Infinity;
    const to = toIn.value ? Date.parse(`${toIn.value}T00:00:00Z`) / 1000 + 86400 : Infinity;
    let xs = D.trades.filter(
      (t) =>
        (!inst || t.instrument === inst) &&
        (!side || (side === 'long') === t.units > 0) &&
        (!pl || (pl === 'win' ? t.pl > 0 : t.pl < 0)) &&
        (!exit || t.closeReason === (exit === '(open)' ? '' : exit)) &&
        t.openTime >= from &&
        t.openTime < to,
    );
    if (sortKey !== null) {
      const get = COLS.find((c) => c[0] === sortKey)[2];
      xs = xs.slice().sort((a, b) => {
        const x = get(a),
          y = get(b);
        return (x < y ? -1 : x > y ? 1 : 0) * sortDir;
      });
    }
    return xs;
  }
  /** The rows that pass the filters as CSV (the trades.csv columns that the page has). */
  function toCsv(xs) {
    const iso = (t) => (t === null ? '' : new Date(t * 1000).toISOString());
    const q = (v) => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
    const head = [
      'id',
      'instrument',
      'side',
      'units',
      'openTime',
      'openPrice',
      'closeTime',
      'closePrice',
      'realizedPL',
      'financing',
      'spreadCost',
      'commission',
      'exitReason',
      'mae',
      'mfe',
      'runUp',
    ];
    const lines = [head.join(',')];
    for (const t of xs)
      lines.push(
        [
          t.id,
          t.instrument,
          t.units > 0 ? 'long' : 'short',
          Math.abs(t.units),
          iso(t.openTime),
          t.openPrice,
          iso(t.closeTime),
          t.closePrice ?? '',
          t.pl,
          t.financing,
          t.spreadCost,
          t.commission,
          t.closeReason,
          t.mae ?? '',
          t.mfe ?? '',
          t.runUp ?? '',
        ]
          .map(q)
          .join(','),
      );
    return `${lines.join('\n')}\n`;
  }
  function download() {
    const text = toCsv(rows());
    const a = el('a', {
      href: URL.createObjectURL(new Blob([text], { type: 'text/csv' })),
      download: `${D.name}-trades.csv`,
    });
    document.body.append(a);
    a.click();
    a.remove();
    state.lastCsv = text;
  }
  state.tradesCsv = () => toCsv(rows());
  function render() {
    const xs = rows();
    for (const th of ths) th.classList.remove('sorted-asc', 'sorted-desc');
    if (sortKey !== null)
      ths.find((th) => th.dataset.key === sortKey).classList.add(sortDir > 0 ? 'sorted-asc' : 'sorted-desc');
    const frag = document.createDocumentFragment();
    for (const t of xs.slice(0, shown)) {
      const tr = el(
        'tr',
        { 'data-trade': t.id, class: t.id === selected ? 'selected' : '' },
        ...COLS.map(([key, , , show, cls]) =>
          el('td', {
            class: `${cls || ''} ${key === 'pl' ? (t.pl > 0 ? 'pos' : t.pl < 0 ? 'neg' : '') : ''}`,
            text: show(t),
          }),
        ),
      );
      tr.addEventListener('click', () => focusTrade(t));
      frag.append(tr);
    }
    tbody.replaceChildren(frag);
    count.textContent = `${xs.length} of ${D.trades.length} trades${xs.length > shown ? `, first ${shown} shown` : ''}`;
    more.style.display = xs.length > shown ? '' : 'none';
  }
  function focusTrade(t) {
    selected = t.id;
    for (const r of tbody.querySelectorAll('tr.selected')) r.classList.remove('selected');
    tbody.querySelector(`tr[data-trade="${t.id}"]`)?.classList.add('selected');
    byInstrument[t.instrument]?.focus(t);
    state.focused = t.id;
  }
  state.focusTrade = (id) => {
    const t = D.trades.find((x) => x.id === id);
    if (t) focusTrade(t);
  };
  render();

  mark('trades');
  // ---- configuration, params, data
  const cfg = el('section', { id: 'config' }, el('h2', { text: 'Configuration, params and data' }));
  app.append(cfg);
  cfg.append(
    el('h3', { text: 'Strategy params' }),
    el(
      'table',
      null,
      el(
        'tbody',
        null,
        ...Object.entries(D.params).map(([k, v]) =>
          el(
            'tr',
            null,
            el('td', { class: 'l', text: k }),
            el('td', { class: 'l', text: JSON.stringify(v) }),
          ),
        ),
      ),
    ),
  );
  const data = D.config && D.config.data ? D.config.data : null;
  cfg.append(el('h3', { text: 'Data source and coverage' }));
  if (data)
    cfg.append(
      el('p', {
        text: `catalog ${data.catalog ?? '?'}, spread model ${data.spread ?? '?'}${data.spreadPips ? ` (${data.spreadPips} pips)` : ''}; run period ${D.config.run?.from ?? '?'} → ${D.config.run?.to ?? '?'}; intra-candle path model ${D.config.fill?.path ?? '?'}`,
      }),
    );
  if (D.candles.length === 0)
    cfg.append(el('p', { class: 'sub', text: 'No candles are recorded in the run folder.' }));
  else
    cfg.append(
      el(
        'table',
        { id: 'coverage' },
        el(
          'thead',
          null,
          el(
            'tr',
            null,
            ...['instrument', 'granularity', 'candles', 'first', 'last'].map((h) =>
              el('th', { class: 'l', text: h }),
            ),
          ),
        ),
        el(
          'tbody',
          null,
          ...D.candles.map((s) =>
            el(
              'tr',
              null,
              el('td', { class: 'l', text: s.instrument }),
              el('td', { class: 'l', text: s.granularity }),
              el('td', { class: 'l', text: s.count.toLocaleString('en-US') }),
              el('td', { class: 'l', text: s.count ? fx.date(s.from) : '-' }),
              el('td', { class: 'l', text: s.count ? fx.date(s.to) : '-' }),
            ),
          ),
        ),
      ),
    );
  // The properties as a table (section, setting, value: a setting's path in config.json), the file as it is below it.
  cfg.append(el('h3', { text: 'Properties (config.json)' }));
  if (!D.config) cfg.append(el('p', { class: 'sub', text: 'config.json is missing' }));
  else {
    const rows = [];
    const walk = (section, path, v) => {
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) {
        for (const [k, x] of Object.entries(v))
          walk(section ?? k, section === null ? '' : path ? `${path}.${k}` : k, x);
      } else
        rows.push([
          section ?? '',
          path,
          Array.isArray(v)
            ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ')
            : v !== null && typeof v === 'object'
              ? '—'
              : String(v),
        ]);
    };
    walk(null, '', D.config);
    cfg.append(
      el(
        'table',
        { id: 'properties', class: 'kv' },
        el(
          'thead',
          null,
          el('tr', null, ...['section', 'setting', 'value'].map((h) => el('th', { class: 'l', text: h }))),
        ),
        el(
          'tbody',
          null,
          ...rows.map(([sec, k, v]) =>
            el(
              'tr',
              { 'data-key': `${sec}.${k}` },
              el('td', { class: 'l', text: sec }),
              el('td', { class: 'l', text: k }),
              el('td', { class: 'l', text: v }),
            ),
          ),
        ),
      ),
    );
    cfg.append(
      el(
        'details',
        null,
        el('summary', { text: 'config.json as it is' }),
        el('pre', { text: JSON.stringify(D.config, null, 2) }),
      ),
    );
  }
  mark('done');
  state.ready = true;
})();
