// The comparison page: equity curves overlaid, figures side by side with the differences marked.
'use strict';
(function () {
  const state = (window.fxReport = { ready: false, series: [], lastNavs: [] });
  const D = pageData();
  const LC = window.LightweightCharts;
  const { el } = fx;
  const app = document.getElementById('app');
  app.textContent = '';
  const COLORS = ['#2962ff', '#e65100', '#138a4b', '#8e24aa', '#c62f2f', '#00838f', '#6d4c41', '#546e7a'];
  app.append(el('h1', { text: `Comparison of ${D.runs.length} runs` }));
  if (D.notes && D.notes.length)
    app.append(
      el(
        'div',
        { class: 'warn', id: 'compare-notes' },
        el('strong', { text: 'Not like for like:' }),
        el('ul', null, ...D.notes.map((w) => el('li', { text: w }))),
      ),
    );
  const warns = D.runs.flatMap((r) => r.warnings.map((w) => `${r.name}: ${w}`));
  if (warns.length)
    app.append(
      el(
        'div',
        { class: 'warn' },
        el('strong', { text: 'Incomplete runs:' }),
        el('ul', null, ...warns.map((w) => el('li', { text: w }))),
      ),
    );

  const eq = el('section', { id: 'equity' }, el('h2', { text: 'NAV' }));
  app.append(eq);
  // Each run named by what sets it apart: the params that differ between the runs (the run folder on hover).
  const allKeys = [...new Set(D.runs.flatMap((r) => Object.keys(r.params)))];
  const differing = allKeys.filter((k) => new Set(D.runs.map((r) => JSON.stringify(r.params[k]))).size > 1);
  const strategies = new Set(D.runs.map((r) => r.strategy)).size;
  const legendOf = (r, i) => {
    const ps = differing.map((k) => `${k}=${k in r.params ? String(r.params[k]) : '—'}`).join(' ');
    return `${i + 1}. ${strategies > 1 ? `${r.strategy} ` : ''}${ps || '(same params)'}`;
  };
  state.legend = D.runs.map(legendOf);
  eq.append(
    el(
      'div',
      { class: 'legend', id: 'legend' },
      ...D.runs.map((r, i) =>
        el(
          'span',
          { title: `run folder ${r.name}` },
          el('i', { style: `background:${COLORS[i % COLORS.length]}` }),
          legendOf(r, i),
        ),
      ),
    ),
  );
  const box = el('div', { class: 'chart', id: 'equity-chart' });
  eq.append(box);
  const chart = fx.chart(box, {
    height: 420,
    layout: { attributionLogo: true },
    timeScale: { timeVisible: true, minBarSpacing: 0.001 },
  });
  D.runs.forEach((r, i) => {
    const s = chart.addSeries(LC.LineSeries, {
      color: COLORS[i % COLORS.length],
      lineWidth: 2,
      title: String(i + 1),
    });
    const pts = [];
    for (let k = 0; k < r.equity.t.length; k++) {
      const p = { time: r.equity.t[k], value: r.equity.nav[k] };
      if (pts.length && pts[pts.length - 1].time >= p.time) pts[pts.length - 1] = p;
      else pts.push(p);
    }
    s.setData(pts);
    state.series.push(s);
    state.lastNavs.push(pts.length ? pts[pts.length - 1].value : null);
  });
  chart.timeScale().fitContent();
  state.chart = chart;

  const table = (id, title, keys, cell) => {
    const tb = el('tbody');
    for (const k of keys) tb.append(cell(k));
    app.append(
      el(
        'section',
        { id },
        el('h2', { text: title }),
        el(
          'div',
          { style: 'overflow-x:auto' },
          el(
            'table',
            { class: 'compare' },
            el(
              'thead',
              null,
              el(
                'tr',
                null,
                el('th', { class: 'l name', text: '' }),
                // A run's heading wraps (anywhere, for a long strategy name): the columns share the page's width.
                ...D.runs.map((r, i) =>
                  el('th', { class: 'run', title: `run folder ${r.name}`, text: legendOf(r, i) }),
                ),
              ),
            ),
            tb,
          ),
        ),
      ),
    );
  };
  const paramKeys = [...new Set(D.runs.flatMap((r) => Object.keys(r.params)))];
  table('params', 'Params (differences outlined)', paramKeys, (k) => {
    const vals = D.runs.map((r) => (k in r.params ? JSON.stringify(r.params[k]) : '—'));
    const differs = new Set(vals).size > 1;
    return el(
      'tr',
      { class: differs ? 'differs-row' : '' },
      el('td', { class: 'l', text: k }),
      ...vals.map((v) => el('td', { class: differs ? 'differs' : '', text: v })),
    );
  });
  const keys = [];
  const byKey = {};
  for (const r of D.runs)
    for (const m of r.metrics)
      if (!byKey[m.key]) {
        byKey[m.key] = m;
        keys.push(m.key);
      }
  table(
    'metrics',
    'Figures (best green, worst red, where higher or lower is better; hover a name for its definition)',
    keys,
    (k) => {
      const def = byKey[k];
      const ms = D.runs.map((r) => r.metrics.find((m) => m.key === k));
      const vals = ms.map((m) => (m && typeof m.value === 'number' ? m.value : null));
      const nums = vals.filter((v) => v !== null);
      let best = null,
        worst = null;
      if (def.better && nums.length > 1 && new Set(nums).size > 1) {
        best = def.better === 'high' ? Math.max(...nums) : Math.min(...nums);
        worst = def.better === 'high' ? Math.min(...nums) : Math.max(...nums);
      }
      const differs = new Set(ms.map((m) => (m ? String(m.value) : '—'))).size > 1;
      // A figure named per run (buy & hold of each run's instrument): the name without it, each cell with its own.
      const own = (m) => (m && /\(([^)]*)\)$/.exec(m.label)) || null;
      const perRun = new Set(ms.map((m) => (m ? m.label : ''))).size > 1 && ms.every((m) => !m || own(m));
      return el(
        'tr',
        null,
        el('td', {
          class: 'l',
          title: def.def,
          text: perRun ? def.label.replace(/ \([^)]*\)$/, '') : def.label,
        }),
        ...ms.map((m, i) => {
          const v = vals[i];
          const cls =
            v !== null && v === best
              ? 'best'
              : v !== null && v === worst
                ? 'worst'
                : differs
                  ? 'differs'
                  : '';
          const text = !m
            ? '—'
            : m.kind === 'days'
              ? m.value === null
                ? 'n/a'
                : `${m.value.toFixed(1)} d`
              : fx.metric(m, D.runs[i].currency) + (perRun ? ` (${own(m)[1]})` : '');
          return el('td', { class: cls, 'data-key': k, text });
        }),
      );
    },
  );
  state.ready = true;
})();
