import { concat, from, type Observable, tap } from 'rxjs';
import { V20Error } from '../../adapters/v20/errors.ts';
import { applied, awaitWindow, clientIDOf } from '../../adapters/v20/in-doubt.ts';
import { backoffDelay, sleep } from '../../adapters/v20/rate-limit.ts';
import type { V20Rest } from '../../adapters/v20/rest.ts';
import { isReservedClientID, type OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { Execution } from '../../ports/execution.ts';
import type { Logger } from 'pino';
import type { InputRecorder } from '../recording/input-recorder.ts';
import type { Journal, JournalContents } from './journal.ts';
import type { RiskExecution } from '../../engine/risk.ts';
import { SimExecution } from '../../adapters/sim/sim-execution.ts';

/**
 * The order lifecycle: every intent the runner sends is, after its journal record, in one of
 * three states.
 *
 * - **sent, answered** (known): the broker answered the request; the journal confirms the intent
 *   (`JournaledExecution.submit`) and its transactions come on the stream.
 * - **in doubt** (unknown): the request ended without an answer (5xx, 429, a cut connection, a
 *   timeout). The seam is `OrderLifecycle.inDoubt`: the intent enters `unknown` there, and
 *   `lookUp` decides what it became (found at the broker, or not placed and never resent).
 * - **journaled, never answered, at a restart**: `settle` looks each one up. One marked sent (the
 *   journal's "sent" mark) that is not found is waited out by the in-doubt rule; one never sent is
 *   said so and not waited for. What provably never reached the broker is submitted again (`resend`)
 *   unless it expired.
 *
 * The in-doubt rule itself is written once (`src/adapters/v20/in-doubt.ts`: `awaitWindow`, `applied`)
 * and used both here and by the live send. Every request, a first sending or a resend, live or at a
 * restart, leaves through one send point (`V20Execution.send`), which asks before each attempt
 * whether the run is halted: once it is, nothing of the strategy's is sent, and an order of it still
 * in doubt is waited out and never sent again.
 */

/**
 * The journaling layer between the risk gate and the broker: every intent the gate lets through is
 * journaled here (`record`) before it joins the send queue, so an intent the gate refuses never
 * becomes an order the journal holds (a restart cannot take it for one in doubt); every
 * transaction is journaled (fsync) before the engine sees it, and an intent is confirmed once the
 * broker has answered it. The order path is risk gate → `submit` here (journal, then the queue) →
 * the send point (`V20Execution.send`, the in-doubt rule) → the broker.
 *
 * It is also the send queue: v20 intents are sent one at a time, in order, each once the previous
 * one has its answer. An intent waits here until it is its turn; once the kill switch (or a
 * flattening stop) engages, `dropping` says which waiting intents are dropped instead of sent
 * (the strategy's: the runner's own closes and cancels still go), and `onDrop` settles each.
 */
export class JournaledExecution implements Execution {
  readonly transactions$: Observable<Transaction>;
  #queue: Promise<void> = Promise.resolve();
  #waiting = 0;
  /** Which intents, when their turn comes, are dropped instead of sent (set when the kill switch engages). */
  dropping: ((intent: OrderIntent) => boolean) | undefined;
  constructor(
    readonly inner: (Execution & { drain: () => Promise<void> }) | SimExecution,
    readonly journal: Journal,
    replay: readonly Transaction[],
    readonly unknown: Set<string>,
    readonly onSubmit: () => void,
    recorder?: InputRecorder,
    /** A dropped intent: its journal record is settled and the strategy's view told (the runner). */
    readonly onDrop: (intent: OrderIntent) => void = () => undefined,
    /**
     * Journals an intent the risk gate let through, before anything of it is sent (the runner: with
     * the strategy state that produced it; an intent the journal holds already, a resend at a
     * restart, is not written again).
     */
    readonly record: (intent: OrderIntent) => void = () => undefined,
  ) {
    this.transactions$ = concat(from(replay), inner.transactions$).pipe(
      tap(
        recorder === undefined
          ? (t) => journal.transaction(t)
          : (t) => {
              journal.transaction(t);
              recorder.transaction(t, Date.now());
            },
      ),
    );
  }

  /** Intents waiting for their turn (not sent yet). */
  get waiting(): number {
    return this.#waiting;
  }

  /** Intents sent whose answer has not come yet (0 or 1: one at a time). */
  get inFlight(): number {
    return this.#inFlight;
  }
  #inFlight = 0;

  submit(intent: OrderIntent, decidedAt?: number): void {
    // Past the risk gate: journaled first, then queued for the send point.
    this.record(intent);
    this.onSubmit();
    const inner = this.inner;
    // The simulator confirms each intent itself, once its outcome exists (SimExecution).
    if (inner instanceof SimExecution) {
      if (this.dropping?.(intent) === true) this.onDrop(intent);
      else inner.submit(intent, decidedAt);
      return;
    }
    this.#waiting++;
    this.#queue = this.#queue.then(async () => {
      this.#waiting--;
      if (this.dropping?.(intent) === true) {
        this.onDrop(intent);
        return;
      }
      this.#inFlight++;
      try {
        inner.submit(intent, decidedAt);
        await inner.drain();
      } finally {
        this.#inFlight--;
      }
      if (!this.unknown.has(intent.id)) this.journal.confirm(intent.id);
    });
  }

  /** Resolves once every intent submitted so far (and any submitted meanwhile) has been sent and answered, or dropped. */
  async drain(): Promise<void> {
    let q: Promise<void>;
    do {
      q = this.#queue;
      await q;
    } while (q !== this.#queue);
    if (!(this.inner instanceof SimExecution)) await this.inner.drain();
  }
}

