// The run report page: reads the JSON data block and draws everything (plain browser script).
'use strict';
(function () {
  const state = (window.fxReport = { ready: false, charts: {}, markerCount: 0, fills: 0, lastNav: null, errors: [] });
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
    const undelta = (xs) => { const out = new Array(xs.length); let acc = 0; for (let i = 0; i < xs.length; i++) out[i] = acc = i === 0 ? xs[0] : r6(acc + xs[i]); return out; };
    const tid = undelta(T.id), open = undelta(T.open);
    p.trades = tid.map((id, i) => ({
      id: String(id), instrument: names[T.inst[i]], units: T.units[i], openTime: open[i], closeTime: T.held[i] < 0 ? null : r6(open[i] + T.held[i]),
      openPrice: T.openPrice[i], closePrice: T.held[i] < 0 ? null : T.closePrice[i], pl: T.pl[i], financing: T.financing[i], spreadCost: T.spread[i], commission: T.commission[i], closeReason: names[T.reason[i]],
    }));
    const fid = undelta(F.id), ftime = undelta(F.time);
    p.fills = fid.map((id, i) => ({ id: String(id), time: ftime[i], instrument: names[F.inst[i]], units: F.units[i], price: F.price[i], reason: names[F.reason[i]], tradeID: F.trade[i] === null ? '' : String(id + F.trade[i]) }));
    p.levels = {};
    const ltrade = undelta(L.trade), ltime = undelta(L.time), kinds = ['sl', 'tp', 'ts'];
    for (let i = 0; i < ltrade.length; i++) {
      const lv = (p.levels[String(ltrade[i])] ??= { sl: [], tp: [], ts: [] });
      lv[kinds[L.kind[i]]].push([ltime[i], L.value[i]]);
    }
    delete p.packed;
    return p;
  }
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const GRAN = { S5: 5, S10: 10, S15: 15, S30: 30, M1: 60, M2: 120, M4: 240, M5: 300, M10: 600, M15: 900, M30: 1800, H1: 3600, H2: 7200, H3: 10800, H4: 14400, H6: 21600, H8: 28800, H12: 43200, D: 86400, W: 604800 };
  const STEPS = [60, 300, 900, 3600, 14400, 86400, 604800];
  /** Bars a chart holds at most before it switches to coarser candles (the wide view). */
  const MAX_BARS = 4000;
  /** Above this many fills in view, fills on the same bar and side share one marker (with their count). */
  const GROUP_OVER = 3000;
  const chartOptions = (height) => ({
    height,
    layout: { attributionLogo: true, background: { color: '#ffffff' }, textColor: '#1d2330' },
    grid: { vertLines: { color: '#f0f1f4' }, horzLines: { color: '#f0f1f4' } },
    timeScale: { timeVisible: true, secondsVisible: false, rightOffset: 4 },
    localization: { timeFormatter: (t) => fx.date(t) },
  });

  // ---- header and warnings
  const params = Object.entries(D.params).map(([k, v]) => `${k}=${v}`).join(' ');
  app.append(
    el('h1', { text: `${D.strategy}` }),
    el('div', { class: 'sub', text: `${params}  ·  ${D.period.from ?? '?'} → ${D.period.to ?? '?'}  ·  run ${D.name}` }),
  );
  if (D.warnings.length > 0) {
    app.append(el('div', { class: 'warn', id: 'warnings' }, el('strong', { text: 'This report is incomplete:' }), el('ul', null, ...D.warnings.map((w) => el('li', { text: w })))));
  }

  // ---- metrics
  const grid = el('div', { class: 'metrics', id: 'metrics' });
  for (const m of D.metrics) {
    const v = m.kind === 'days' ? (m.value === null ? 'n/a' : `${m.value.toFixed(1)} d`) : fx.metric(m, ccy);
    const sign = m.kind === 'money' && typeof m.value === 'number' && ['netPL', 'realizedPL', 'expectancy', 'bestTrade', 'worstTrade', 'unrealizedPL'].includes(m.key) ? (m.value > 0 ? 'pos' : m.value < 0 ? 'neg' : '') : '';
    grid.append(el('div', { class: 'metric', 'data-key': m.key, 'data-def': m.def, title: m.def }, el('div', { class: 'k', text: m.label }), el('div', { class: `v ${sign}`, text: v })));
  }
  app.append(el('section', null, el('h2', { text: 'Figures' }), grid));

  // ---- price charts
  const instruments = [...new Set([...D.fills.map((f) => f.instrument), ...D.trades.map((t) => t.instrument)])];
  for (const s of D.candles) if (!instruments.includes(s.instrument) && D.candles.length === 1) instruments.push(s.instrument);
  mark('figures');
  const priceSection = el('section', { id: 'prices' }, el('h2', { text: 'Prices, fills and protective levels' }));
  app.append(priceSection);
  if (instruments.length === 0) priceSection.append(el('p', { class: 'sub', text: 'No instrument was traded: nothing to chart.' }));
  const byInstrument = {};
  for (const inst of instruments) byInstrument[inst] = priceChart(inst, priceSection);

  function upper(arr, x) {
    // Index of the last element <= x (-1 when none).
    let lo = 0, hi = arr.length - 1, r = -1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      if (arr[m] <= x) { r = m; lo = m + 1; } else hi = m - 1;
    }
    return r;
  }

  function aggregate(b, step) {
    const n = b.t.length;
    const t = [], o = [], h = [], l = [], c = [];
    for (let i = 0; i < n; i++) {
      const k = Math.floor(b.t[i] / step) * step;
      const j = t.length - 1;
      if (j >= 0 && t[j] === k) {
        if (b.h[i] > h[j]) h[j] = b.h[i];
        if (b.l[i] < l[j]) l[j] = b.l[i];
        c[j] = b.c[i];
      } else {
        t.push(k); o.push(b.o[i]); h.push(b.h[i]); l.push(b.l[i]); c.push(b.c[i]);
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
    const legend = el('div', { class: 'legend' },
      el('span', null, el('i', { style: 'background:#2962ff' }), 'buy fill'),
      el('span', null, el('i', { style: 'background:#e65100' }), 'sell fill'),
      el('span', null, el('i', { style: 'background:#c62f2f' }), 'stop loss'),
      el('span', null, el('i', { style: 'background:#138a4b' }), 'take profit'),
      el('span', null, el('i', { style: 'background:#b8860b' }), 'trailing stop (initial level)'));
    parent.append(el('h3', { text: `${inst}${enc ? ` · ${enc.granularity}` : ''}` }), info, box, legend);
    const chart = LC.createChart(box, chartOptions(420));
    const digits = enc ? enc.precision : 5;
    const priceFormat = { type: 'price', precision: digits, minMove: Math.pow(10, -digits) };
    const view = { chart, inst, fills, trades, series: null, markers: null, lanes: [], level: null, lo: 0, hi: -1, lines: [] };
    let base;
    if (enc && enc.count > 0) {
      const b = decodeCandles(enc);
      mark(`decode ${inst}`);
      base = { t: b.t, o: b.o, h: b.h, l: b.l, c: b.c, step: GRAN[enc.granularity] || 60 };
      view.series = chart.addSeries(LC.CandlestickSeries, { priceFormat, upColor: '#26a69a', downColor: '#ef5350', wickUpColor: '#26a69a', wickDownColor: '#ef5350', borderVisible: false });
    } else {
      // No candles (an older run folder): the fill prices as a line, so the fills still show.
      const t = [], c = [];
      for (const f of fills) {
        if (t.length > 0 && t[t.length - 1] === f.time) c[c.length - 1] = f.price;
        else { t.push(f.time); c.push(f.price); }
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
    const laneSeries = (k, kind) => {
      view.lanes[k] ??= {};
      const color = kind === 'sl' ? '#c62f2f' : kind === 'tp' ? '#138a4b' : '#b8860b';
      return (view.lanes[k][kind] ??= chart.addSeries(LC.LineSeries, { color, lineWidth: 1, lineStyle: kind === 'ts' ? 1 : 2, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false, priceFormat }));
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
      let lo = all ? 0 : Math.max(0, upper(L.t, from - span) );
      let hi = all ? L.t.length - 1 : Math.min(L.t.length - 1, upper(L.t, to + span) + 1);
      if (!force && view.level === k && view.lo <= lo && view.hi >= hi) return false;
      if (!all) {
        // A little wider than needed, so panning does not rebuild on every move.
        lo = Math.max(0, upper(L.t, from - 1.5 * span));
        hi = Math.min(L.t.length - 1, upper(L.t, to + 1.5 * span) + 1);
      }
      view.level = k; view.lo = lo; view.hi = hi;
      const data = new Array(hi - lo + 1);
      for (let i = lo; i <= hi; i++) data[i - lo] = base.line ? { time: L.t[i], value: L.c[i] } : { time: L.t[i], open: L.o[i], high: L.h[i], low: L.l[i], close: L.c[i] };
      view.series.setData(data);
      // Fills in the window, each on the bar that holds it.
      const tLo = L.t[lo], tHi = L.t[hi] + L.step;
      const marks = [];
      for (const f of fills) {
        if (f.time < tLo || f.time >= tHi) continue;
        const i = upper(L.t, f.time);
        if (i < lo) continue;
        const buy = f.units > 0;
        marks.push({ time: L.t[i], position: 'atPriceMiddle', price: f.price, shape: buy ? 'arrowUp' : 'arrowDown', color: buy ? '#2962ff' : '#e65100', id: f.id, text: '' });
      }
      view.fillsMarked = marks.length;
      if (marks.length <= 150) for (const m of marks) { const f = fills.find((x) => x.id === m.id); m.text = `${f.units > 0 ? 'B' : 'S'} ${Math.abs(f.units)}`; }
      if (marks.length > GROUP_OVER) {
        // The wide view of a busy run: one marker per bar and side, at the fills' mean price, with their count.
        const groups = [];
        for (const m of marks) {
          const g = groups.length > 0 && groups[groups.length - 1].time === m.time ? groups.findLast((x) => x.time === m.time && x.shape === m.shape) : undefined;
          if (g) { g.n++; g.sum += m.price; g.price = g.sum / g.n; g.text = String(g.n); }
          else groups.push({ ...m, n: 1, sum: m.price, id: `g${m.id}` });
        }
        view.markers.setMarkers(groups.map(({ n, sum, ...x }) => x));
      } else view.markers.setMarkers(marks);
      drawLevels(L, lo, hi);
      info.textContent = `${totalBars.toLocaleString('en-US')} ${base.line ? 'fill prices' : `${enc.granularity} candles`} · showing ${k === 0 ? 'full detail' : `${stepLabel(L.step)} bars (downsampled; zoom in for ${enc ? enc.granularity : 'full detail'})`} · ${fills.length} fills · ${trades.length} trades`;
      return true;
    }

    function drawLevels(L, lo, hi) {
      const lanes = [];
      const out = [];
      for (let k = 0; k < LANES; k++) out.push({ sl: [], tp: [], ts: [] });
      const tLo = L.t[lo], tHi = L.t[hi];
      for (const tr of trades) {
        const lv = D.levels[tr.id];
        if (!lv) continue;
        const end = tr.closeTime ?? tHi;
        if (end < tLo || tr.openTime > tHi) continue;
        const a = Math.max(lo, upper(L.t, tr.openTime)), b = Math.min(hi, upper(L.t, end));
        if (b <= a) continue;
        let lane = -1;
        for (let k = 0; k < LANES; k++) if ((lanes[k] ?? -2) + 1 < a) { lane = k; break; }
        if (lane < 0) continue;
        lanes[lane] = b;
        const sign = tr.units > 0 ? 1 : -1;
        const put = (arr, changes) => {
          if (changes.length === 0) return;
          // Whitespace does not break a line series: the segment that joins this trade to the
          // lane's next one is drawn transparent (a point's colour is that of the segment starting on it).
          let prevIdx = -1, prevPrice = null;
          for (const [t, p] of changes) {
            const i = Math.min(b, Math.max(a, upper(L.t, t)));
            if (prevPrice !== null && i - 1 > prevIdx) arr.push({ time: L.t[i - 1], value: prevPrice });
            if (i > prevIdx) arr.push({ time: L.t[i], value: p });
            else arr[arr.length - 1] = { time: L.t[i], value: p };
            prevIdx = i; prevPrice = p;
          }
          if (b > prevIdx) arr.push({ time: L.t[b], value: prevPrice });
          arr[arr.length - 1] = { ...arr[arr.length - 1], color: 'rgba(0,0,0,0)' };
        };
        put(out[lane].sl, lv.sl);
        put(out[lane].tp, lv.tp);
        put(out[lane].ts, lv.ts.map(([t, d]) => [t, tr.openPrice - sign * d]));
      }
      for (let k = 0; k < LANES; k++) for (const kind of ['sl', 'tp', 'ts']) {
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
    state.markerCount += view.markers.markers().length;
    state.fillsMarked = (state.fillsMarked ?? 0) + (view.fillsMarked ?? 0);
    state.fills += fills.length;
    state.charts[inst] = view;

    view.focus = (tr) => {
      const end = tr.closeTime ?? base.t[base.t.length - 1];
      const pad = Math.max((end - tr.openTime) * 1.5, base.step * 40);
      const from = tr.openTime - pad, to = end + pad;
      show(from, to, true);
      chart.timeScale().setVisibleRange({ from, to });
      for (const l of view.lines) view.series.removePriceLine(l);
      view.lines = [];
      const lv = D.levels[tr.id] || { sl: [], tp: [], ts: [] };
      const line = (price, color, title, style) => view.lines.push(view.series.createPriceLine({ price, color, title, lineWidth: 1, lineStyle: style, axisLabelVisible: true }));
      line(tr.openPrice, '#2962ff', `#${tr.id} entry`, 0);
      if (tr.closePrice !== null) line(tr.closePrice, '#e65100', `#${tr.id} exit`, 0);
      if (lv.sl.length) line(lv.sl[lv.sl.length - 1][1], '#c62f2f', 'SL', 2);
      if (lv.tp.length) line(lv.tp[lv.tp.length - 1][1], '#138a4b', 'TP', 2);
      if (lv.ts.length) line(tr.openPrice - (tr.units > 0 ? 1 : -1) * lv.ts[lv.ts.length - 1][1], '#b8860b', 'TS start', 1);
      box.scrollIntoView({ block: 'center' });
    };
    return view;
  }

  function dedupe(pts) {
    const out = [];
    for (const p of pts) {
      if (out.length > 0 && out[out.length - 1].time >= p.time) { if (out[out.length - 1].time === p.time) out[out.length - 1] = p; continue; }
      out.push(p);
    }
    return out;
  }
  function stepLabel(s) {
    return s >= 604800 ? 'weekly' : s >= 86400 ? 'daily' : s >= 3600 ? `${s / 3600}-hour` : `${s / 60}-minute`;
  }

  mark('prices');
  // ---- equity, drawdown, underwater periods
  const eqSection = el('section', { id: 'equity' }, el('h2', { text: 'Equity and drawdown' }));
  app.append(eqSection);
  const E = D.equity;
  const eqPts = { bal: [], nav: [], dd: [], shade: [] };
  {
    let peak = -Infinity;
    const worst = D.drawdowns.slice(0, 3);
    for (let i = 0; i < E.t.length; i++) {
      const t = E.t[i];
      if (eqPts.nav.length > 0 && eqPts.nav[eqPts.nav.length - 1].time >= t) { eqPts.nav.pop(); eqPts.bal.pop(); eqPts.dd.pop(); eqPts.shade.pop(); }
      peak = Math.max(peak, E.nav[i]);
      eqPts.bal.push({ time: t, value: E.balance[i] });
      eqPts.nav.push({ time: t, value: E.nav[i] });
      eqPts.dd.push({ time: t, value: peak > 0 ? ((E.nav[i] - peak) / peak) * 100 : 0 });
      const under = worst.some((d) => t >= d.start && t <= (d.end ?? Infinity));
      eqPts.shade.push({ time: t, value: under ? 1 : 0 });
    }
  }
  if (eqPts.nav.length === 0) eqSection.append(el('p', { class: 'sub', text: 'No equity points.' }));
  else {
    const eqBox = el('div', { class: 'chart', id: 'equity-chart' });
    const ddBox = el('div', { class: 'chart small', id: 'drawdown-chart' });
    eqSection.append(
      el('div', { class: 'legend' }, el('span', null, el('i', { style: 'background:#2962ff' }), 'NAV'), el('span', null, el('i', { style: 'background:#8a93a6' }), 'balance'), el('span', null, el('i', { style: 'background:rgba(198,47,47,0.4)' }), 'underwater: the 3 worst drawdowns')),
      eqBox, el('h3', { text: 'Drawdown (% below the NAV peak)' }), ddBox,
    );
    const eq = LC.createChart(eqBox, chartOptions(420));
    // Underwater periods: a band on a hidden 0..1 scale, 1 inside the worst drawdowns.
    const shade = eq.addSeries(LC.AreaSeries, { priceScaleId: 'shade', priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false, lineVisible: false, lineColor: 'rgba(0,0,0,0)', topColor: 'rgba(198,47,47,0.13)', bottomColor: 'rgba(198,47,47,0.13)', lineType: 1 });
    eq.priceScale('shade').applyOptions({ scaleMargins: { top: 0, bottom: 0 }, visible: false });
    shade.setData(eqPts.shade);
    const bal = eq.addSeries(LC.LineSeries, { color: '#8a93a6', lineWidth: 1, title: 'balance' });
    const nav = eq.addSeries(LC.LineSeries, { color: '#2962ff', lineWidth: 2, title: 'NAV' });
    bal.setData(eqPts.bal);
    nav.setData(eqPts.nav);
    eq.timeScale().fitContent();
    const dd = LC.createChart(ddBox, chartOptions(220));
    const ddSeries = dd.addSeries(LC.AreaSeries, { lineColor: '#c62f2f', topColor: 'rgba(198,47,47,0.05)', bottomColor: 'rgba(198,47,47,0.35)', invertFilledArea: true, priceFormat: { type: 'percent' } });
    ddSeries.setData(eqPts.dd);
    dd.timeScale().fitContent();
    state.navSeries = nav;
    const last = nav.data();
    state.lastNav = last.length ? last[last.length - 1].value : null;
  }
  if (D.drawdowns.length > 0) {
    const tb = el('tbody');
    D.drawdowns.forEach((d, i) => tb.append(el('tr', null,
      el('td', { text: String(i + 1) }), el('td', { class: 'l', text: fx.date(d.start) }), el('td', { class: 'l', text: fx.date(d.trough) }), el('td', { class: 'l', text: d.end === null ? 'not recovered' : fx.date(d.end) }),
      el('td', { class: 'neg', text: fx.money(-d.depth, ccy) }), el('td', { class: 'neg', text: fx.pct(-d.depthPct) }), el('td', { text: `${d.days.toFixed(1)} d` }))));
    eqSection.append(el('h3', { text: 'Worst drawdowns' }), el('table', { id: 'drawdowns' },
      el('thead', null, el('tr', null, ...['#', 'peak', 'trough', 'recovered', 'depth', 'depth %', 'duration'].map((h, i) => el('th', { class: i > 0 && i < 4 ? 'l' : '', text: h })))), tb));
  }

  mark('equity');
  // ---- monthly returns and the P/L distribution
  const cols = el('div', { class: 'cols' });
  app.append(cols);
  const monSection = el('section', { id: 'monthly' }, el('h2', { text: `Monthly P/L (${ccy}; hover: % of the month's opening NAV)` }));
  cols.append(monSection);
  if (D.monthly.length === 0) monSection.append(el('p', { class: 'sub', text: 'No equity curve: no monthly figures.' }));
  else {
    const years = [...new Set(D.monthly.map((m) => m.year))].sort();
    const tb = el('tbody');
    for (const y of years) {
      const row = el('tr', null, el('td', { class: 'l', text: String(y) }));
      let total = 0;
      for (let m = 0; m < 12; m++) {
        const c = D.monthly.find((x) => x.year === y && x.month === m);
        if (!c) { row.append(el('td')); continue; }
        total += c.pl;
        row.append(el('td', { class: c.pl > 0 ? 'pos' : c.pl < 0 ? 'neg' : '', 'data-pl': String(c.pl), title: fx.pct(c.pct), text: fx.num(c.pl, 0) }));
      }
      row.append(el('td', { 'data-total': String(total), class: total > 0 ? 'pos' : total < 0 ? 'neg' : '', text: fx.num(total, 0) }));
      tb.append(row);
    }
    monSection.append(el('div', { style: 'overflow-x:auto' }, el('table', { class: 'monthly' }, el('thead', null, el('tr', null, el('th', { class: 'l', text: 'year' }), ...MONTHS.map((m) => el('th', { text: m })), el('th', { text: 'year' }))), tb)));
  }
  const distSection = el('section', { id: 'distribution' }, el('h2', { text: 'Trade P/L distribution (closed trades)' }));
  cols.append(distSection);
  distSection.append(histogram(D.trades.filter((t) => t.closeTime !== null).map((t) => t.pl)));

  function histogram(xs) {
    if (xs.length === 0) return el('p', { class: 'sub', text: 'No closed trades.' });
    const lo = Math.min(...xs), hi = Math.max(...xs);
    const bins = Math.min(40, Math.max(5, Math.ceil(Math.sqrt(xs.length))));
    const w = (hi - lo) / bins || 1;
    const counts = new Array(bins).fill(0);
    for (const x of xs) counts[Math.min(bins - 1, Math.floor((x - lo) / w))]++;
    const max = Math.max(...counts);
    const W = 600, H = 240, pad = 24;
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', `0 0 ${W} ${H + 2 * pad}`);
    svg.setAttribute('width', '100%');
    svg.id = 'pl-histogram';
    const bw = W / bins;
    counts.forEach((n, i) => {
      const r = document.createElementNS(ns, 'rect');
      const h = (n / max) * H;
      r.setAttribute('x', String(i * bw + 1)); r.setAttribute('y', String(pad + H - h)); r.setAttribute('width', String(bw - 2)); r.setAttribute('height', String(h));
      const mid = lo + (i + 0.5) * w;
      r.setAttribute('fill', mid >= 0 ? '#26a69a' : '#ef5350');
      const t = document.createElementNS(ns, 'title');
      t.textContent = `${fx.money(lo + i * w, ccy)} to ${fx.money(lo + (i + 1) * w, ccy)}: ${n} trades`;
      r.append(t);
      svg.append(r);
    });
    const label = (x, anchor, text) => {
      const t = document.createElementNS(ns, 'text');
      t.setAttribute('x', String(x)); t.setAttribute('y', String(H + 2 * pad - 4)); t.setAttribute('text-anchor', anchor); t.setAttribute('font-size', '12'); t.setAttribute('fill', '#6a7385');
      t.textContent = text;
      svg.append(t);
    };
    label(0, 'start', fx.money(lo, ccy)); label(W, 'end', fx.money(hi, ccy));
    if (lo < 0 && hi > 0) label(((0 - lo) / (hi - lo)) * W, 'middle', '0');
    return el('div', null, svg, el('div', { class: 'sub', text: `${xs.length} trades, ${bins} bins of ${fx.money(w, ccy)}; largest bin ${max}` }));
  }

  mark('monthly');
  // ---- trades table
  const trSection = el('section', { id: 'trades-section' }, el('h2', { text: 'Trades' }));
  app.append(trSection);
  const instSel = el('select', { id: 'filter-instrument' }, el('option', { value: '', text: 'all instruments' }), ...instruments.map((i) => el('option', { value: i, text: i })));
  const sideSel = el('select', { id: 'filter-side' }, el('option', { value: '', text: 'long and short' }), el('option', { value: 'long', text: 'long' }), el('option', { value: 'short', text: 'short' }));
  const count = el('span', { class: 'sub' });
  trSection.append(el('div', { class: 'filters' }, instSel, sideSel, count, el('span', { class: 'sub', text: 'Click a trade to centre its chart on it; click a heading to sort.' })));
  const COLS = [
    ['id', 'trade', (t) => Number(t.id), (t) => t.id],
    ['instrument', 'instrument', (t) => t.instrument, (t) => t.instrument, 'l'],
    ['side', 'side', (t) => (t.units > 0 ? 'long' : 'short'), (t) => (t.units > 0 ? 'long' : 'short'), 'l'],
    ['units', 'units', (t) => Math.abs(t.units), (t) => String(Math.abs(t.units))],
    ['openTime', 'opened', (t) => t.openTime, (t) => fx.date(t.openTime), 'l'],
    ['openPrice', 'entry', (t) => t.openPrice, (t) => String(t.openPrice)],
    ['closeTime', 'closed', (t) => t.closeTime ?? Infinity, (t) => (t.closeTime === null ? 'open' : fx.date(t.closeTime)), 'l'],
    ['closePrice', 'exit', (t) => t.closePrice ?? 0, (t) => (t.closePrice === null ? '' : String(t.closePrice))],
    ['pl', 'P/L', (t) => t.pl, (t) => fx.num(t.pl, 2)],
    ['financing', 'financing', (t) => t.financing, (t) => fx.num(t.financing, 2)],
    ['spreadCost', 'spread cost', (t) => t.spreadCost, (t) => fx.num(t.spreadCost, 2)],
    ['held', 'held', (t) => (t.closeTime ?? Infinity) - t.openTime, (t) => (t.closeTime === null ? '' : fx.duration((t.closeTime - t.openTime) / 3600))],
    ['closeReason', 'exit by', (t) => t.closeReason, (t) => t.closeReason.replace(/_ORDER$/, '').replace(/_/g, ' ').toLowerCase(), 'l'],
  ];
  let sortKey = null, sortDir = 1, shown = 200, selected = null;
  const thead = el('tr');
  const ths = COLS.map(([key, label, , , cls]) => el('th', { class: `sortable ${cls || ''}`, 'data-key': key, text: label, onclick: () => { sortDir = sortKey === key ? -sortDir : 1; sortKey = key; render(); } }));
  thead.append(...ths);
  const tbody = el('tbody');
  const more = el('button', { type: 'button', text: 'Show more', onclick: () => { shown += 1000; render(); } });
  trSection.append(el('div', { class: 'scroll' }, el('table', { id: 'trades' }, el('thead', null, thead), tbody)), more);
  instSel.addEventListener('change', () => { shown = 200; render(); });
  sideSel.addEventListener('change', () => { shown = 200; render(); });
  function rows() {
    const inst = instSel.value, side = sideSel.value;
    let xs = D.trades.filter((t) => (!inst || t.instrument === inst) && (!side || (side === 'long') === t.units > 0));
    if (sortKey !== null) {
      const get = COLS.find((c) => c[0] === sortKey)[2];
      xs = xs.slice().sort((a, b) => { const x = get(a), y = get(b); return (x < y ? -1 : x > y ? 1 : 0) * sortDir; });
    }
    return xs;
  }
  function render() {
    const xs = rows();
    for (const th of ths) th.classList.remove('sorted-asc', 'sorted-desc');
    if (sortKey !== null) ths.find((th) => th.dataset.key === sortKey).classList.add(sortDir > 0 ? 'sorted-asc' : 'sorted-desc');
    const frag = document.createDocumentFragment();
    for (const t of xs.slice(0, shown)) {
      const tr = el('tr', { 'data-trade': t.id, class: t.id === selected ? 'selected' : '' }, ...COLS.map(([key, , , show, cls]) => el('td', { class: `${cls || ''} ${key === 'pl' ? (t.pl > 0 ? 'pos' : t.pl < 0 ? 'neg' : '') : ''}`, text: show(t) })));
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
  state.focusTrade = (id) => { const t = D.trades.find((x) => x.id === id); if (t) focusTrade(t); };
  render();

  mark('trades');
  // ---- configuration, params, data
  const cfg = el('section', { id: 'config' }, el('h2', { text: 'Configuration, params and data' }));
  app.append(cfg);
  cfg.append(el('h3', { text: 'Strategy params' }), el('table', null, el('tbody', null, ...Object.entries(D.params).map(([k, v]) => el('tr', null, el('td', { class: 'l', text: k }), el('td', { class: 'l', text: JSON.stringify(v) }))))));
  const data = D.config && D.config.data ? D.config.data : null;
  cfg.append(el('h3', { text: 'Data source and coverage' }));
  if (data) cfg.append(el('p', { text: `catalog ${data.catalog ?? '?'}, spread model ${data.spread ?? '?'}${data.spreadPips ? ` (${data.spreadPips} pips)` : ''}; run period ${D.config.run?.from ?? '?'} → ${D.config.run?.to ?? '?'}; intra-candle path model ${D.config.fill?.path ?? '?'}` }));
  if (D.candles.length === 0) cfg.append(el('p', { class: 'sub', text: 'No candles are recorded in the run folder.' }));
  else cfg.append(el('table', { id: 'coverage' }, el('thead', null, el('tr', null, ...['instrument', 'granularity', 'candles', 'first', 'last'].map((h) => el('th', { class: 'l', text: h })))),
    el('tbody', null, ...D.candles.map((s) => el('tr', null, el('td', { class: 'l', text: s.instrument }), el('td', { class: 'l', text: s.granularity }), el('td', { class: 'l', text: s.count.toLocaleString('en-US') }), el('td', { class: 'l', text: s.count ? fx.date(s.from) : '-' }), el('td', { class: 'l', text: s.count ? fx.date(s.to) : '-' }))))));
  cfg.append(el('h3', { text: 'config.json' }), el('pre', { text: D.config ? JSON.stringify(D.config, null, 2) : 'config.json is missing' }));
  mark('done');
  state.ready = true;
})();
