import type { Logger } from 'pino';
import { type Observable, Subject, share, tap } from 'rxjs';
import { assertNever, type OrderIntent, withClientID } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { Execution } from '../../ports/execution.ts';
import { V20Error } from './errors.ts';
import type { V20Http } from './http.ts';
import { applied, awaitWindow } from './in-doubt.ts';
import { backoffDelay, sleep } from './rate-limit.ts';
import type { OrderResponse, V20Rest } from './rest.ts';
import { type StreamOptions, transactionStream } from './stream.ts';

/** What V20Execution needs: the client, the account, where its transaction stream starts, and stream/resubmission tuning. */
export interface V20ExecutionOptions extends StreamOptions {
  readonly http: V20Http;
  readonly rest: V20Rest;
  readonly accountID: string;
  /** The transaction stream starts after this ID; also the first mark for post-failure lookups. */
  readonly lastTransactionID: string;
  /** How many times a submission may be resubmitted after it was proven not to exist (default 3). */
  readonly resubmits?: number;
  /** First delay before a lookup/resubmission in ms (default 500). */
  readonly resubmitBaseMs?: number;
  /**
   * How long after it was sent a request may still reach OANDA and take effect (ms, default
   * 60 000). OANDA publishes no such figure; the default is twice the client's 30 s timeout. A
   * request whose outcome is unknown is in doubt until this, plus `inDoubtMarginMs`, has passed.
   */
  readonly requestWindowMs?: number;
  /** Added to the request window before a request in doubt counts as never received (ms, default 10 000). */
  readonly inDoubtMarginMs?: number;
  /** Pause between scans of the account while a request is in doubt (ms, default 2000); a transaction on the stream ends it early. */
  readonly inDoubtScanMs?: number;
  /**
   * Asked before every attempt, the first and each resend (the runner: false for the strategy's
   * intents once the run is halted). False: nothing is sent, and the submission fails `not-sent`.
   */
  readonly maySend?: (intent: OrderIntent) => boolean;
  /** Called just before the bytes of an attempt leave (the runner's journal writes its "sent" mark). */
  readonly onSend?: (intent: OrderIntent, attempt: number) => void;
  /**
   * Told what became of each attempt (the run folder records it): `answered`, the HTTP status of a
   * failed one, `timeout` or `network error`, then, for one without a definite answer, `found` or
   * `not found` (the look-up or the in-doubt window's answer).
   */
  readonly onAttempt?: (intent: OrderIntent, attempt: number, what: string) => void;
}

/** A submission `maySend` refused: nothing of it was sent (a resend: the first request provably never arrived). */
export class NotSentError extends Error {
  readonly code = 'NOT_SENT' as const;
  constructor(
    readonly intent: OrderIntent,
    /** 0: refused before its first sending; more: a resend refused. */
    readonly attempt: number,
  ) {
    super(
      attempt === 0
        ? `intent ${intent.id} was not sent: the run is halted`
        : `intent ${intent.id} was not sent again: its request provably never arrived and the run is halted`,
    );
    this.name = 'NotSentError';
  }
}

/** A request in doubt: sent, no answer, possibly still in transit to OANDA. */
export interface InDoubt {
  readonly intentId: string;
  readonly kind: OrderIntent['kind'];
  /** The instrument an order or close is on, when the intent names one. */
  readonly instrument: string | undefined;
  /** Epoch ms the request was sent. */
  readonly sentAt: number;
  /** Epoch ms after which, with no sign of it, it counts as never received. */
  readonly until: number;
}

/** A submission that ended without a v20 answer we could attribute: reported, never guessed. */
export interface SubmissionFailure {
  readonly intent: OrderIntent;
  readonly error: V20Error | Error;
  /**
   * 'rejected': v20 answered 4xx (the reject transaction also arrives on the stream); 'unknown': the
   * outcome could not be established; 'not-sent': `maySend` refused it (the run is halted) and
   * nothing of it is at the broker.
   */
  readonly outcome: 'rejected' | 'unknown' | 'not-sent';
}

