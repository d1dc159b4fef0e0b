import { SimBroker } from './broker.ts';
import { checkMargin } from './closeout.ts';
import type { Draft } from './draft.ts';
import { start } from './seed.ts';

/**
 * A simulator as the sandbox (src/sandbox/) holds it: the broker every mode uses, plus what only
 * v20's REST interface does to an account: PATCH /configuration (a CLIENT_CONFIGURE, a new margin
 * rate at once) and a pending trailing stop's current `trailingStopValue` for its order views.
 * Built by the one factory (factory.ts: `simBroker(settings, SandboxSim)`), so a sandbox account's
 * simulator applies the very rules a backtest's does; no other mode reaches these methods.
 */
export class SandboxSim extends SimBroker {
  /** The sandbox's PATCH /configuration: one CLIENT_CONFIGURE transaction; a new margin rate applies at once. */
  configure(fields: { alias?: string; marginRate?: string }): void {
    const s = this.state;
    if (!s.started) start(s, Number.isFinite(s.now) ? s.now : 0);
    s.tx.begin();
    const d: Draft = { type: 'CLIENT_CONFIGURE' };
    if (fields.alias !== undefined) d.alias = fields.alias;
    if (fields.marginRate !== undefined) {
      const rate = Number(fields.marginRate);
      if (!(rate > 0 && rate <= 1))
        throw new RangeError(`marginRate must be a decimal in (0, 1], got '${fields.marginRate}'`);
      d.marginRate = fields.marginRate;
      // As at OANDA: margin used, margin available, the margin check of later fills, margin calls
      // and the closeout all use the new rate from now on (the stricter of it and the instrument's).
      s.account.marginRate = rate;
    }
    s.tx.emit(d);
    // The account is checked at once (margin call, or closeout at half): the check is account-wide.
    const first = fields.marginRate !== undefined ? s.ledger.trades.values().next().value : undefined;
    if (first !== undefined) checkMargin(s, first.instrument);
  }

  /** The current level of a pending trailing stop loss as v20 prints it (`trailingStopValue`), or undefined. */
  trailingStopValue(orderID: string): string | undefined {
    const o = this.state.order(orderID);
    return o && o.type === 'TRAILING_STOP_LOSS' ? o.inst.price(o.level) : undefined;
  }
}
