// The live status page of `fxflow run`: redraws on every server-sent event (plain browser script).
'use strict';
(function () {
  const state = (window.fxStatus = { updates: 0, last: null, connected: false });
  const { el } = fx;
  const app = document.getElementById('app');
  app.textContent = '';
  const head = el(
    'div',
    null,
    el('h1', { id: 'title', text: 'fxflow run · live status' }),
    el(
      'div',
      { class: 'sub' },
      el('span', { class: 'status-dot', id: 'dot' }),
      el('span', { id: 'conn', text: 'connecting…' }),
    ),
  );
  const body = el('div', { id: 'status' });
  app.append(head, body);
  const table = (id, cols, rows) =>
    el(
      'table',
      { id },
      el(
        'thead',
        null,
        el('tr', null, ...cols.map((c, i) => el('th', { class: i === 0 ? 'l' : '', text: c }))),
      ),
      el(
        'tbody',
        null,
        ...(rows.length
          ? rows.map((r) =>
              el(
                'tr',
                null,
                ...r.map((v, i) =>
                  v instanceof Node
                    ? el('td', null, v)
                    : el('td', { class: i === 0 ? 'l' : '', text: String(v) }),
                ),
              ),
            )
          : [el('tr', null, el('td', { class: 'l sub', colspan: String(cols.length), text: 'none' }))]),
      ),
    );
  function draw(s) {
    if (s.error) {
      body.replaceChildren(el('p', { class: 'warn', text: s.error }));
      return;
    }
    const c = s.currency;
    document.getElementById('title').textContent = `${s.strategy} · ${s.mode} · account ${s.account}`;
    const card = (k, label, v, def) =>
      el(
        'div',
        { class: 'metric', 'data-key': k, 'data-def': def, title: def },
        el('div', { class: 'k', text: label }),
        el('div', { class: 'v', text: v }),
      );
    const kill = s.killSwitch.engaged;
    body.replaceChildren(
      el(
        'section',
        null,
        el('h2', { text: `Account (as of ${s.at.slice(11, 19)} UTC)` }),
        el(
          'div',
          { class: 'metrics', id: 'account' },
          card('nav', 'NAV', fx.money(s.nav, c), 'Balance + unrealized P/L at the latest prices'),
          card(
            'balance',
            'Balance',
            fx.money(s.balance, c),
            'Deposits + realized P/L + financing − commission',
          ),
          card(
            'unrealizedPL',
            'Unrealized P/L',
            fx.money(s.unrealizedPL, c),
            'P/L of the open trades on their closing side',
          ),
          card(
            'marginUsed',
            'Margin used',
            s.marginUsed === null ? 'n/a' : fx.money(s.marginUsed, c),
            'Net units × mid × quote→home × margin rate, per instrument',
          ),
          card(
            'marginAvailable',
            'Margin available',
            s.marginAvailable === null ? 'n/a' : fx.money(s.marginAvailable, c),
            'NAV − margin used',
          ),
          card('openTrades', 'Open trades', String(s.trades.length), 'Trades open now'),
          card(
            'kill',
            'Kill switch',
            kill ? 'ENGAGED: the strategy is stopped, nothing opens' : 'armed',
            s.killSwitch.state
              ? s.killSwitch.state
              : `${s.killSwitch.file ? `File ${s.killSwitch.file} or ` : ''}SIGUSR2 cancels pending orders, flattens and stops; risk refusals so far: ${s.killSwitch.riskRefusals}`,
          ),
        ),
      ),
      ...((s.inDoubt ?? []).length === 0
        ? []
        : [
            el(
              'section',
              null,
              el('h2', { text: 'Orders in doubt' }),
              el('p', {
                class: 'warn',
                text: 'Sent with no answer and possibly still on the way to OANDA: nothing else is sent until each shows at the broker or its window passes with no sign of it (then it is resent, unless the run is halted).',
              }),
              table(
                'in-doubt',
                ['intent', 'instrument', 'waits for a sign until'],
                s.inDoubt.map((d) => [d.intentId, d.instrument ?? '', d.until.slice(11, 19) + ' UTC']),
              ),
            ),
          ]),
      ...((s.unknownFills ?? []).length === 0
        ? []
        : [
            el(
              'section',
              null,
              el('h2', { text: `Unknown fills: ${s.unknownFills.length}` }),
              el('p', {
                class: 'warn',
                text: 'Fills the runner did not expect: a second order under one client ID, an order it had given up on, or one it never placed. See the log and --on-unknown-fill.',
              }),
              table(
                'unknown-fills',
                ['transaction', 'time', 'order', 'client ID', 'instrument', 'units', 'why'],
                s.unknownFills.map((u) => [
                  u.transactionID,
                  u.time.slice(0, 19).replace('T', ' '),
                  u.orderID,
                  u.clientID ?? '',
                  u.instrument,
                  u.units,
                  u.why,
                ]),
              ),
            ),
          ]),
      ...(s.books == null
        ? []
        : [
            el(
              'section',
              null,
              el('h2', { text: 'Strategies (each its own book on the account)' }),
              table(
                'books',
                ['strategy', 'net units', 'open trades', 'pending entries', 'state'],
                Object.entries(s.books).map(([name, b]) => [
                  name,
                  Object.entries(b.positions)
                    .map(([i, u]) => `${i} ${u > 0 ? '+' : ''}${u}`)
                    .join(', ') || 'flat',
                  b.trades.map((t) => `${t.id} ${t.instrument} ${t.units}`).join(', ') || 'none',
                  String(b.pendingOrders),
                  b.failed !== undefined ? `STOPPED ALONE: threw ${b.failed}` : 'trading',
                ]),
              ),
            ),
          ]),
      ...(s.drift == null
        ? []
        : [
            el(
              'section',
              null,
              el('h2', { text: `Drift guard (--max-drift ${s.drift.tolerances})` }),
              el('p', {
                class: s.drift.breach ? 'warn' : 'sub',
                id: 'drift',
                text: s.drift.breach
                  ? `HALTED: ${s.drift.breach.why}`
                  : `Within every tolerance: ${s.drift.compared} fill(s) compared; largest price difference ${fx.num(s.drift.pricePips, 1)} pips; fills on one side only ${s.drift.missed}; realized P/L gap ${fx.num(s.drift.plGap, 2)}`,
              }),
              ...(s.drift.drifted.length === 0
                ? []
                : [
                    table(
                      'drifted',
                      ['client ID', 'instrument', 'what', 'account', 'simulator', 'pips / other side'],
                      s.drift.drifted.map((d) => [
                        d.clientID,
                        d.instrument,
                        d.what,
                        d.live ?? '',
                        d.sim ?? '',
                        d.pips !== undefined ? fx.num(d.pips, 1) : (d.other ?? ''),
                      ]),
                    ),
                  ]),
            ),
          ]),
      el(
        'section',
        null,
        el('h2', { text: 'Risk limits' }),
        s.limits.length === 0
          ? el('p', {
              class: 'sub',
              text: 'No risk limits set (--max-units, --max-open-trades, --max-orders-per-minute, --max-daily-loss, --max-spread-pips).',
            })
          : table(
              'limits',
              ['limit', 'now', 'max', 'used'],
              s.limits.map((l) => [
                l.label,
                l.value === null ? 'n/a' : fx.num(l.value, 2),
                fx.num(l.limit, 2),
                el(
                  'div',
                  {
                    class: `bar ${l.used !== null && l.used >= 0.8 ? 'hot' : ''}`,
                    title: l.used === null ? 'n/a' : fx.pct(l.used * 100),
                  },
                  el('div', { style: `width:${Math.min(100, Math.max(0, (l.used ?? 0) * 100))}%` }),
                ),
              ]),
            ),
      ),
      el(
        'section',
        null,
        el('h2', { text: 'Positions' }),
        table(
          'positions',
          ['instrument', 'units', 'bid', 'ask', 'unrealized P/L'],
          s.positions.map((p) => [
            p.instrument,
            p.units,
            p.bid ?? '',
            p.ask ?? '',
            fx.money(p.unrealizedPL, c),
          ]),
        ),
      ),
      el(
        'section',
        null,
        el('h2', { text: 'Open trades' }),
        table(
          'trades',
          ['trade', 'instrument', 'units', 'price', 'opened', 'unrealized P/L'],
          s.trades.map((t) => [
            t.id,
            t.instrument,
            t.units,
            t.price,
            t.openTime.slice(0, 19).replace('T', ' '),
            fx.money(t.unrealizedPL, c),
          ]),
        ),
      ),
      el(
        'section',
        null,
        el('h2', { text: 'Streams' }),
        table(
          'streams',
          [
            'stream',
            'last line (price, transaction or heartbeat)',
            'connects',
            'reconnects',
            'stalls',
            'malformed lines',
          ],
          s.streams.map((x) => [
            x.name,
            x.lastLineAgoMs === null ? 'none yet' : `${(x.lastLineAgoMs / 1000).toFixed(0)} s ago`,
            x.connects,
            x.reconnects,
            x.stalls,
            x.malformed,
          ]),
        ),
      ),
      el(
        'section',
        null,
        el('h2', { text: 'Last transactions' }),
        table(
          'transactions',
          ['id', 'time', 'type', 'instrument', 'units', 'price', 'P/L', 'reason'],
          s.transactions.map((t) => [
            t.id,
            t.time.slice(0, 23).replace('T', ' '),
            t.type,
            t.instrument ?? '',
            t.units ?? '',
            t.price ?? '',
            t.pl ?? '',
            t.reason ?? '',
          ]),
        ),
      ),
    );
  }
  const es = new EventSource('events');
  es.onopen = () => {
    state.connected = true;
    document.getElementById('dot').className = 'status-dot ok';
    document.getElementById('conn').textContent = 'live (updates as it changes)';
  };
  es.onerror = () => {
    state.connected = false;
    document.getElementById('dot').className = 'status-dot bad';
    document.getElementById('conn').textContent = 'disconnected: the run stopped or is unreachable; retrying';
  };
  es.onmessage = (e) => {
    const s = JSON.parse(e.data);
    state.last = s;
    draw(s);
    state.updates++;
  };
})();