/** Counters of the idempotency path, for reports and tests. */
export interface ExecutionStats {
  submitted: number;
  /** Submissions whose first answer was a network error, timeout, 5xx or 429. */
  ambiguous: number;
  /** Ambiguous submissions found to have been applied (no resubmission). */
  foundAfterFailure: number;
  /** Submissions sent again after the lookup proved they were not applied. */
  resubmitted: number;
  /** Submissions that were in doubt (no answer, possibly in transit) and waited for their window. */
  inDoubt: number;
}

/** A failed attempt whose effect at v20 is unknown: no answer, a 5xx, a timeout or a 429. */
const ambiguous = (e: unknown): e is V20Error =>
  e instanceof V20Error &&
  (e.code === 'V20_NETWORK' || e.code === 'V20_TIMEOUT' || (e.code === 'V20_HTTP' && e.retryable));

/** Errors of a connection that never opened: nothing of the request left this process. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether a request without an answer may still be in transit to OANDA: a timeout or a connection
 * lost once the request could have been written, or a gateway's 504 (it gave up waiting while the
 * request may still be on its way). A 5xx or 429 that OANDA itself answered means the request was
 * dealt with (processed or not); a lookup then is conclusive at once.
 */
export function mayBeInTransit(e: V20Error): boolean {
  if (e.code === 'V20_HTTP') return e.status === 504;
  const code = (e.cause as { code?: unknown } | undefined)?.code;
  return !(typeof code === 'string' && NOT_SENT.has(code));
}

/**
 * The Execution port on a v20 account (practice or live).
 *
 * `submit` queues the intent; intents are sent one at a time in submission order. Outcomes arrive
 * only on `transactions$` (the account's transaction stream, exactly once, in ID order, backfilled
 * with `sinceid` after reconnects), as in the simulator.
 *
 * Idempotency: every order and replacement carries the intent's `id` as `clientExtensions.id`.
 * When a state-changing request gets no definite answer (network error, timeout, 5xx, 429) it is
 * never repeated blindly: the adapter first looks for its effect (`GET /orders/@<clientID>`, the
 * order or trade it targets, and `GET /transactions/sinceid` from the last ID seen before the
 * request) and sends it again only when that proves nothing happened. A request that may still be in
 * transit (timeout, lost connection, 504) is in doubt until its whole window has passed with no sign
 * of it (`#awaitWindow`): v20 refuses a second *pending* order with a used client ID
 * (`CLIENT_ORDER_ID_ALREADY_EXISTS`), but not a second market order, which fills at once.
 */
export class V20Execution implements Execution {
  readonly transactions$: Observable<Transaction>;
  /** Submissions that were rejected (4xx) or whose outcome stayed unknown. */
  readonly failures$ = new Subject<SubmissionFailure>();
  readonly stats: ExecutionStats = {
    submitted: 0,
    ambiguous: 0,
    foundAfterFailure: 0,
    resubmitted: 0,
    inDoubt: 0,
  };
  /** Requests in doubt now (by intent ID): the status page shows them; the send queue waits for each. */
  readonly inDoubt = new Map<string, InDoubt>();
  /** Transactions seen on the stream, for requests in doubt waiting for a sign. */
  readonly #signs = new Subject<Transaction>();
  readonly #o: V20ExecutionOptions;
  readonly #log: Logger;
  #lastSeen: string;
  #queue: Promise<void> = Promise.resolve();

  constructor(o: V20ExecutionOptions) {
    this.#o = o;
    this.#log = o.http.log.child({ part: 'execution' });
    this.#lastSeen = o.lastTransactionID;
    this.transactions$ = transactionStream(o.http, o.rest, o.accountID, o).pipe(
      tap((t) => {
        this.#see(t.id);
        if (this.inDoubt.size > 0) this.#signs.next(t);
      }),
      share(),
    );
  }

