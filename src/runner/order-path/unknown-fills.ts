import type { Transaction } from '../../domain/v20/index.ts';
import { clientIDOf } from '../../adapters/v20/in-doubt.ts';

/**
 * Unknown fills: a fill the runner did not expect, noticed from the transaction stream. An entry
 * order (market, limit, stop, market-if-touched; placed or a replacement) is expected when the
 * runner journaled an intent under its client ID and has not given that intent up, and when it is
 * the first order under that client ID. Otherwise its fill is unknown:
 *
 * - `duplicate`: a second order under one client ID (a request that arrived after its resend, or
 *   someone else using the run's client ID);
 * - `given up`: an order of an intent the runner had settled as not placed (looked up and not found,
 *   dropped by the kill switch, expired at a restart);
 * - `never placed`: an order under a client ID the journal does not know, or with none (placed from
 *   outside the run on its account).
 *
 * Closes (trade and position closeouts, margin closeouts) and the dependent orders v20 creates
 * (take profit, stop loss, trailing stop) are never entries. What the run does about an unknown fill
 * is its policy (`UnknownFillPolicy`, `--on-unknown-fill`).
 */

/** What the run does when it notices an unknown fill (default 'halt'). */
export type UnknownFillPolicy = 'halt' | 'close' | 'keep';
export const UNKNOWN_FILL_POLICIES: readonly UnknownFillPolicy[] = ['halt', 'close', 'keep'];

/**
 * The reason the kill switch's halt carries when the `halt` policy engaged it (`unknown fill: <what>`,
 * journaled with the halt), and whether a halt was that one: `fxflow run` then exits with
 * `UNKNOWN_FILL_EXIT` even when the account ends flat, since an operator must look.
 */
export const unknownFillHaltWhy = (what: string): string => `unknown fill: ${what}`;
export const isUnknownFillHalt = (why: string): boolean => why.startsWith('unknown fill: ');
/** The exit code of a run the `halt` policy stopped (docs/operations.md): the account flat, the fill to be looked at. */
export const UNKNOWN_FILL_EXIT = 3;

/** An unknown fill, as logged, shown on the status page and reported. */
export interface UnknownFill {
  /** The ORDER_FILL's transaction ID. */
  readonly transactionID: string;
  readonly time: string;
  readonly orderID: string;
  readonly clientID: string | undefined;
  readonly instrument: string;
  readonly units: string;
  /** The trade the fill opened, if it opened one (what the 'close' policy closes). */
  readonly tradeOpened: string | undefined;
  readonly why: 'duplicate' | 'given up' | 'never placed';
}

const ENTRY = new Set(['MARKET_ORDER', 'LIMIT_ORDER', 'STOP_ORDER', 'MARKET_IF_TOUCHED_ORDER']);

/** Whether a transaction creates an entry order (not a close, not a dependent order). */
function isEntryCreate(t: Transaction): boolean {
  if (!ENTRY.has(t.type)) return false;
  const x = t as {
    reason?: string;
    tradeClose?: unknown;
    longPositionCloseout?: unknown;
    shortPositionCloseout?: unknown;
    marginCloseout?: unknown;
  };
  if (
    x.tradeClose !== undefined ||
    x.longPositionCloseout !== undefined ||
    x.shortPositionCloseout !== undefined ||
    x.marginCloseout !== undefined
  )
    return false;
  return x.reason === undefined || x.reason === 'CLIENT_ORDER' || x.reason === 'REPLACEMENT';
}

/** What the watch reads of the run: whether it journaled an intent, and whether it gave it up. */
export interface UnknownFillsOptions {
  readonly journaled: (clientID: string) => boolean;
  readonly gaveUp: (clientID: string) => boolean;
}

/** Watches the transactions the runner handles for unknown fills (see the module comment). */
export class UnknownFills {
  /** Every unknown fill noticed, in order. */
  readonly found: UnknownFill[] = [];
  /** Client ID → the transaction that created the first order under it. */
  readonly #firstOrder = new Map<string, string>();
  /** Order ID → why its fill will be unknown. */
  readonly #suspect = new Map<string, UnknownFill['why']>();
  readonly #o: UnknownFillsOptions;

  constructor(o: UnknownFillsOptions, earlier: readonly Transaction[] = []) {
    this.#o = o;
    // The orders of transactions journaled before this start (their client IDs are taken).
    for (const t of earlier) {
      const cid = clientIDOf(t);
      if (cid !== undefined && isEntryCreate(t) && !this.#firstOrder.has(cid))
        this.#firstOrder.set(cid, t.id);
    }
  }

  /** One transaction, in ID order; returns the unknown fill it is, if it is one. */
  observe(t: Transaction): UnknownFill | undefined {
    if (isEntryCreate(t)) {
      const cid = clientIDOf(t);
      const why: UnknownFill['why'] | undefined =
        cid === undefined || !this.#o.journaled(cid)
          ? 'never placed'
          : this.#firstOrder.has(cid) && this.#firstOrder.get(cid) !== t.id
            ? 'duplicate'
            : this.#o.gaveUp(cid)
              ? 'given up'
              : undefined;
      if (cid !== undefined && !this.#firstOrder.has(cid)) this.#firstOrder.set(cid, t.id);
      if (why !== undefined) this.#suspect.set(t.id, why);
      return undefined;
    }
    if (t.type !== 'ORDER_FILL') return undefined;
    const f = t as {
      orderID?: string;
      clientOrderID?: string;
      instrument?: string;
      units?: string;
      tradeOpened?: { tradeID?: string };
    };
    const why = f.orderID === undefined ? undefined : this.#suspect.get(f.orderID);
    if (why === undefined) return undefined;
    this.#suspect.delete(f.orderID!);
    const u: UnknownFill = {
      transactionID: t.id,
      time: t.time,
      orderID: f.orderID!,
      clientID: f.clientOrderID,
      instrument: f.instrument ?? '',
      units: f.units ?? '',
      tradeOpened: f.tradeOpened?.tradeID,
      why,
    };
    this.found.push(u);
    return u;
  }
}

/** One line naming an unknown fill (the log, the terminal, the report). */
export function describeUnknownFill(u: UnknownFill): string {
  return `order ${u.orderID}${u.clientID !== undefined ? ` (client ID ${u.clientID})` : ''} filled ${u.units} ${u.instrument} at transaction ${u.transactionID}: ${u.why === 'duplicate' ? 'a second order under one client ID' : u.why === 'given up' ? 'an order the runner had given up as not placed' : 'an order the runner never placed'}`;
}
