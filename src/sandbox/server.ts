import { existsSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { Catalog, ensureSample } from '../adapters/catalog/index.ts';
import { sampleCatalogDir } from '../adapters/catalog/location.ts';
import type { OrderIntent } from '../domain/intents.ts';
import { loadInstruments, type InstrumentRegistry } from '../domain/instrument.ts';
import { parseRequestTime, parseTime, type UnixMs } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';
import type { SandboxAccount } from './account.ts';
import { SandboxAccounts } from './accounts.ts';
import { DEFAULT_STREAM_LIMITS, Faults, type FaultOptions, type StreamLimits } from './faults.ts';
import { requestHandler, requestIDs, RouteTable, serveHttp, tokenCheck } from './http.ts';
import { labsRoute } from './labs.ts';
import { legacyRoute } from './legacy/routes.ts';
import { formatLegacyReport } from './legacy/migration.ts';
import { priceFeed, SandboxMarket } from './market.ts';
import { oauthRoute } from './oauth.ts';
import type { SandboxRoute } from './route.ts';
import { SandboxStreams, type SandboxCounters } from './streams.ts';
import { accountRoutes } from './v3/accounts.ts';
import type { SandboxStats, V3Context } from './v3/context.ts';
import { controlRoutes, controlTime } from './v3/control.ts';
import { orderRoutes } from './v3/orders.ts';
import { pricingRoutes } from './v3/pricing.ts';
import { tradePositionRoutes } from './v3/trades-positions.ts';
import { transactionRoutes } from './v3/transactions.ts';

export type { FaultOptions } from './faults.ts';
export type { SandboxStats } from './v3/context.ts';

/** Options of `startSandbox`. Every field has a default suited to tests. */
export interface SandboxOptions {
  /** Default 0 (random) for tests; the CLI defaults to 8080. */
  port?: number;
  /** Must be loopback; default 127.0.0.1. */
  host?: string;
  /** manual: time and prices only move via control; replay: bundled data feed. Default manual. */
  clock?: 'manual' | 'replay';
  /** replay: simulated ms per real ms (default 1). */
  speed?: number;
  /** Replay start time, and the manual clock's initial time (default 2024-01-02T00:00Z). */
  start?: string | number;
  /** Catalog folder for replay and candles (default: the bundled sample, generated in the user's cache on first use). */
  data?: string;
  /** Accounts; default one USD account of 100000, id '101-001-0000001-001'. */
  accounts?: { id?: string; currency?: string; balance?: string; marginRate?: string; hedging?: boolean }[];
  /**
   * When set, every request needs 'Authorization: Bearer <it>' (or a token the sandbox's OAuth
   * endpoints issued): /v3, /labs, the OAuth endpoints themselves and the /sandbox control.
   */
  requireToken?: string;
  /**
   * Transactions each account keeps (default 100,000): older ones are forgotten so that memory
   * stays bounded over millions of orders, and requests for them are answered 416 (see docs/sandbox.md).
   * It also bounds the finished orders and closed trades kept for lookups (at most 10,000 each).
   */
  keepTransactions?: number;
  /** Default 5000. */
  heartbeatMs?: number;
  /**
   * The slow-consumer bound of streams: a stream whose reader stops reading is closed once more
   * than `maxQueuedBytes` (default 512 KiB) wait in the process for its socket, or once its socket
   * has refused writes for `maxBlockedMs` real ms (default 10,000) with no drain. Counted in
   * `stats().slowStreamsClosed`.
   */
  streams?: { maxQueuedBytes?: number; maxBlockedMs?: number };
  faults?: FaultOptions;
  /**
   * The simulator's fill models (the sandbox's own; `POST /sandbox/faults` can switch them while it
   * runs): `slippage` "none" (default), "fixed:<pips>", "spread:<fraction>"; `latency` "none"
   * (default), "fixed:<ms>", "file:<path of recorded ms>", as the configuration's fill.slippage and
   * fill.latency. With latency, a market order decided at sandbox time T fills at the price of
   * T + delay and its HTTP answer waits until the sandbox clock passes T + delay, at most
   * `latencyTimeoutMs` real ms (default 10,000; then 504, and the order still fills when the clock
   * gets there). See docs/sandbox.md.
   */
  fill?: { slippage?: string; latency?: string; latencyTimeoutMs?: number };
  /** Manual clock: false starts without prices (default true: each sample instrument's catalog price at the start time). */
  feed?: boolean;
  /** Market hours per instrument (default true): market orders halted and prices `tradeable: false` while its market is closed. */
  marketHours?: boolean;
  /**
   * The clock of the legacy generation's limit of one transaction listing with `count` per 60 s
   * (default: the sandbox clock, so a replay at speed 60 waits one real second).
   */
  legacyRateClock?: () => number;
  /**
   * v20 transactions one legacy transaction listing looks at, at most (default 5000): a rarely
   * matching filter answers a short page with a Link to go on instead of scanning the whole log.
   */
  legacyMaxScan?: number;
  log?: Logger;
  /** Serve the recorded labs items of this catalog folder (its labs/ subfolder), each from the time it became known, instead of generated labs data. */
  labs?: string;
}

/** A running sandbox: its URL and the control a test needs. */
export interface Sandbox {
  /** http://127.0.0.1:PORT (REST and streams on the same port). */
  readonly url: string;
  readonly accountIDs: readonly string[];
  /** Manual clock (epoch ms, or an RFC 3339 string); also fires expiries/financing in the sim. Never moves back. */
  setTime(ms: number | string): void;
  /** The sandbox clock, epoch ms. */
  time(): number;
  advance(ms: number): void;
  /** A tick: matches orders, feeds streams. Prices may be numbers or decimal strings. */
  pushPrice(p: {
    instrument: string;
    bid: number | string;
    ask: number | string;
    time?: number | string;
    liquidity?: number;
  }): void;
  /**
   * Sets an instrument's financing rates from now on (yearly, decimal strings as OANDA writes them):
   * what GET /instruments serves and what the accounts are charged at each 17:00 New York rollover.
   * OANDA changes them from time to time; this is how a test builds a history to record.
   */
  setFinancing(instrument: string, rates: { longRate: string; shortRate: string }): void;
  /** Replaces the fault set. */
  setFaults(f: FaultOptions): void;
  stats(): SandboxStats;
  /**
   * The migration report: each legacy (/v1) call the clients made, how often, its /v3 replacement
   * and the field mapping; Markdown, or JSON when `json`.
   */
  legacyReport(json?: boolean): string;
  /** Closes streams and the server. */
  close(): Promise<void>;
}

/** A bad sandbox option (e.g. a non-loopback host). */
export class SandboxError extends Error {
  readonly code = 'SANDBOX' as const;
  constructor(message: string) {
    super(message);
    this.name = 'SandboxError';
  }
}

const DEFAULT_START = '2024-01-02T00:00:00Z';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** The options checked and settled, each refused with a SandboxError naming it and how to fix it (the catalog folder made when it is the bundled sample). */
async function settleOptions(opts: SandboxOptions): Promise<{
  host: string;
  startMs: UnixMs;
  streamLimits: StreamLimits;
  dataRoot: string;
  fill: { slippage: string; latency: string };
  latencyTimeoutMs: number;
}> {
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) {
    throw new SandboxError(
      `sandbox host '${host}' is not a loopback address: the sandbox serves plain HTTP without authentication and must listen on 127.0.0.1, ::1 or localhost only`,
    );
  }
  const startMs =
    opts.start === undefined
      ? parseTime(DEFAULT_START)
      : typeof opts.start === 'number'
        ? opts.start
        : parseRequestTime(opts.start);
  if (!Number.isFinite(startMs))
    throw new SandboxError(
      `sandbox start '${String(opts.start)}' is not a time: give RFC 3339 (2024-01-02T00:00:00Z) or epoch ms`,
    );
  const streamLimits: StreamLimits = { ...DEFAULT_STREAM_LIMITS };
  for (const k of ['maxQueuedBytes', 'maxBlockedMs'] as const) {
    const v = opts.streams?.[k];
    if (v === undefined) continue;
    if (!(Number.isFinite(v) && v > 0))
      throw new SandboxError(
        `sandbox option streams.${k} must be a number > 0 (got ${String(v)}); leave it out for the default ${DEFAULT_STREAM_LIMITS[k]}`,
      );
    streamLimits[k] = v;
  }
  const dataRoot = opts.data !== undefined ? resolve(opts.data) : sampleCatalogDir();
  if (opts.data === undefined) await ensureSample(dataRoot);
  else if (!existsSync(dataRoot))
    throw new SandboxError(
      `sandbox data folder ${dataRoot} does not exist: give a catalog folder (fxflow data import ...) or leave --data out for the bundled sample`,
    );
  // The sandbox's own fill models (applied to the accounts; a bad name stops the start).
  const fill = { slippage: opts.fill?.slippage ?? 'none', latency: opts.fill?.latency ?? 'none' };
  const latencyTimeoutMs = opts.fill?.latencyTimeoutMs ?? 10_000;
  if (!(Number.isFinite(latencyTimeoutMs) && latencyTimeoutMs > 0))
    throw new SandboxError(
      `sandbox option fill.latencyTimeoutMs must be milliseconds > 0 (got ${latencyTimeoutMs})`,
    );
  return { host, startMs, streamLimits, dataRoot, fill, latencyTimeoutMs };
}