  #see(id: string | undefined): void {
    if (id !== undefined && Number(id) > Number(this.#lastSeen)) this.#lastSeen = id;
  }

  submit(intent: OrderIntent): void {
    this.stats.submitted++;
    this.#queue = this.#queue.then(() =>
      this.send(intent).then(
        () => undefined,
        (e: unknown) => {
          const error = e instanceof Error ? e : new Error(String(e));
          const outcome =
            e instanceof NotSentError
              ? 'not-sent'
              : e instanceof V20Error && e.code === 'V20_HTTP' && !e.retryable
                ? 'rejected'
                : 'unknown';
          this.#log.warn(
            {
              intentId: intent.id,
              kind: intent.kind,
              code: (error as V20Error).code,
              status: (error as V20Error).status,
              errorCode: (error as V20Error).errorCode,
              outcome,
            },
            'submission failed',
          );
          this.failures$.next({ intent, error, outcome });
        },
      ),
    );
  }

  /** Resolves when every submitted intent has been sent (or has failed). */
  drain(): Promise<void> {
    return this.#queue;
  }

  /**
   * The send point: the one place the bytes of an intent leave this process, its first sending and
   * every resend alike. Before each attempt it asks `maySend` (the runner: not once the run is
   * halted, unless the intent is the runner's own close or cancel) and, when it may, calls `onSend`
   * (the runner's journal marks the intent sent). Then it sends with the idempotency rules and
   * returns v20's answer, or the string 'found' when an ambiguous attempt turned out to have been
   * applied. Rejects on a 4xx, when the outcome cannot be established, or with `NotSentError` when
   * `maySend` refused (for a resend: the first request provably never arrived, and is not repeated).
   */
  async send(intent: OrderIntent): Promise<OrderResponse | 'found'> {
    const limit = this.#o.resubmits ?? 3;
    for (let attempt = 0; ; attempt++) {
      if (this.#o.maySend !== undefined && !this.#o.maySend(intent)) throw new NotSentError(intent, attempt);
      this.#o.onSend?.(intent, attempt);
      const mark = this.#lastSeen;
      const sentAt = Date.now();
      try {
        const res = await this.#attempt(intent);
        if (typeof res.lastTransactionID === 'string') this.#see(res.lastTransactionID);
        this.#o.onAttempt?.(intent, attempt, 'answered');
        return res;
      } catch (e) {
        if (e instanceof V20Error)
          this.#o.onAttempt?.(
            intent,
            attempt,
            e.code === 'V20_TIMEOUT'
              ? 'timeout'
              : e.code === 'V20_NETWORK'
                ? 'network error'
                : String(e.status ?? e.code),
          );
        if (!ambiguous(e)) throw e;
        this.stats.ambiguous++;
        let found: boolean;
        // (Not when the client itself is closing: nothing could be scanned; the next start settles it.)
        if (mayBeInTransit(e) && e.retryable) {
          // A lookup finding nothing proves nothing while the request may still arrive (and OANDA
          // does not refuse a second market order with a used client ID): wait for its window.
          found = await this.#awaitWindow(intent, mark, sentAt, e);
        } else {
          this.#log.warn(
            { intentId: intent.id, kind: intent.kind, code: e.code, status: e.status, attempt },
            'no definite answer; looking the request up before any resubmission',
          );
          await sleep(e.retryAfterMs ?? backoffDelay(attempt, this.#o.resubmitBaseMs ?? 500, 10_000));
          found = await applied(this.#o.rest, this.#o.accountID, intent, mark);
        }
        this.#o.onAttempt?.(intent, attempt, found ? 'found' : 'not found');
        if (found) {
          this.stats.foundAfterFailure++;
          this.#log.info(
            { intentId: intent.id, kind: intent.kind },
            'the request had been applied; not resubmitting',
          );
          return 'found';
        }
        if (attempt >= limit) throw e;
        if (this.#o.maySend !== undefined && !this.#o.maySend(intent)) {
          this.#log.warn(
            { intentId: intent.id, kind: intent.kind },
            'the request provably had no effect and the run is halted: not resubmitting',
          );
          throw new NotSentError(intent, attempt + 1);
        }
        this.stats.resubmitted++;
        this.#log.info(
          { intentId: intent.id, kind: intent.kind, attempt: attempt + 1 },
          'the request provably had no effect; resubmitting',
        );
      }
    }
  }

  /**
   * Waits out a request in doubt (the in-doubt rule, `awaitWindow` in in-doubt.ts): shown on the
   * status page meanwhile (`inDoubt`). Resolves true when found, false when its whole window passed
   * with no sign (conclusive); rejects with `e` when even the last scan failed (still unknown).
   */
  async #awaitWindow(intent: OrderIntent, mark: string, sentAt: number, e: V20Error): Promise<boolean> {
    const o = this.#o;
    const until = sentAt + (o.requestWindowMs ?? 60_000) + (o.inDoubtMarginMs ?? 10_000);
    this.stats.inDoubt++;
    this.inDoubt.set(intent.id, {
      intentId: intent.id,
      kind: intent.kind,
      instrument: instrumentOf(intent),
      sentAt,
      until,
    });
    this.#log.warn(
      {
        intentId: intent.id,
        kind: intent.kind,
        code: e.code,
        status: e.status,
        until: new Date(until).toISOString(),
      },
      'no answer and the request may still be in transit: in doubt; it is resent only if nothing of it shows until its window has passed (and never once the run is halted)',
    );
    try {
      const found = await awaitWindow({
        rest: o.rest,
        accountID: o.accountID,
        intent,
        mark,
        until,
        scanMs: o.inDoubtScanMs ?? 2000,
        signs: this.#signs,
      }).catch(() => {
        throw e; // no conclusive scan after the window: still unknown
      });
      if (!found)
        this.#log.warn(
          { intentId: intent.id, kind: intent.kind, sentAt: new Date(sentAt).toISOString() },
          "the request's whole window has passed with no sign of it at the broker: it was never received",
        );
      return found;
    } finally {
      this.inDoubt.delete(intent.id);
    }
  }

  #attempt(intent: OrderIntent): Promise<OrderResponse> {
    const { rest, accountID: acc } = this.#o;
    switch (intent.kind) {
      case 'order':
        return rest.createOrder(acc, withClientID(intent).request);
      case 'replace':
        return rest.replaceOrder(acc, intent.orderSpecifier, withClientID(intent).request);
      case 'cancel':
        return rest.cancelOrder(acc, intent.orderSpecifier);
      case 'closeTrade':
        return rest.closeTrade(acc, intent.tradeSpecifier, intent.units);
      case 'closePosition':
        return rest.closePosition(acc, intent.instrument, {
          ...(intent.longUnits !== undefined ? { longUnits: intent.longUnits } : {}),
          ...(intent.shortUnits !== undefined ? { shortUnits: intent.shortUnits } : {}),
        });
      case 'tradeOrders': {
        const body: Record<string, unknown> = {};
        if (intent.takeProfit !== undefined) body.takeProfit = intent.takeProfit;
        if (intent.stopLoss !== undefined) body.stopLoss = intent.stopLoss;
        if (intent.trailingStopLoss !== undefined) body.trailingStopLoss = intent.trailingStopLoss;
        if (intent.guaranteedStopLoss !== undefined) body.guaranteedStopLoss = intent.guaranteedStopLoss;
        return rest.setTradeOrders(acc, intent.tradeSpecifier, body);
      }
      case 'clientExtensions':
        if (intent.orderSpecifier !== undefined) {
          return rest.orderClientExtensions(acc, intent.orderSpecifier, {
            ...(intent.clientExtensions ? { clientExtensions: intent.clientExtensions } : {}),
            ...(intent.tradeClientExtensions ? { tradeClientExtensions: intent.tradeClientExtensions } : {}),
          });
        }
        if (intent.tradeSpecifier !== undefined)
          return rest.tradeClientExtensions(
            acc,
            intent.tradeSpecifier,
            intent.tradeClientExtensions ?? intent.clientExtensions ?? {},
          );
        return Promise.reject(
          new V20Error({
            code: 'V20_UNSUPPORTED',
            method: 'PUT',
            path: '-',
            message: `clientExtensions intent ${intent.id}: give orderSpecifier or tradeSpecifier`,
          }),
        );
      default:
        return assertNever(intent, 'intent');
    }
  }
}

/** The instrument an intent acts on, when it names one (an order's request, a position close). */
export function instrumentOf(intent: OrderIntent): string | undefined {
  if (intent.kind === 'closePosition') return intent.instrument;
  if (intent.kind === 'order' || intent.kind === 'replace')
    return (intent.request as { instrument?: string }).instrument;
  return undefined;
}