/** What the order lifecycle reads: the broker's REST client, the journal, the risk gate, the run's state. */
export interface OrderLifecycleOptions {
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly journal: Journal;
  readonly log: Logger;
  /** 'v20' (default) or 'sim': a simulated account has nothing to look up. */
  readonly broker?: 'v20' | 'sim';
  /** First pause before an order in doubt is looked up again (default 500 ms; doubling, at most 30 s). */
  readonly lookupBaseMs?: number;
  /** A journaled market order or close older than this (ms, default 5000) is not sent at a restart. */
  readonly maxIntentAgeMs?: number;
  /**
   * The request window plus its margin (ms, default 70 000): an intent without an answer counts as
   * never received only once this has passed since it was sent with no sign of it (the in-doubt rule).
   */
  readonly windowMs?: number;
  /** Longest pause between scans while a journaled intent is in doubt at a restart (ms, default 2000; from 250 ms, doubling). */
  readonly inDoubtScanMs?: number;
  /** The risk gate (answers refusals to the strategy; carries resends). Undefined before start. */
  readonly risk: () => RiskExecution | undefined;
  /** True once the run stops: lookups end (the next start settles what is left). */
  readonly stopping: () => boolean;
}

/** What a start recovered from the journal (the run's report). */
export interface Recovered {
  replayed: number;
  lookedUp: number;
  resubmitted: number;
  expired: number;
  /** Journaled intents whose request never left the process (no "sent" mark): not waited for. */
  neverSent: number;
  restoredState: boolean;
}

/** The intents in doubt and the rules that settle them (see the module comment). */
export class OrderLifecycle {
  /** Intents whose outcome is not known yet (in doubt): their journal records stay unconfirmed. */
  readonly unknown = new Set<string>();
  /** Intents settled as not placed (not found, expired, dropped): an order of one that shows later is an unknown fill. */
  readonly gaveUp = new Set<string>();
  readonly recovered: Recovered = {
    replayed: 0,
    lookedUp: 0,
    resubmitted: 0,
    expired: 0,
    neverSent: 0,
    restoredState: false,
  };
  readonly #o: OrderLifecycleOptions;

  constructor(o: OrderLifecycleOptions) {
    this.#o = o;
  }

  readonly #lookups = new Set<Promise<void>>();
  readonly #stop = new AbortController();

