import { execute } from './execute.ts';
import type { SimState } from './state.ts';

/**
 * Acting on the account rules' margin verdict (account.ts `AccountRules.check`): MARGIN_CALL_ENTER
 * and MARGIN_CALL_EXIT as NAV crosses the margin used, and the margin closeout of every position
 * when NAV reaches half of it. The rules decide; this writes the transactions and fills.
 */

/** Margin call enter/exit, and the margin closeout when NAV reaches half the margin used. */
export function checkMargin(s: SimState, instrument: string): void {
  const verdict = s.account.check();
  if (verdict === undefined) return;
  if (verdict === 'closeout') {
    closeout(s, instrument);
    return;
  }
  if (verdict === 'call' && !s.marginCall) {
    s.marginCall = true;
    s.tx.begin();
    s.tx.emit({ type: 'MARGIN_CALL_ENTER' });
  } else if (verdict === 'ok' && s.marginCall) {
    s.marginCall = false;
    s.tx.begin();
    s.tx.emit({ type: 'MARGIN_CALL_EXIT' });
  }
}

/**
 * Margin closeout: every position is closed at the current prices with market orders of reason
 * MARGIN_CLOSEOUT (fills MARKET_ORDER_MARGIN_CLOSEOUT), long and short sides separately.
 */
function closeout(s: SimState, trigger: string): void {
  s.stats.marginCloseouts++;
  const instruments = [...new Set([...s.ledger.trades.values()].map((t) => t.instrument))];
  // The instrument whose price triggered it first, then the others in the order of their trades.
  instruments.sort((a, b) => (a === trigger ? -1 : b === trigger ? 1 : 0));
  for (const name of instruments) {
    const q = s.quotes.get(name);
    if (!q) continue;
    const book = s.book(name);
    const { long, short } = s.ledger.position(name);
    for (const side of [1, -1] as const) {
      const have = side === 1 ? long : -short;
      if (have === 0) continue;
      s.tx.begin();
      const units = side === 1 ? -have : have;
      const created = s.tx.emit({
        type: 'MARKET_ORDER',
        instrument: name,
        units: String(units),
        timeInForce: 'FOK',
        positionFill: 'REDUCE_ONLY',
        reason: 'MARGIN_CLOSEOUT',
        marginCloseout: { reason: 'MARGIN_CHECK_VIOLATION' },
      });
      execute(s, book, {
        orderID: created.id,
        clientOrderID: undefined,
        type: 'MARKET',
        units,
        positionFill: 'REDUCE_ONLY',
        priceBound: Number.NaN,
        bid: q.bid,
        ask: q.ask,
        px: units < 0 ? q.bid : q.ask,
        t: s.now,
        created: {},
        tradeClose: undefined,
        closeout: side,
        order: undefined,
        marginCloseout: true,
      });
    }
  }
  if (s.marginCall) {
    s.marginCall = false;
    s.tx.begin();
    s.tx.emit({ type: 'MARGIN_CALL_EXIT' });
  }
}
