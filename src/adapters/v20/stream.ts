import type { Logger } from 'pino';
// Observable alone, from its own module: 'rxjs' itself loads all of rxjs (about 220 CommonJS files,
// 0.1-0.2 s of a backtest's start-up); the same file, so the same class, as 'rxjs' exports.
import { Observable } from 'rxjs/internal/Observable';
import type { ClientPrice, PricingHeartbeat, Transaction } from '../../domain/v20/index.ts';
import { parsePricingStreamLine, parseTransactionStreamLine } from '../../domain/v20/parse.ts';
import { V20Error } from './errors.ts';
import type { V20Http } from './http.ts';
import { backoffDelay, sleep } from './rate-limit.ts';
import type { V20Rest } from './rest.ts';

/** Counters of one stream observable, for reports and tests. Pass your own object to read them. */
export interface StreamStats {
  /** Successful stream opens (the first included). */
  connects: number;
  /** Times the stream was reopened after a drop, an error or a stall. */
  reconnects: number;
  /** Reopens caused by the watchdog (no line within `watchdogMs`). */
  stalls: number;
  /** Lines that did not parse (logged at warn and skipped). */
  malformed: number;
  /** Lines delivered (prices, heartbeats, transactions). */
  delivered: number;
  /** Transactions fetched with `sinceid` (transaction stream only). */
  backfilled: number;
  /** Transactions seen again (stream after backfill, or a replay) and dropped. */
  duplicates: number;
}

/** Fresh zeroed counters; pass them as `stats` to read a stream's figures. */
export const newStreamStats = (): StreamStats => ({
  connects: 0,
  reconnects: 0,
  stalls: 0,
  malformed: 0,
  delivered: 0,
  backfilled: 0,
  duplicates: 0,
});

export interface StreamOptions {
  /** Reconnect when no line (heartbeats included) arrives within this many ms. Default 10 000 (v20 sends a heartbeat every 5 s). */
  readonly watchdogMs?: number;
  /** First reconnect delay in ms (default 250); doubles per failed attempt, full jitter. */
  readonly reconnectBaseMs?: number;
  /** Largest reconnect delay in ms (default 15 000). */
  readonly reconnectCapMs?: number;
  readonly stats?: StreamStats;
}

export interface PricingStreamOptions extends StreamOptions {
  /** Send the current price first (v20's default true). */
  readonly snapshot?: boolean;
  readonly includeHomeConversions?: boolean;
}

export interface TransactionStreamOptions extends StreamOptions {
  /** Deliver every transaction after this ID (exclusive). Use the account's `lastTransactionID`, or the last one persisted before a restart. */
  readonly lastTransactionID: string;
}

/** What a connection loop does with each line; returns once the connection is over. */
type LineHandler = (line: string) => void | Promise<void>;

/** Numeric order of v20 transaction IDs (decimal integer strings). */
const idNum = (id: string): number => Number(id);

/**
 * Runs a stream with a watchdog and reconnects until unsubscribed. `onOpen` runs after each open
 * (before any line is handled); lines are handled one at a time, in order. A V20Error that is not
 * retryable (401, 403, 404: a wrong token or account) ends the observable with that error;
 * everything else reconnects with jittered backoff.
 */
function resilient<T>(
  http: V20Http,
  name: string,
  path: string,
  query: Record<string, string | boolean | undefined>,
  o: StreamOptions,
  setup: (
    emit: (v: T) => void,
    log: Logger,
    stats: StreamStats,
  ) => { onOpen?: () => Promise<void>; onLine: LineHandler },
): Observable<T> {
  return new Observable<T>((subscriber) => {
    const stop = new AbortController();
    const log = http.log.child({ stream: name });
    const stats = o.stats ?? newStreamStats();
    const watchdogMs = o.watchdogMs ?? 10_000;
    const base = o.reconnectBaseMs ?? 250;
    const cap = o.reconnectCapMs ?? 15_000;
    const h = setup((v) => subscriber.next(v), log, stats);

    const run = async () => {
      let attempt = 0;
      let first = true;
      while (!stop.signal.aborted) {
        if (http.closed) {
          log.info('client closed, stream ends');
          subscriber.complete();
          return;
        }
        const conn = new AbortController();
        const onStop = () => conn.abort(stop.signal.reason);
        stop.signal.addEventListener('abort', onStop, { once: true });
        let timer: NodeJS.Timeout | undefined;
        let stalled = false;
        const arm = () => {
          if (timer !== undefined) clearTimeout(timer);
          timer = setTimeout(() => {
            stalled = true;
            conn.abort(
              new V20Error({
                code: 'V20_TIMEOUT',
                method: 'GET',
                path,
                message: `GET ${path}: no line for ${watchdogMs} ms`,
                retryable: true,
              }),
            );
          }, watchdogMs);
        };
        const disarm = () => {
          if (timer !== undefined) clearTimeout(timer);
          timer = undefined;
        };
        try {
          if (!first) {
            stats.reconnects++;
            const delay = backoffDelay(attempt++, base, cap);
            log.info({ attempt, delayMs: Math.round(delay) }, 'reconnecting');
            await sleep(delay, stop.signal);
          }
          first = false;
          arm();
          const lines = await http.openStream(path, query, conn.signal);
          stats.connects++;
          if (h.onOpen) {
            disarm();
            await h.onOpen();
            arm();
          }
          let gotLine = false;
          for await (const line of lines) {
            arm();
            if (!gotLine) {
              gotLine = true;
              attempt = 0;
            }
            const r = h.onLine(line);
            if (r !== undefined) {
              disarm();
              await r;
              arm();
            }
            if (stop.signal.aborted) break;
          }
          if (stalled) {
            stats.stalls++;
            log.warn({ watchdogMs }, 'stream stalled, reconnecting');
          } else if (!stop.signal.aborted) log.info('stream ended by the server, reconnecting');
        } catch (e) {
          if (stop.signal.aborted) break;
          if (http.closed) continue;
          if (stalled) {
            stats.stalls++;
            log.warn({ watchdogMs }, 'stream stalled, reconnecting');
          } else if (e instanceof V20Error && !e.retryable && e.code !== 'V20_NETWORK') {
            disarm();
            subscriber.error(e);
            return;
          } else {
            log.warn({ err: e instanceof Error ? e.message : String(e) }, 'stream failed, reconnecting');
          }
        } finally {
          disarm();
          stop.signal.removeEventListener('abort', onStop);
          conn.abort();
        }
      }
    };
    run().catch((e: unknown) => {
      if (!stop.signal.aborted) subscriber.error(e);
    });
    return () =>
      stop.abort(
        new V20Error({
          code: 'V20_NETWORK',
          method: 'GET',
          path,
          message: `GET ${path}: unsubscribed`,
          retryable: false,
        }),
      );
  });
}