  /** Where an outcome becomes unknown: the submission of `intent` ended without an answer. */
  inDoubt(intent: OrderIntent): void {
    this.unknown.add(intent.id);
    const p = this.lookUp(intent);
    this.#lookups.add(p);
    void p.finally(() => this.#lookups.delete(p));
  }

  /** Lookups waiting for their next attempt end now (the flatten reads the account instead). */
  stopLookups(): void {
    this.#stop.abort();
  }

  /**
   * The run stops: lookups waiting for their next attempt end now (the next start settles what is
   * still in doubt); resolves once none is running, so nothing writes to the journal after it.
   */
  async stop(): Promise<void> {
    this.stopLookups();
    while (this.#lookups.size > 0) await Promise.allSettled([...this.#lookups]);
  }

  /** Intents a restart waits for (in doubt, within their window): the status page shows them. */
  readonly waiting = new Map<string, { readonly intentId: string; readonly until: number }>();

  /**
   * At a restart: waits while `intent` (journaled, sent at `sentAt`, never answered, not found) may
   * still reach the broker (the in-doubt rule, `awaitWindow`), looking for it after `after`; true as
   * soon as it shows, false once its window has passed without a sign. A scan that fails is tried
   * again; after the window a failing scan throws (the start fails: nothing is resent blindly).
   */
  async #awaitWindow(intent: OrderIntent, sentAt: number, after: string): Promise<boolean> {
    const o = this.#o;
    const until = sentAt + (o.windowMs ?? 70_000);
    if (Date.now() >= until) return false;
    this.waiting.set(intent.id, { intentId: intent.id, until });
    o.log.warn(
      { intentId: intent.id, kind: intent.kind, until: new Date(until).toISOString() },
      'journaled intent not at the broker, but sent within its request window: in doubt; waiting for a sign of it before deciding',
    );
    try {
      return await awaitWindow({
        rest: o.rest,
        accountID: o.accountID,
        intent,
        mark: after,
        until,
        scanMs: o.inDoubtScanMs ?? 2000,
        onScanError: (e) =>
          o.log.warn({ intentId: intent.id, err: e }, 'in doubt: the scan failed; trying again'),
      });
    } finally {
      this.waiting.delete(intent.id);
    }
  }

  /** Where a resend is decided: the journaled intent provably never reached the broker and goes again. */
  resend(intent: OrderIntent, risk: RiskExecution): void {
    this.recovered.resubmitted++;
    this.#o.log.warn(
      { intentId: intent.id, kind: intent.kind },
      'journaled intent never reached the broker; submitting it now',
    );
    risk.submit(intent);
  }

  /**
   * An order whose submission ended without a known outcome (5xx, 429 or network errors even on
   * the lookups): looked up again by its client ID, after pauses doubling from `lookupBaseMs` to
   * 30 s, until its outcome is known or the run stops (then the next start settles it). Found: the
   * intent is confirmed (its transactions come on the stream). Provably absent (no order with its
   * client ID, no transaction carrying it): it is not sent again (its moment has passed); the
   * strategy gets a reject (`FXFLOW_NOT_PLACED`) so that it stops waiting. Other intents (closes,
   * cancels) are looked for in the transactions after them (`applied`). No request window here: the adapter
   * (V20Execution) gives an outcome up as unknown either after a 5xx that OANDA answered (the request
   * was dealt with) or once the window of a request that may have been in transit has passed; a
   * lookup finding nothing is then conclusive.
   */
  async lookUp(intent: OrderIntent): Promise<void> {
    const o = this.#o;
    const log = o.log;
    const after =
      o.journal.pendingIntent(intent.id)?.afterTransactionID || o.journal.lastTransactionID || '0';
    for (let attempt = 0; ; attempt++) {
      try {
        await sleep(backoffDelay(attempt, o.lookupBaseMs ?? 500, 30_000), this.#stop.signal);
      } catch {
        return; // the run stops
      }
      if (o.stopping() || !this.unknown.has(intent.id)) return;
      try {
        const found = await applied(o.rest, o.accountID, intent, after);
        this.unknown.delete(intent.id);
        o.journal.confirm(intent.id);
        if (found) {
          log.info(
            { intentId: intent.id, kind: intent.kind, attempts: attempt + 1 },
            'outcome of an unanswered submission found: it had reached the broker',
          );
        } else {
          this.gaveUp.add(intent.id);
          log.warn(
            { intentId: intent.id, kind: intent.kind, attempts: attempt + 1 },
            'an unanswered submission never reached the broker; it is not sent again (the strategy gets a reject)',
          );
          o.risk()?.refuse(
            intent,
            'FXFLOW_NOT_PLACED',
            'the submission got no answer and the order is not at the broker; it was not sent again',
          );
        }
        return;
      } catch (e) {
        log.warn(
          { intentId: intent.id, attempt, err: e },
          'outcome still unknown (the lookup failed); looking again later',
        );
      }
    }
  }

  /**
   * Intents journaled without a known outcome: an order is looked up by `@clientID` (and in the
   * journaled and missed transactions); only one that provably never reached the broker is
   * submitted again. A close or cancel is resubmitted when no transaction after it (journaled or
   * missed, not already claimed by an earlier intent) shows its effect.
   */
  async settle(contents: JournalContents, risk: RiskExecution): Promise<void> {
    const o = this.#o;
    if (contents.intents.length === 0) return;
    // --broker sim: the journal holds every transaction of the (restored) simulator, so an intent
    // whose outcome it does not show never reached it; there is nothing to look up or miss.
    const v20 = (o.broker ?? 'v20') === 'v20';
    const since =
      v20 && contents.lastTransactionID
        ? (await o.rest.transactionsSinceId(o.accountID, contents.lastTransactionID)).transactions
        : [];
    const seen = new Set<string>();
    const pool = [...contents.transactions, ...since];
    for (const t of pool) {
      const cid = clientIDOf(t);
      if (cid !== undefined) seen.add(cid);
    }
    // Closes and cancels carry no client ID: each is matched to the first later transaction that
    // does what it asked, and a transaction proves at most one intent (two unconfirmed partial
    // closes of one trade with one close seen: exactly one is sent again).
    const used = new Set<string>();
    for (const { intent, afterTransactionID, wall, marksSent, sentAt } of contents.intents) {
      this.recovered.lookedUp++;
      let applied = seen.has(intent.id);
      if (!applied && (intent.kind === 'order' || intent.kind === 'replace')) {
        if (v20)
          try {
            await o.rest.order(o.accountID, `@${intent.id}`);
            applied = true;
          } catch (e) {
            if (!(e instanceof V20Error && e.status === 404)) throw e;
          }
      } else if (!applied) {
        const after = Number(afterTransactionID || '0');
        const proof = pool.find((t) => !used.has(t.id) && Number(t.id) > after && relates(t, intent));
        if (proof !== undefined) {
          used.add(proof.id);
          applied = true;
        }
      }
      // Sent moments ago and not found: it may still be in transit. It is in doubt until its window
      // has passed (the start waits, scanning), found, or then provably never received. One the
      // journal never marked sent cannot be in transit: nothing to wait for.
      if (!applied && v20) {
        if (marksSent === true && sentAt === undefined) {
          this.recovered.neverSent++;
          o.log.warn(
            { intentId: intent.id, kind: intent.kind },
            'journaled intent was never sent (decided, but its request never left the process): not waiting for it',
          );
        } else
          applied = await this.#awaitWindow(
            intent,
            sentAt ?? wall ?? 0,
            afterTransactionID || contents.lastTransactionID || '0',
          );
      }
      const age = Date.now() - (wall ?? Number.NaN);
      if (applied) {
        o.journal.confirm(intent.id);
        o.log.info({ intentId: intent.id }, 'journaled intent had reached the broker; not resubmitting');
      } else if (expires(intent) && age > (o.maxIntentAgeMs ?? 5000)) {
        this.recovered.expired++;
        this.gaveUp.add(intent.id);
        o.journal.confirm(intent.id);
        o.log.warn(
          { intentId: intent.id, kind: intent.kind, ageMs: age, maxIntentAgeMs: o.maxIntentAgeMs ?? 5000 },
          'journaled intent never reached the broker and is older than --max-intent-age; not submitting it',
        );
        risk.refuse(
          intent,
          'FXFLOW_INTENT_EXPIRED',
          `decided ${(age / 1000).toFixed(1)} s ago (before a restart) and never sent; older than --max-intent-age ${((o.maxIntentAgeMs ?? 5000) / 1000).toFixed(1)} s`,
        );
      } else {
        this.resend(intent, risk);
      }
    }
  }
}

