// The sweep page (fxflow optimize) and the walk-forward page (fxflow walkforward); the data block says which.
'use strict';
(function () {
  const state = (window.fxReport = { ready: false });
  const D = pageData();
  const { el } = fx;
  const app = document.getElementById('app');
  app.textContent = '';

  const show = (v) =>
    v === null || v === undefined
      ? '—'
      : typeof v === 'number'
        ? String(Math.round(v * 1e6) / 1e6)
        : String(v);
  const fmt = (x, d) => fx.num(x, d === undefined ? 4 : d);
  const warnings = (ws, title) => {
    if (ws.length)
      app.append(
        el(
          'div',
          { class: 'warn', id: 'warnings' },
          el('strong', { text: title }),
          el('ul', null, ...ws.map((w) => el('li', { text: w }))),
        ),
      );
  };
  const figure = (label, value, def, id) =>
    el(
      'div',
      { class: 'metric', 'data-def': def, id: id || null },
      el('div', { class: 'k', text: label }),
      el('div', { class: 'v', text: value }),
    );

  /** A sortable table: cols [{ key, label, num, get(row) -> value, text?(row) }]; returns { table, render(rows) }. */
  function sortable(cols, onRow) {
    const thead = el('thead');
    const tbody = el('tbody');
    const table = el('table', null, thead, tbody);
    let rows = [];
    let sortKey = null,
      dir = -1;
    const ths = cols.map((c) =>
      el('th', {
        class: `sortable${c.num ? '' : ' l'}`,
        'data-key': c.key,
        text: c.label,
        title: c.title || '',
        onclick: () => {
          if (sortKey === c.key) dir = -dir;
          else {
            sortKey = c.key;
            dir = c.num ? -1 : 1;
          }
          draw();
        },
      }),
    );
    thead.append(el('tr', null, ...ths));
    function draw() {
      const col = cols.find((c) => c.key === sortKey);
      const list = rows.slice();
      if (col)
        list.sort((a, b) => {
          const x = col.get(a),
            y = col.get(b);
          if (x === y) return 0;
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * dir;
        });
      for (const th of ths) th.classList.remove('sorted-asc', 'sorted-desc');
      if (col) ths[cols.indexOf(col)].classList.add(dir > 0 ? 'sorted-asc' : 'sorted-desc');
      tbody.textContent = '';
      const frag = document.createDocumentFragment();
      for (const r of list) {
        const tr = el(
          'tr',
          null,
          ...cols.map((c) =>
            el('td', {
              class: `${c.num ? '' : 'l '}${c.cls ? c.cls(r) : ''}`.trim(),
              text: c.text ? c.text(r) : show(c.get(r)),
            }),
          ),
        );
        if (onRow) onRow(tr, r);
        frag.append(tr);
      }
      tbody.append(frag);
    }
    return {
      table,
      render(rs, key, d) {
        rows = rs;
        if (key !== undefined) {
          sortKey = key;
          dir = d;
        }
        draw();
      },
    };
  }

  const t0 = performance.now();
  if (D.kind === 'walkforward') walkForwardPage();
  else sweepPage();
  // Milliseconds from navigation start to the page script, and the page's own drawing.
  state.timings = { start: Math.round(t0), draw: Math.round(performance.now() - t0) };
  state.ready = true;

  function sweepPage() {
    const dims = D.dims.map((d) => d.name);
    const ok = D.trials.filter((t) => t.status === 'ok' && t.objective !== null);
    app.append(el('h1', { text: `Sweep of ${D.strategy}` }));
    app.append(
      el('p', {
        class: 'sub',
        text: `${D.trials.length} trial${D.trials.length === 1 ? '' : 's'}${D.planned !== null ? ` (of ${D.planned} asked${D.spaceSize !== null ? `, ${D.spaceSize} valid points in the space` : ''})` : ''} · ${D.search} search${D.seed !== null ? `, seed ${D.seed}` : ''} · objective ${fx.label(D.objective)} (higher is better) · ${D.period.from || '?'} → ${D.period.to || '?'} · folder ${D.name}`,
      }),
    );
    warnings(D.warnings, 'Incomplete sweep folder:');

    // Best trial.
    const best = el('section', { id: 'best' }, el('h2', { text: 'Best trial' }));
    app.append(best);
    if (!D.best)
      best.append(
        el('p', { class: 'warn', text: 'No successful trial with a defined objective: nothing to rank.' }),
      );
    else {
      const b = D.best;
      best.append(
        el(
          'div',
          { class: 'metrics' },
          figure(
            `${fx.label(D.objective)} (objective)`,
            fmt(b.objective),
            'The value the sweep maximises, of this trial',
            'best-objective',
          ),
          figure('Trial', String(b.trial), "Its position in the sweep's schedule (0-based)"),
          ...D.figures.map((k, i) =>
            figure(fx.label(k), fmt(b.figures[i], k === 'trades' ? 0 : 2), `${k} of the best trial`),
          ),
        ),
      );
      const tb = el('tbody');
      for (const n of dims)
        tb.append(
          el(
            'tr',
            null,
            el('td', { class: 'l', text: n }),
            el('td', { class: 'l', 'data-param': n, text: show(b.params[n]) }),
            el('td', { class: 'l sub', text: 'swept' }),
          ),
        );
      for (const [n, v] of Object.entries(D.fixed))
        if (!dims.includes(n))
          tb.append(
            el(
              'tr',
              null,
              el('td', { class: 'l', text: n }),
              el('td', { class: 'l', text: show(v) }),
              el('td', { class: 'l sub', text: 'fixed' }),
            ),
          );
      best.append(el('h3', { text: 'Params' }), el('table', { id: 'best-params', style: 'width:auto' }, tb));
      const cmd =
        D.bestCommand ??
        `fxflow backtest ${D.strategyFile || D.strategy} ${dims.map((n) => `--param ${n}=${b.params[n]}`).join(' ')}${D.period.from ? ` --from ${D.period.from.slice(0, 10)}` : ''}${D.period.to ? ` --to ${D.period.to.slice(0, 10)}` : ''}`;
      best.append(
        el('p', {
          class: 'sub',
          text: "Run it on its own (with the sweep's configuration) for its full report:",
        }),
        el('pre', { text: cmd }),
      );
      if (D.constraints.length)
        best.append(el('p', { class: 'sub', text: `Constraints: ${D.constraints.join('; ')}` }));
    }

    // Overfitting.
    const of = el('section', { id: 'overfitting' }, el('h2', { text: 'Overfitting' }));
    app.append(of);
    const o = D.overfitting;
    if (!o)
      of.append(
        el('p', {
          class: 'warn',
          text: 'Not available: summary.json is missing (the sweep did not finish).',
        }),
      );
    else {
      const dsr = o.deflatedSharpe;
      if (dsr) {
        const verdict =
          dsr.dsr >= 0.95
            ? "The best trial's edge is unlikely to be the luck of picking the best of many."
            : dsr.dsr >= 0.5
              ? 'Inconclusive: the best trial may be no better than the best of as many trials of a strategy with no edge.'
              : 'The best trial looks like the luck of the search: as many trials of a strategy with no edge would likely show a Sharpe ratio this high.';
        of.append(
          el(
            'div',
            { id: 'dsr' },
            el(
              'h3',
              null,
              'Deflated Sharpe ratio: ',
              el('span', { class: 'v', id: 'dsr-value', text: fmt(dsr.dsr, 3) }),
            ),
            el('p', {
              text: `${verdict} The deflated Sharpe ratio is the probability (0 to 1) that the best trial's true Sharpe ratio is above the highest one that ${dsr.trials} trials of a strategy with no skill would show by chance, given how much the trials' Sharpe ratios vary and how skewed and fat-tailed the best trial's returns are. Above 0.95 is the usual bar.`,
            }),
            el('p', {
              class: 'sub',
              text: `Best trial's daily Sharpe ${fmt(dsr.sharpe)} vs ${fmt(dsr.expectedMaxSharpe)} expected from the best of ${dsr.trials} zero-skill trials; ${dsr.observations} daily returns, skew ${fmt(dsr.skew, 2)}, kurtosis ${fmt(dsr.kurtosis, 2)}.`,
            }),
            el('p', {
              class: 'sub',
              text: 'Source: Bailey, D. H. & López de Prado, M. (2014), "The Deflated Sharpe Ratio: Correcting for Selection Bias, Backtest Overfitting and Non-Normality", Journal of Portfolio Management 40(5), 94–107.',
            }),
          ),
        );
      }
      const pbo = o.pbo;
      if (pbo) {
        const verdict =
          pbo.pbo <= 0.1
            ? 'Low: the params that win in-sample usually stay in the better half out of sample.'
            : pbo.pbo < 0.5
              ? 'Moderate: the in-sample winner often, but not reliably, stays in the better half out of sample.'
              : 'High: the params that win in-sample land in the worse half out of sample as often as not; the ranking does not carry over.';
        of.append(
          el(
            'div',
            { id: 'pbo' },
            el(
              'h3',
              null,
              'Probability of backtest overfitting (PBO): ',
              el('span', { class: 'v', id: 'pbo-value', text: fmt(pbo.pbo, 3) }),
            ),
            el('p', {
              text: `${verdict} The period is cut into ${pbo.blocks} blocks; for each of the ${pbo.splits} ways to pick half of them as "in-sample" (the rest "out of sample"), the trial that is best in-sample is ranked among all trials out of sample. PBO is the share of those splits where it ranks at or below the median. 0 is ideal; 0.5 is what choosing at random gives.`,
            }),
            el('p', {
              class: 'sub',
              text: `Median logit of the out-of-sample rank ${fmt(pbo.medianLogit, 3)} (above 0: the in-sample best tends to stay above the median).`,
            }),
            ...(pbo.label
              ? [
                  el('p', {
                    class: pbo.comparable === false ? 'warn' : 'sub',
                    id: 'pbo-basis',
                    text: `Computed ${pbo.label}.`,
                  }),
                ]
              : []),
            el('p', {
              class: 'sub',
              text: 'Source: Bailey, D. H., Borwein, J., López de Prado, M. & Zhu, Q. J. (2017), "The Probability of Backtest Overfitting", Journal of Computational Finance 20(4); combinatorially symmetric cross-validation (CSCV).',
            }),
          ),
        );
      }
      if (o.note) of.append(el('p', { class: 'warn', id: 'overfitting-note', text: o.note }));
    }

    // Heatmap.
    const hm = el(
      'section',
      { id: 'heatmap-section' },
      el('h2', { text: `Heatmap of ${fx.label(D.objective)}` }),
    );
    app.append(hm);
    const sel = (id, opts, value) => {
      const s = el('select', { id });
      for (const [v, label] of opts) s.append(el('option', { value: v, text: label }));
      s.value = value;
      return s;
    };
    const selX = sel(
      'hm-x',
      dims.map((d) => [d, d]),
      dims[0] || '',
    );
    const selY = sel('hm-y', [['', '(none)'], ...dims.map((d) => [d, d])], dims[1] || '');
    const selMode = sel(
      'hm-mode',
      [
        ['max', 'the best over the other params (max)'],
        ['best', "the other params at the best trial's values"],
      ],
      'max',
    );
    const info = el('p', { class: 'chart-info', id: 'hm-info' });
    const grid = el('div', { class: 'scroll', id: 'heatmap' });
    hm.append(
      el(
        'div',
        { class: 'filters' },
        el('label', null, 'columns ', selX),
        el('label', null, 'rows ', selY),
        el('label', null, 'each cell shows ', selMode),
      ),
      info,
      grid,
    );
    for (const s of [selX, selY, selMode]) s.addEventListener('change', drawHeatmap);

    /** The axis of a param: its distinct values among the trials (numbers ascending), or 20 equal ranges when there are more than 50 numbers (random and adaptive searches over ranges). */
    function axis(name) {
      const vals = [...new Set(D.trials.map((t) => t.params[name]).filter((v) => v !== undefined))];
      const nums = vals.every((v) => typeof v === 'number');
      if (nums) vals.sort((a, b) => a - b);
      else vals.sort((a, b) => String(a).localeCompare(String(b)));
      if (nums && vals.length > 50) {
        const lo = vals[0],
          hi = vals[vals.length - 1],
          n = 20,
          w = (hi - lo) / n;
        const labels = [];
        for (let i = 0; i < n; i++)
          labels.push(`${show(lo + i * w)}–${show(i === n - 1 ? hi : lo + (i + 1) * w)}`);
        return { labels, binned: true, index: (v) => Math.min(n - 1, Math.floor((v - lo) / w)) };
      }
      const at = new Map(vals.map((v, i) => [v, i]));
      return { labels: vals.map(show), binned: false, index: (v) => at.get(v) };
    }

    function drawHeatmap() {
      grid.textContent = '';
      const xName = selX.value,
        yName = selY.value === xName ? '' : selY.value;
      if (!xName) {
        info.textContent = 'No swept param.';
        return;
      }
      const ax = axis(xName),
        ay = yName ? axis(yName) : { labels: [''], binned: false, index: () => 0 };
      const mode = selMode.value;
      const others = dims.filter((d) => d !== xName && d !== yName);
      const cells = ay.labels.map(() => ax.labels.map(() => ({ value: null, n: 0, trial: null, failed: 0 })));
      // Trials without an objective (failed, or an undefined figure) are counted, so a cell says why it is empty.
      for (const t of D.trials) {
        if (t.status === 'ok' && t.objective !== null) continue;
        if (mode === 'best' && D.best && others.some((d) => t.params[d] !== D.best.params[d])) continue;
        const c = cells[ay.index(t.params[yName])]?.[ax.index(t.params[xName])];
        if (c) c.failed++;
      }
      for (const t of ok) {
        if (mode === 'best' && D.best && others.some((d) => t.params[d] !== D.best.params[d])) continue;
        const c = cells[ay.index(t.params[yName])]?.[ax.index(t.params[xName])];
        if (!c) continue;
        c.n++;
        if (c.value === null || t.objective > c.value) {
          c.value = t.objective;
          c.trial = t.trial;
        }
      }
      const values = cells
        .flat()
        .filter((c) => c.n > 0)
        .map((c) => c.value);
      const lo = Math.min(...values),
        hi = Math.max(...values);
      const color = (v) => {
        const f = hi > lo ? (v - lo) / (hi - lo) : 0.5;
        // Red (worst) through pale yellow to green (best).
        const hue = 5 + f * 125;
        return `hsl(${hue}, 65%, ${78 - 18 * Math.abs(f - 0.5)}%)`;
      };
      const bestValue = values.length ? hi : null;
      const table = el('table', { class: 'heatmap', style: 'width:auto' });
      table.append(
        el(
          'thead',
          null,
          el(
            'tr',
            null,
            el('th', { class: 'l', text: yName ? `${yName} \\ ${xName}` : xName }),
            ...ax.labels.map((l) => el('th', { text: l })),
          ),
        ),
      );
      const tb = el('tbody');
      cells.forEach((row, yi) => {
        tb.append(
          el(
            'tr',
            null,
            el('th', { class: 'l', text: yName ? ay.labels[yi] : fx.label(D.objective) }),
            ...row.map((c, xi) => {
              if (c.n === 0 && c.failed > 0)
                return el('td', {
                  class: 'cell empty failed-cell',
                  'data-failed': String(c.failed),
                  title: `${c.failed} trial${c.failed === 1 ? '' : 's'} here failed or had no ${fx.label(D.objective)} (see the table's error column)`,
                  text: '✗',
                });
              if (c.n === 0) return el('td', { class: 'cell empty', title: 'no trial here', text: '' });
              const isBest = c.value === bestValue;
              return el('td', {
                class: `cell filled${isBest ? ' best-cell' : ''}`,
                style: `background:${color(c.value)};cursor:pointer;${isBest ? 'outline:2px solid #1d2330;outline-offset:-2px;' : ''}`,
                'data-value': String(c.value),
                'data-n': String(c.n),
                'data-x': ax.labels[xi],
                'data-y': yName ? ay.labels[yi] : '',
                title: `${xName} ${ax.labels[xi]}${yName ? `, ${yName} ${ay.labels[yi]}` : ''}: ${fx.label(D.objective)} ${fmt(c.value)} (${mode === 'max' ? `best of ${c.n} trial${c.n === 1 ? '' : 's'}` : "the best trial's other params"}; trial ${c.trial}). Click: show these trials in the table.`,
                text: fmt(c.value, 3),
                onclick: () => {
                  filterInput.value =
                    (ax.binned ? '' : `${xName}=${ax.labels[xi]}`) +
                    (yName && !ay.binned ? ` ${yName}=${ay.labels[yi]}` : '');
                  drawTable();
                  document.getElementById('trials').scrollIntoView();
                },
              });
            }),
          ),
        );
      });
      table.append(tb);
      grid.append(table);
      const filled = values.length;
      info.textContent =
        `${filled} cell${filled === 1 ? '' : 's'} with trials of ${ax.labels.length * ay.labels.length}; ` +
        (others.length === 0
          ? 'every swept param is on an axis, so each cell is one trial.'
          : mode === 'max'
            ? `each cell is the highest ${fx.label(D.objective)} over the trials with that ${yName ? 'pair' : 'value'} (the other params, ${others.join(', ')}, take any value).`
            : `${others.map((d) => `${d} = ${show(D.best && D.best.params[d])}`).join(', ')} (the best trial's values); cells without such a trial are empty.`) +
        (ax.binned || ay.binned ? ' Many distinct values: numbers are grouped into 20 equal ranges.' : '') +
        ' Green is better, red worse; the outlined cell holds the highest value.';
      state.heatmap = {
        cells: ax.labels.length * ay.labels.length,
        filled,
        best: bestValue,
        x: xName,
        y: yName,
        mode,
      };
    }

    // Trials table.
    const tr = el('section', { id: 'trials' }, el('h2', { text: 'Trials' }));
    app.append(tr);
    const filterInput = el('input', {
      id: 'trial-filter',
      type: 'text',
      size: '40',
      placeholder: 'e.g. fast=10 slow>=30 trades>20',
    });
    const statusSel = sel(
      'trial-status',
      [
        ['all', 'all'],
        ['ok', 'ok'],
        ['failed', 'failed'],
      ],
      'all',
    );
    const count = el('span', { class: 'sub', id: 'trial-count' });
    const filterMsg = el('span', { class: 'neg', id: 'filter-error' });
    tr.append(
      el(
        'div',
        { class: 'filters' },
        el('label', null, 'filter ', filterInput),
        el('label', null, 'status ', statusSel),
        count,
        filterMsg,
      ),
    );
    tr.append(
      el('p', {
        class: 'sub',
        text: 'Filter with conditions separated by spaces: name=value, name!=value, name<value, name<=value, name>value, name>=value, on any param or figure by its name in the data (objective, netPL, returnPct, cagrPct, sharpe, sortino, calmar, profitFactor, maxDrawdownPct, trades, winRate; hover a heading for it). Click a heading to sort.',
      }),
    );
    const cols = [
      { key: 'trial', label: '#', num: true, get: (r) => r.trial },
      { key: 'status', label: 'status', get: (r) => r.status },
      {
        key: 'objective',
        label: fx.label(D.objective),
        num: true,
        get: (r) => r.objective,
        text: (r) => fmt(r.objective),
      },
      ...dims.map((d) => ({
        key: d,
        label: d,
        num: true,
        get: (r) => (r.params[d] === undefined ? null : r.params[d]),
      })),
      ...D.figures.map((k, i) => ({
        key: k,
        label: fx.label(k),
        title: `${k} in the filter`,
        num: true,
        get: (r) => r.figures[i],
        text: (r) => fmt(r.figures[i], k === 'trades' ? 0 : 2),
        cls:
          k === 'netPL' || k === 'returnPct'
            ? (r) => (r.figures[i] > 0 ? 'pos' : r.figures[i] < 0 ? 'neg' : '')
            : null,
      })),
      { key: 'error', label: 'error', get: (r) => r.error || '' },
    ];
    const byKey = new Map(cols.map((c) => [c.key.toLowerCase(), c]));
    const t = sortable(cols, (row, r) => {
      if (D.best && r.trial === D.best.trial) row.classList.add('best');
    });
    tr.append(el('div', { class: 'scroll' }, t.table));
    const LIMIT = 500;
    function drawTable() {
      const conds = [];
      filterMsg.textContent = '';
      for (const tok of filterInput.value.trim().split(/\s+/).filter(Boolean)) {
        const m = /^([A-Za-z_$][\w$.]*)(<=|>=|!=|=|<|>)(.+)$/.exec(tok);
        const c = m && byKey.get(m[1].toLowerCase());
        if (!c) {
          filterMsg.textContent = `"${tok}" is not a condition on a column (${cols.map((x) => x.key).join(', ')})`;
          continue;
        }
        const raw = m[3],
          n = Number(raw);
        const want = raw !== '' && Number.isFinite(n) ? n : raw;
        conds.push((r) => {
          const v = c.get(r);
          if (v === null || v === undefined) return m[2] === '!=';
          const a = typeof want === 'number' && typeof v !== 'number' ? Number(v) : v;
          const b = typeof want === 'number' ? want : String(want);
          const x = typeof b === 'string' ? String(a) : a;
          switch (m[2]) {
            case '=':
              return x === b;
            case '!=':
              return x !== b;
            case '<':
              return x < b;
            case '<=':
              return x <= b;
            case '>':
              return x > b;
            default:
              return x >= b;
          }
        });
      }
      const st = statusSel.value;
      const rows = D.trials.filter((r) => (st === 'all' || r.status === st) && conds.every((f) => f(r)));
      count.textContent = `${rows.length} of ${D.trials.length} trials${rows.length > LIMIT ? `; the first ${LIMIT} in this order shown (narrow the filter or sort by another column)` : ''}`;
      t.render(rows.slice(0, LIMIT));
    }
    filterInput.addEventListener('input', drawTable);
    statusSel.addEventListener('change', drawTable);
    // Sorted by the objective, best first.
    t.render([], 'objective', -1);
    drawHeatmap();
    drawTable();
  }

  function walkForwardPage() {
    const W = D.windows;
    const names = Object.keys(D.stability);
    const day = (ms) => new Date(ms).toISOString().slice(0, 10);
    app.append(el('h1', { text: `Walk-forward of ${D.strategy}` }));
    app.append(
      el('p', {
        class: 'sub',
        text: `${W.length} window${W.length === 1 ? '' : 's'} · objective ${fx.label(D.objective)} · ${W.length ? `${day(W[0].trainFrom)} → ${day(W[W.length - 1].testTo)}` : ''} · folder ${D.name}`,
      }),
    );
    warnings(D.warnings, 'Not everything could be shown:');
    app.append(
      el(
        'section',
        { id: 'figures' },
        el('h2', { text: 'Out of sample, stitched' }),
        el(
          'div',
          { class: 'metrics' },
          figure(
            'Out-of-sample return',
            fx.pct(D.oosReturnPct),
            "The test periods' daily returns compounded in order: what trading each window's chosen params on the next, unseen, period would have made",
            'oos-return',
          ),
          figure(
            'Out-of-sample Sharpe',
            fmt(D.oosSharpe, 2),
            'Sharpe ratio of the stitched out-of-sample daily returns, annualised with √252',
            'oos-sharpe',
          ),
          figure(
            'Walk-forward efficiency',
            fmt(D.efficiency, 2),
            'Mean annualised out-of-sample return / mean annualised in-sample return (Pardo). Near 1: the results found in training carry over; below about 0.5: most of the in-sample result was fitted to the past',
            'wfe',
          ),
          figure('Windows', String(W.length), 'Training + test periods'),
        ),
      ),
    );
    app.append(
      el('p', {
        class: 'sub',
        text: 'Walk-forward efficiency (WFE) compares what the chosen params earned on periods they never saw with what they earned where they were chosen. Source: Pardo, R. (2008), "The Evaluation and Optimization of Trading Strategies", 2nd ed., Wiley, ch. 11.',
      }),
    );

    // Stitched equity.
    const eq = el(
      'section',
      { id: 'equity' },
      el('h2', { text: 'Stitched out-of-sample equity (start = 1)' }),
    );
    app.append(eq);
    const box = el('div', { class: 'chart', id: 'oos-chart' });
    eq.append(
      el('p', {
        class: 'chart-info',
        text: "Each point is a day's last NAV in a test period (UTC), the test periods' daily returns compounded in window order; the arrows mark where each window's test period starts (dates below).",
      }),
      box,
    );
    const LC = window.LightweightCharts;
    const chart = fx.chart(box, {
      height: 380,
      layout: { attributionLogo: true },
      timeScale: { timeVisible: true, secondsVisible: false },
    });
    const line = chart.addSeries(LC.LineSeries, {
      color: '#2962ff',
      lineWidth: 2,
      priceFormat: { type: 'price', precision: 4, minMove: 0.0001 },
    });
    // Times in seconds (the chart's UTC timestamps); walkforward.json's points are strictly increasing.
    const sec = (ms) => Math.floor(ms / 1000);
    line.setData(D.oosEquity.map((p) => ({ time: sec(p.time), value: p.nav })));
    // Where each window's test period starts on the stitched curve: the point before its first day.
    if (W.every((w) => w.oosDays !== null) && D.oosEquity.length > 1) {
      const marks = [];
      let at = 0;
      for (const w of W) {
        if (at < D.oosEquity.length && w.oosDays > 0)
          marks.push({
            time: sec(D.oosEquity[at].time),
            position: 'aboveBar',
            color: '#6a7385',
            shape: 'arrowDown',
            text: `W${w.index}`,
          });
        at += w.oosDays;
      }
      LC.createSeriesMarkers(line, marks);
      eq.append(
        el('p', {
          class: 'chart-info',
          id: 'window-days',
          text: W.map(
            (w) => `W${w.index}: test from ${day(w.testFrom)}, ${w.oosDays} day${w.oosDays === 1 ? '' : 's'}`,
          ).join(' · '),
        }),
      );
      state.windowMarks = marks.map((m) => new Date(m.time * 1000).toISOString());
    }
    chart.timeScale().fitContent();
    state.oosLast = D.oosEquity.length ? D.oosEquity[D.oosEquity.length - 1].nav : null;
    state.oosFirstTime = D.oosEquity.length ? new Date(D.oosEquity[0].time).toISOString() : null;
    state.oosPoints = D.oosEquity.length;

    // IS vs OOS bars (annualised return %), one pair per window.
    const bars = el(
      'section',
      { id: 'is-oos' },
      el('h2', { text: 'In-sample vs out-of-sample annualised return (CAGR %), per window' }),
    );
    app.append(bars);
    const vals = W.flatMap((w) => [w.is && w.is.cagrPct, w.oos && w.oos.cagrPct]).filter(
      (v) => v !== null && Number.isFinite(v),
    );
    const top = Math.max(0, ...vals),
      bot = Math.min(0, ...vals);
    // Bars as wide as the page allows (24 to 64 px), each labelled with its value, each pair with its window and test start.
    const H = 220,
      left = 56,
      gap = 18;
    const bw = Math.max(24, Math.min(64, Math.floor((1100 - left) / Math.max(1, W.length) - gap) / 2));
    const width = left + W.length * (2 * bw + gap) + 10;
    const y = (v) => (top === bot ? H / 2 : ((top - v) / (top - bot)) * H) + 18;
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('width', String(width));
    svg.setAttribute('height', String(H + 86));
    svg.id = 'is-oos-bars';
    const add = (tag, attrs, text) => {
      const e = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
      if (text) e.textContent = text;
      svg.append(e);
      return e;
    };
    for (const v of [top, bot, (top + bot) / 2]) {
      // No gridline label closer than 14 px to the zero line's (or another's).
      if (
        Math.abs(y(v) - y(0)) < 14 ||
        (v === (top + bot) / 2 && Math.min(Math.abs(y(v) - y(top)), Math.abs(y(v) - y(bot))) < 14)
      )
        continue;
      add('line', { x1: left - 4, x2: width, y1: y(v), y2: y(v), stroke: '#eceef2' });
      add(
        'text',
        { x: left - 8, y: y(v) + 4, 'font-size': 12, fill: '#6a7385', 'text-anchor': 'end' },
        `${v.toFixed(1)}%`,
      );
    }
    add('line', { x1: left - 4, x2: width, y1: y(0), y2: y(0), stroke: '#6a7385' });
    add('text', { x: left - 8, y: y(0) + 4, 'font-size': 12, fill: '#6a7385', 'text-anchor': 'end' }, '0%');
    W.forEach((w, i) => {
      const x0 = left + i * (2 * bw + gap);
      [
        [w.is && w.is.cagrPct, '#8aa4d6', 'in-sample', 'IS'],
        [w.oos && w.oos.cagrPct, '#2962ff', 'out of sample', 'OOS'],
      ].forEach(([v, c, label, short], k) => {
        const x = x0 + k * bw;
        if (v === null || v === undefined || !Number.isFinite(v)) {
          add(
            'text',
            { x: x + bw / 2, y: y(0) - 4, 'font-size': 11, fill: '#6a7385', 'text-anchor': 'middle' },
            'n/a',
          );
          return;
        }
        const r = add('rect', {
          x,
          y: Math.min(y(v), y(0)),
          width: bw - 3,
          height: Math.max(1, Math.abs(y(v) - y(0))),
          fill: v < 0 ? (k ? '#c62f2f' : '#e6a1a1') : c,
          class: k ? 'bar-oos' : 'bar-is',
        });
        const tt = document.createElementNS(ns, 'title');
        tt.textContent = `window ${w.index}, ${label}: ${v.toFixed(2)}%`;
        r.append(tt);
        // The value, above a gain's bar and below a loss's.
        add(
          'text',
          {
            x: x + (bw - 3) / 2,
            y: v >= 0 ? y(v) - 4 : y(v) + 13,
            'font-size': 11,
            fill: '#1d2330',
            'text-anchor': 'middle',
            class: 'bar-value',
          },
          `${v.toFixed(1)}%`,
        );
        add(
          'text',
          { x: x + (bw - 3) / 2, y: H + 48, 'font-size': 10, fill: '#6a7385', 'text-anchor': 'middle' },
          short,
        );
      });
      add(
        'text',
        {
          x: x0 + bw,
          y: H + 64,
          'font-size': 12,
          fill: '#1d2330',
          'text-anchor': 'middle',
          'font-weight': 600,
        },
        `W${w.index}`,
      );
      add(
        'text',
        { x: x0 + bw, y: H + 78, 'font-size': 10, fill: '#6a7385', 'text-anchor': 'middle' },
        `test ${day(w.testFrom)}`,
      );
    });
    bars.append(
      el(
        'div',
        { class: 'legend' },
        el(
          'span',
          null,
          el('i', { style: 'background:#8aa4d6' }),
          'IS: in-sample (training period, best trial)',
        ),
        el(
          'span',
          null,
          el('i', { style: 'background:#2962ff' }),
          'OOS: out of sample (next test period, same params); red: a loss',
        ),
      ),
    );
    bars.append(el('div', { style: 'overflow-x:auto' }, svg));

    // Windows table.
    const ws = el('section', { id: 'windows' }, el('h2', { text: 'Windows' }));
    app.append(ws);
    const cols = [
      { key: 'index', label: '#', num: true, get: (w) => w.index },
      {
        key: 'train',
        label: 'training',
        get: (w) => w.trainFrom,
        text: (w) => `${day(w.trainFrom)} → ${day(w.trainTo)}`,
        cls: () => 'dates',
      },
      {
        key: 'test',
        label: 'test',
        get: (w) => w.testFrom,
        text: (w) => `${day(w.testFrom)} → ${day(w.testTo)}`,
        cls: () => 'dates',
      },
      ...names.map((n) => ({
        key: `p:${n}`,
        label: n,
        num: true,
        get: (w) => (w.params[n] === undefined ? null : w.params[n]),
      })),
      {
        key: 'isObj',
        label: `IS ${fx.label(D.objective)}`,
        num: true,
        get: (w) => w.isObjective,
        text: (w) => fmt(w.isObjective, 3),
      },
      {
        key: 'oosObj',
        label: `OOS ${fx.label(D.objective)}`,
        num: true,
        get: (w) => w.oosObjective,
        text: (w) => fmt(w.oosObjective, 3),
      },
      {
        key: 'isCagr',
        label: 'IS CAGR %',
        num: true,
        get: (w) => w.is && w.is.cagrPct,
        text: (w) => fmt(w.is && w.is.cagrPct, 2),
      },
      {
        key: 'oosCagr',
        label: 'OOS CAGR %',
        num: true,
        get: (w) => w.oos && w.oos.cagrPct,
        text: (w) => fmt(w.oos && w.oos.cagrPct, 2),
        cls: (w) => (w.oos && w.oos.cagrPct < 0 ? 'neg' : 'pos'),
      },
      {
        key: 'isPL',
        label: 'IS net P/L',
        num: true,
        get: (w) => w.is && w.is.netPL,
        text: (w) => fx.money(w.is && w.is.netPL),
      },
      {
        key: 'oosPL',
        label: 'OOS net P/L',
        num: true,
        get: (w) => w.oos && w.oos.netPL,
        text: (w) => fx.money(w.oos && w.oos.netPL),
      },
      {
        key: 'oosDD',
        label: 'OOS max DD %',
        num: true,
        get: (w) => w.oos && w.oos.maxDrawdownPct,
        text: (w) => fmt(w.oos && w.oos.maxDrawdownPct, 2),
      },
      { key: 'oosTrades', label: 'OOS trades', num: true, get: (w) => w.oos && w.oos.trades },
      {
        key: 'wfe',
        label: 'WFE',
        num: true,
        get: (w) => w.efficiency,
        text: (w) => fmt(w.efficiency, 2),
        title: 'OOS CAGR / IS CAGR of this window',
      },
      {
        key: 'dsr',
        label: 'DSR',
        num: true,
        get: (w) => w.dsr,
        text: (w) => fmt(w.dsr, 3),
        title: "Deflated Sharpe ratio of the window's sweep (open its page for the explanation)",
      },
      {
        key: 'pbo',
        label: 'PBO',
        num: true,
        get: (w) => w.pbo,
        text: (w) => fmt(w.pbo, 3),
        title: "Probability of backtest overfitting of the window's sweep",
      },
      { key: 'error', label: 'error', get: (w) => w.error || '', cls: () => 'wrap' },
    ];
    const t = sortable(cols, (row, w) => {
      row.append(el('td', { class: 'l' }, el('a', { href: w.sweepPage, text: 'sweep' })));
    });
    t.table.querySelector('thead tr').append(el('th', { class: 'l', text: '' }));
    t.table.classList.add('compact');
    ws.append(el('div', { class: 'scroll' }, t.table));
    t.render(W, 'index', 1);

    // Stability.
    const st = el(
      'section',
      { id: 'stability' },
      el('h2', { text: 'Param stability: the values chosen window after window' }),
    );
    app.append(st);
    st.append(
      el('p', {
        class: 'sub',
        text: 'Params that jump from window to window suggest the optimum is noise; a value chosen again and again (a high share of the most chosen, a low sd/mean) is a steadier edge.',
      }),
    );
    const tb = el('tbody');
    for (const n of names) {
      const s = D.stability[n];
      tb.append(
        el(
          'tr',
          null,
          el('td', { class: 'l', text: n }),
          el('td', { class: 'l', text: s.values.map(show).join(', ') }),
          el('td', { text: String(s.distinct) }),
          el('td', { text: `${Math.round(s.modeShare * 100)}%` }),
          el('td', { text: s.cv === null ? 'n/a' : fmt(s.cv, 3) }),
        ),
      );
    }
    st.append(
      el(
        'table',
        null,
        el(
          'thead',
          null,
          el(
            'tr',
            null,
            el('th', { class: 'l', text: 'param' }),
            el('th', { class: 'l', text: 'chosen per window' }),
            el('th', { text: 'distinct' }),
            el('th', { text: 'share of the most chosen' }),
            el('th', { text: 'sd / mean' }),
          ),
        ),
        tb,
      ),
    );
  }
})();