/**
 * The pricing stream of an account: prices and heartbeats as v20 sends them, parsed and checked.
 * Reconnects by itself (watchdog, backoff); a malformed line is logged and skipped. A price missed
 * during a reconnect is not replayed (prices are state, the next one supersedes it); with
 * `snapshot` (default) each reconnect starts with the current prices.
 * Unsubscribing aborts the HTTP request.
 */
export function pricingStream(
  http: V20Http,
  accountID: string,
  instruments: readonly string[],
  o: PricingStreamOptions = {},
): Observable<ClientPrice | PricingHeartbeat> {
  const path = `/v3/accounts/${encodeURIComponent(accountID)}/pricing/stream`;
  const query = {
    instruments: instruments.join(','),
    snapshot: o.snapshot === undefined ? undefined : o.snapshot,
    includeHomeConversions: o.includeHomeConversions,
  };
  return resilient<ClientPrice | PricingHeartbeat>(http, 'pricing', path, query, o, (emit, log, stats) => ({
    onLine(line) {
      const r = parsePricingStreamLine(line);
      if (!r.ok) {
        stats.malformed++;
        log.warn({ problem: r.error.message }, 'malformed pricing line skipped');
        return;
      }
      stats.delivered++;
      emit(r.value);
    },
  }));
}

/**
 * The transaction stream of an account, exactly once and in ID order, starting after
 * `lastTransactionID`.
 *
 * How: after every (re)connect, `GET /transactions/sinceid?id=<last delivered>` fills what was
 * missed, then the stream continues; a transaction whose ID is not above the last delivered one is
 * a duplicate and dropped; a gap (an ID beyond last+1, or a heartbeat whose `lastTransactionID` is
 * ahead) triggers the same backfill before anything newer is delivered. The stream is opened before
 * the backfill, so nothing falls between the two.
 */
export function transactionStream(
  http: V20Http,
  rest: V20Rest,
  accountID: string,
  o: TransactionStreamOptions,
): Observable<Transaction> {
  const path = `/v3/accounts/${encodeURIComponent(accountID)}/transactions/stream`;
  if (!/^\d+$/.test(o.lastTransactionID)) {
    throw new V20Error({
      code: 'V20_UNSUPPORTED',
      method: 'GET',
      path,
      message: `transactionStream: lastTransactionID "${o.lastTransactionID}" is not a v20 transaction ID (a decimal integer string)`,
    });
  }
  return resilient<Transaction>(http, 'transactions', path, {}, o, (emit, log, stats) => {
    let last = idNum(o.lastTransactionID);
    let lastID = o.lastTransactionID;
    const deliver = (t: Transaction) => {
      const n = idNum(t.id);
      if (n <= last) {
        stats.duplicates++;
        return;
      }
      last = n;
      lastID = t.id;
      stats.delivered++;
      emit(t);
    };
    const backfill = async () => {
      for (;;) {
        const r = await rest.transactionsSinceId(accountID, lastID);
        const sorted = r.transactions.slice().sort((a, b) => idNum(a.id) - idNum(b.id));
        let added = 0;
        for (const t of sorted) {
          if (idNum(t.id) > last) {
            stats.backfilled++;
            added++;
          }
          deliver(t);
        }
        // sinceid may be capped by the server: ask again until it reports nothing newer.
        if (added === 0 || idNum(r.lastTransactionID) <= last) return;
      }
    };
    return {
      onOpen: backfill,
      onLine(line) {
        const r = parseTransactionStreamLine(line);
        if (!r.ok) {
          stats.malformed++;
          log.warn({ problem: r.error.message }, 'malformed transaction line skipped');
          return;
        }
        const v = r.value;
        if (v.type === 'HEARTBEAT') {
          const hb = v as { lastTransactionID: string };
          if (idNum(hb.lastTransactionID) > last) return backfill();
          return;
        }
        const t = v as Transaction;
        const n = idNum(t.id);
        if (n > last + 1) {
          return backfill().then(() => deliver(t));
        }
        deliver(t);
      },
    };
  });
}