/**
 * Whether an intent is the runner's own (the kill switch's or a flatten's close or cancel), not the
 * strategy's: its ID is in the reserved namespace the strategy API refuses (`RUNNER_ID_PREFIX`), so
 * a strategy named `kill` or a client ID `exit-1` cannot pass for one.
 */
export function isRunnerIntent(intent: OrderIntent): boolean {
  return isReservedClientID(intent.id);
}

/**
 * Intents `--max-intent-age` applies to: the strategy's market orders and closes (their moment is
 * their point). The kill switch's and flatten's closes are the operator's and never expire.
 */
export function expires(intent: OrderIntent): boolean {
  if (isRunnerIntent(intent)) return false;
  if (intent.kind === 'closeTrade' || intent.kind === 'closePosition') return true;
  return intent.kind === 'order' && (intent.request as { type?: string }).type === 'MARKET';
}

/** Whether a transaction does what a close or cancel asked (they carry no client ID). */
export function relates(t: Transaction, intent: OrderIntent): boolean {
  const x = t as {
    type: string;
    orderID?: string;
    tradeClose?: { tradeID?: string };
    longPositionCloseout?: { instrument?: string };
    shortPositionCloseout?: { instrument?: string };
  };
  switch (intent.kind) {
    case 'cancel':
      return x.type === 'ORDER_CANCEL' && x.orderID === intent.orderSpecifier;
    case 'closeTrade':
      return x.tradeClose?.tradeID === intent.tradeSpecifier;
    case 'closePosition':
      return (
        (x.longPositionCloseout?.instrument ?? x.shortPositionCloseout?.instrument) === intent.instrument
      );
    default:
      return false;
  }
}

export { clientIDOf };