/** `f()`, a failure of which is a SandboxError with its message (a bad option named by the part that checks it). */
function asSandboxError<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new SandboxError((e as Error).message);
  }
}

/**
 * Starts the local v20 sandbox: OANDA's v20 REST and streaming interface on loopback, backed by one
 * `SimBroker` per account. Use it in tests of v20 clients (port 0), and from `fxflow sandbox`.
 *
 * It composes the parts: the settled options, the accounts and their brokers (accounts.ts), the
 * market clock and its price feed (market.ts, replay.ts), the streams (streams.ts), the /v3 route
 * families and the /sandbox control (v3/), the mounted legacy, labs and OAuth routes, and the HTTP
 * loop (http.ts); `close()` shuts them down in turn.
 */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const o = await settleOptions(opts);
  const log = opts.log?.child({ component: 'sandbox' });
  const instruments: InstrumentRegistry = loadInstruments();
  const catalog = new Catalog(o.dataRoot);
  const marketHours = opts.marketHours !== false;

  const accounts = asSandboxError(
    () =>
      new SandboxAccounts({
        specs: opts.accounts ?? [{}],
        instruments,
        start: o.startMs,
        marketHours,
        keepTransactions: opts.keepTransactions,
        fill: o.fill,
        latencyTimeoutMs: o.latencyTimeoutMs,
      }),
  );
  const faults = new Faults(opts.faults);
  if (opts.faults?.slippage !== undefined || opts.faults?.latency !== undefined) {
    const f = opts.faults;
    asSandboxError(() => accounts.setFaults(faults, f, false));
  }
  const counters: SandboxCounters = {
    requests: 0,
    streamConnections: 0,
    droppedStreams: 0,
    linesWritten: 0,
    slowStreamsClosed: 0,
  };
  const requestID = requestIDs();
  const streams = new SandboxStreams({ faults, counters, limits: o.streamLimits, requestID, log });
  const market: SandboxMarket = new SandboxMarket({
    start: o.startMs,
    accounts: accounts.byId,
    instruments,
    marketHours,
    onPrice: (name) => streams.price(name, (a, n) => market.priceJSON(a, n)),
  });
  const replay = await priceFeed(market, {
    clock: opts.clock ?? 'manual',
    speed: opts.speed ?? 1,
    feed: opts.feed !== false,
    catalog,
    instruments,
    start: o.startMs,
    log,
  });

  let baseUrl = '';
  const stats = (): SandboxStats => ({
    requests: counters.requests,
    streamConnections: counters.streamConnections,
    droppedStreams: counters.droppedStreams,
    slowStreamsClosed: counters.slowStreamsClosed,
    openStreams: streams.count,
    streamQueuedBytes: streams.queuedBytes(),
    linesWritten: counters.linesWritten,
    delayedOrders: accounts.delayed,
  });
  const submit = (a: SandboxAccount, intent: OrderIntent): Transaction[] =>
    accounts.submit(a, intent, market.now);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const slowest = { ms: 0, cpuMs: 0, request: '' };
  // The route families, each in its own file under v3/, on one view of the running sandbox.
  const ctx: V3Context = {
    accounts: accounts.byId,
    instruments,
    catalog,
    faults,
    financing: accounts.financing,
    priceStreams: streams.priceStreams,
    txStreams: streams.txStreams,
    loopDelay,
    slowest,
    now: () => market.now,
    baseUrl: () => baseUrl,
    account: (id) => accounts.account(id),
    setFinancing: (name, rates) => accounts.setFinancing(name, rates),
    setFaults: (f, quiet) => accounts.setFaults(faults, f, quiet),
    quoteTime: (n) => market.quoteTime(n),
    priceJSON: (a, n) => market.priceJSON(a, n),
    tick: (p) => market.tick(p),
    setTime: (ms) => market.setTime(ms),
    openStream: (res) => streams.open(res),
    streamWrite: (conn, body, unix) => streams.write(conn, body, unix),
    submit,
    submitAndWait: (a, intent) => accounts.submitAndWait(a, intent, market.now),
    intentID: () => accounts.intentID(),
    stats,
  };
  const routes = new RouteTable();
  for (const family of [
    accountRoutes,
    pricingRoutes,
    orderRoutes,
    tradePositionRoutes,
    transactionRoutes,
    controlRoutes,
  ])
    family(ctx, routes.on);
  // Mounted routes: the legacy generation (/v1) on the same accounts, through the same submit path
  // as /v3; Labs (/labs/v1/); OAuth (/v1/oauth2/).
  const oauth = oauthRoute({ baseUrl: () => baseUrl });
  const legacy = legacyRoute({
    accounts: accounts.byId,
    instruments,
    now: () => market.now,
    baseUrl: () => baseUrl,
    submit,
    ...(opts.legacyRateClock ? { rateClock: opts.legacyRateClock } : {}),
    ...(opts.legacyMaxScan !== undefined ? { maxScan: opts.legacyMaxScan } : {}),
  });
  const mounted: SandboxRoute[] = [
    legacy.route,
    labsRoute({
      now: () => market.now,
      instruments,
      ...(opts.labs !== undefined ? { recorded: resolve(opts.labs) } : {}),
    }),
    oauth,
  ];

  const handle = requestHandler({
    routes,
    mounted,
    faults,
    counters,
    authorized: tokenCheck(opts.requireToken, oauth.issued),
    baseUrl: () => baseUrl,
    requestID,
    slowest,
    log,
  });
  const http = await serveHttp(handle, {
    host: o.host,
    port: opts.port ?? 0,
    requestID,
    log,
    listenError: (m) => new SandboxError(m),
  });
  baseUrl = http.url;

  loopDelay.enable();
  streams.startHeartbeats(opts.heartbeatMs ?? 5000, () => market.now);
  replay?.start();
  log?.info(
    { url: baseUrl, accounts: [...accounts.byId.keys()], clock: replay ? 'replay' : 'manual' },
    'sandbox started',
  );

  let closed = false;
  return {
    url: baseUrl,
    accountIDs: [...accounts.byId.keys()],
    setTime: (ms) => market.setTime(typeof ms === 'string' ? controlTime(ms) : ms),
    time: () => market.now,
    advance: (ms) => market.setTime(market.now + ms),
    pushPrice: (p) => {
      const t = p.time === undefined ? undefined : typeof p.time === 'string' ? controlTime(p.time) : p.time;
      market.tick({
        instrument: p.instrument,
        bid: Number(p.bid),
        ask: Number(p.ask),
        ...(t !== undefined ? { time: t } : {}),
        ...(p.liquidity !== undefined ? { liquidity: p.liquidity } : {}),
      });
    },
    setFinancing: (name, rates) => accounts.setFinancing(name, rates),
    setFaults: (f) => accounts.setFaults(faults, f, false),
    stats,
    legacyReport: (json = false) => formatLegacyReport(legacy.calls.entries(), json),
    /** The shutdown: waiting answers get their 503, the clocks stop, the streams end, then the server. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      accounts.close();
      loopDelay.disable();
      replay?.stop();
      streams.close();
      await http.close();
    },
  };
}
