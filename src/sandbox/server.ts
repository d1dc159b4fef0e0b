import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { Catalog, ensureSample } from '../adapters/catalog/index.ts';
import { sampleCatalogDir } from '../adapters/catalog/location.ts';
import type { OrderIntent } from '../domain/intents.ts';
import { loadInstruments, type FinancingRates, type InstrumentRegistry } from '../domain/instrument.ts';
import { formatTime, formatUnixTime, parseRequestTime, parseTime, type UnixMs } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { retiredCall } from '../domain/v20/retired.ts';
import { SandboxAccount } from './account.ts';
import { DEFAULT_STREAM_LIMITS, FaultError, Faults, type FaultCounters, type FaultOptions, type StreamConn, type StreamLimits } from './faults.ts';
import { fillModels, type FillModelNames } from './fill-models.ts';
import { labsRoute } from './labs.ts';
import { legacyReplacement, legacyRoute } from './legacy/routes.ts';
import { formatLegacyReport } from './legacy/migration.ts';
import { oauthRoute } from './oauth.ts';
import { Replay } from './replay.ts';
import { clientErrorResponse, decodeSegment, InputError, MAX_BODY_BYTES, parseJsonBody, readBody, requestTarget } from './http-input.ts';
import type { SandboxReply, SandboxRoute } from './route.ts';
import { accountRoutes } from './v3/accounts.ts';
import { HttpError, type Handler, type SandboxStats, type V3Context } from './v3/context.ts';
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
  pushPrice(p: { instrument: string; bid: number | string; ask: number | string; time?: number | string; liquidity?: number }): void;
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

const TIME_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** JSON with every RFC 3339 time rewritten as UNIX seconds (Accept-Datetime-Format: UNIX). */
function toJSON(body: unknown, unix: boolean): string {
  if (!unix) return JSON.stringify(body);
  return JSON.stringify(body, (_k, v: unknown) => (typeof v === 'string' && TIME_TEXT.test(v) ? formatUnixTime(parseTime(v)) : v));
}

/**
 * Starts the local v20 sandbox: OANDA's v20 REST and streaming interface on loopback, backed by one
 * `SimBroker` per account. Use it in tests of v20 clients (port 0), and from `fxflow sandbox`.
 */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) {
    throw new SandboxError(`sandbox host '${host}' is not a loopback address: the sandbox serves plain HTTP without authentication and must listen on 127.0.0.1, ::1 or localhost only`);
  }
  const log = opts.log?.child({ component: 'sandbox' });
  const instruments: InstrumentRegistry = loadInstruments();
  const startMs = opts.start === undefined ? parseTime(DEFAULT_START) : typeof opts.start === 'number' ? opts.start : parseRequestTime(opts.start);
  if (!Number.isFinite(startMs)) throw new SandboxError(`sandbox start '${String(opts.start)}' is not a time: give RFC 3339 (2024-01-02T00:00:00Z) or epoch ms`);
  const heartbeatMs = opts.heartbeatMs ?? 5000;
  const streamLimits: StreamLimits = { ...DEFAULT_STREAM_LIMITS };
  for (const k of ['maxQueuedBytes', 'maxBlockedMs'] as const) {
    const v = opts.streams?.[k];
    if (v === undefined) continue;
    if (!(Number.isFinite(v) && v > 0)) throw new SandboxError(`sandbox option streams.${k} must be a number > 0 (got ${String(v)}); leave it out for the default ${DEFAULT_STREAM_LIMITS[k]}`);
    streamLimits[k] = v;
  }
  const dataRoot = opts.data !== undefined ? resolve(opts.data) : sampleCatalogDir();
  if (opts.data === undefined) await ensureSample(dataRoot);
  else if (!existsSync(dataRoot)) throw new SandboxError(`sandbox data folder ${dataRoot} does not exist: give a catalog folder (fxflow data import ...) or leave --data out for the bundled sample`);
  const catalog = new Catalog(dataRoot);
  // The sandbox's own fill models (applied to the accounts below; a bad name stops the start).
  const fill = { slippage: opts.fill?.slippage ?? 'none', latency: opts.fill?.latency ?? 'none' };
  const latencyTimeoutMs = opts.fill?.latencyTimeoutMs ?? 10_000;
  if (!(Number.isFinite(latencyTimeoutMs) && latencyTimeoutMs > 0)) throw new SandboxError(`sandbox option fill.latencyTimeoutMs must be milliseconds > 0 (got ${latencyTimeoutMs})`);

  let now: UnixMs = startMs;
  // Financing rates set through the control (setFinancing), over data/instruments.json's.
  const financing = new Map<string, { longRate: string; shortRate: string }>();
  const financingRates: FinancingRates = (name) => {
    const f = financing.get(name);
    return f === undefined ? undefined : { longRate: Number(f.longRate), shortRate: Number(f.shortRate), daysCharged: instruments.get(name).financing.daysCharged };
  };
  const setFinancing = (name: string, rates: { longRate: string; shortRate: string }): void => {
    if (!instruments.has(name)) throw new HttpError(400, `Invalid value specified for 'instrument': unknown instrument '${name}'`, 'INVALID_INSTRUMENT');
    for (const k of ['longRate', 'shortRate'] as const) {
      const v = rates[k];
      if (typeof v !== 'string' || !/^-?\d+(\.\d+)?$/.test(v) || Math.abs(Number(v)) > 1) throw new HttpError(400, `Invalid value specified for '${k}': a yearly rate as a decimal string in [-1, 1], e.g. "-0.0412"`);
    }
    financing.set(name, { longRate: rates.longRate, shortRate: rates.shortRate });
  };
  const accounts = new Map<string, SandboxAccount>();
  for (const [i, a] of (opts.accounts ?? [{}]).entries()) {
    const id = a.id ?? `101-001-0000001-${String(i + 1).padStart(3, '0')}`;
    accounts.set(id, new SandboxAccount({ id, currency: a.currency ?? 'USD', balance: a.balance ?? '100000', marginRate: a.marginRate ?? '0.02', hedging: a.hedging ?? false, instruments, start: startMs, marketHours: opts.marketHours !== false, financingRates, ...(opts.keepTransactions !== undefined ? { keepTransactions: opts.keepTransactions } : {}) }));
  }
  const quotes = new Map<string, { bid: number; ask: number; time: UnixMs; liquidity: number }>();
  /** Instruments whose last price gave its liquidity (the others have unlimited liquidity in the simulator). */
  const limited = new Set<string>();
  /** The fill models named by `names` (absent: the sandbox's own), in every account. Throws a RangeError naming the field. */
  const applyFill = (names: FillModelNames, field: (n: 'slippage' | 'latency') => string, quiet: boolean): void => {
    const want = { slippage: names.slippage ?? fill.slippage, latency: names.latency ?? fill.latency };
    // Checked before anything changes; then each account gets its own models (a recorded latency file cycles per account).
    fillModels(want, field, quiet);
    for (const a of accounts.values()) {
      const m = fillModels(want, field, quiet);
      a.slippage.set(m.slippage);
      a.latency.set(m.latency);
    }
  };
  try {
    applyFill({}, (n) => `sandbox option fill.${n}`, false);
  } catch (e) {
    throw new SandboxError((e as Error).message);
  }
  /**
   * The fault set, fill models included: every field is checked before any takes effect, so a bad
   * one (a FaultError naming it) leaves the running faults as they were.
   */
  const setFaults = (f: FaultOptions, quiet: boolean): void => {
    for (const k of ['slippage', 'latency'] as const) {
      if (f[k] !== undefined && typeof f[k] !== 'string') throw new FaultError(`faults.${k} must be a string like ${k === 'slippage' ? '"fixed:1"' : '"fixed:250"'} (got ${JSON.stringify(f[k])}); leave it out for the sandbox's own (${fill[k]})`);
    }
    try {
      fillModels({ slippage: f.slippage ?? fill.slippage, latency: f.latency ?? fill.latency }, (n) => `faults.${n}`, quiet);
    } catch (e) {
      throw new FaultError((e as Error).message);
    }
    faults.set(f);
    applyFill({ ...(f.slippage !== undefined ? { slippage: f.slippage } : {}), ...(f.latency !== undefined ? { latency: f.latency } : {}) }, (n) => `faults.${n}`, quiet);
  };
  const faults = new Faults(opts.faults);
  const counters: FaultCounters & { requests: number; streamConnections: number } = { requests: 0, streamConnections: 0, droppedStreams: 0, linesWritten: 0, slowStreamsClosed: 0 };
  if (opts.faults?.slippage !== undefined || opts.faults?.latency !== undefined) {
    try {
      setFaults(opts.faults, false);
    } catch (e) {
      throw new SandboxError((e as Error).message);
    }
  }
  let requestID = 0;
  const priceStreams = new Set<{ conn: StreamConn; account: SandboxAccount; instruments: Set<string>; unix: boolean }>();
  const txStreams = new Set<{ conn: StreamConn; account: SandboxAccount; unix: boolean; off: () => void }>();
  const sockets = new Set<import('node:net').Socket>();

  const streamWrite = (conn: StreamConn, body: unknown, unix: boolean): boolean => faults.writeLine(conn, `${toJSON(body, unix)}\n`, counters);

  const priceJSON = (account: SandboxAccount, instrument: string): Record<string, unknown> | undefined => {
    const q = quotes.get(instrument);
    if (!q) return undefined;
    const inst = instruments.get(instrument);
    // As the simulator halts market orders: by the instrument's trading hours at the sandbox clock.
    const open = opts.marketHours === false || inst.hours.isOpen(now);
    const out: Record<string, unknown> = {
      type: 'PRICE',
      instrument,
      time: formatTime(q.time),
      tradeable: open,
      status: open ? 'tradeable' : 'non-tradeable',
      bids: [{ price: inst.price(q.bid), liquidity: q.liquidity }],
      asks: [{ price: inst.price(q.ask), liquidity: q.liquidity }],
      closeoutBid: inst.price(q.bid),
      closeoutAsk: inst.price(q.ask),
    };
    const f = account.quoteHomeConversionFactors(instrument);
    if (f) out.quoteHomeConversionFactors = f;
    return out;
  };

  const tick = (p: { instrument: string; bid: number; ask: number; time?: number; liquidity?: number }): void => {
    if (!instruments.has(p.instrument)) throw new HttpError(400, `Invalid value specified for 'instrument': '${p.instrument}' is not a known instrument`, 'INVALID_INSTRUMENT');
    if (!(Number.isFinite(p.bid) && Number.isFinite(p.ask) && p.bid > 0 && p.ask >= p.bid)) {
      throw new HttpError(400, `Invalid price for ${p.instrument}: 'bid' and 'ask' must be positive numbers with ask >= bid (got bid ${p.bid}, ask ${p.ask})`);
    }
    const at = Math.max(p.time ?? now, now);
    // Orders the latency fault held back that arrive before this price meet the prices of their arrival.
    release(at, p.instrument);
    now = at;
    quotes.set(p.instrument, { bid: p.bid, ask: p.ask, time: at, liquidity: p.liquidity ?? 10_000_000 });
    if (p.liquidity !== undefined) limited.add(p.instrument);
    else limited.delete(p.instrument);
    for (const a of accounts.values()) {
      a.broker.onEvent(p.liquidity !== undefined
        ? { kind: 'tick', instrument: p.instrument, at, bid: p.bid, ask: p.ask, bidLiquidity: p.liquidity, askLiquidity: p.liquidity }
        : { kind: 'tick', instrument: p.instrument, at, bid: p.bid, ask: p.ask });
      a.priced(p.instrument, at);
    }
    if (faults.stalled || priceStreams.size === 0) return;
    // One line per account and time format for all the streams that want it (300 streams of one
    // account cost one JSON text, not 300).
    lineCache.clear();
    for (const s of priceStreams) {
      if (!s.instruments.has(p.instrument)) continue;
      const key = s.unix ? `u${s.account.id}` : s.account.id;
      let line = lineCache.get(key);
      if (line === undefined) {
        const body = priceJSON(s.account, p.instrument);
        if (body === undefined) continue;
        line = `${toJSON(body, s.unix)}\n`;
        lineCache.set(key, line);
      }
      if (!faults.writeLine(s.conn, line, counters)) priceStreams.delete(s);
    }
  };
  const lineCache = new Map<string, string>();

  /** The quote a held-back order meets at its arrival: the sandbox's current one (with its liquidity when the price gave one). */
  const quoteOf = (instrument: string): { bid: number; ask: number; liquidity?: number } | undefined => {
    const q = quotes.get(instrument);
    if (q === undefined) return undefined;
    return limited.has(instrument) ? { bid: q.bid, ask: q.ask, liquidity: q.liquidity } : { bid: q.bid, ask: q.ask };
  };
  /** The clock moves to `to` (with a price of `pricing` there, when given): release the orders that arrive by then (latency fault). */
  const release = (to: number, pricing?: string): void => {
    for (const a of accounts.values()) a.release(to, quoteOf, pricing);
  };

  const setTime = (ms: number): void => {
    if (!Number.isFinite(ms)) throw new HttpError(400, "Invalid value specified for 'time': give RFC 3339 or epoch ms");
    release(ms);
    if (ms <= now) return;
    now = ms;
    for (const a of accounts.values()) a.broker.onEvent({ kind: 'timer', at: ms, name: 'sandbox-clock' });
  };

  const replay = opts.clock === 'replay' ? new Replay({ catalog, start: startMs, speed: opts.speed ?? 1, instruments: ['EUR_USD', 'GBP_USD', 'USD_JPY'], tick, advance: (t) => setTime(t), ...(log ? { log } : {}) }) : undefined;
  if (!replay && opts.feed !== false) {
    // The manual clock starts with the catalog's prices at the start time, so market orders fill at once.
    for (const name of ['EUR_USD', 'GBP_USD', 'USD_JPY']) {
      if (!catalog.has(name, 'M1')) continue;
      try {
        for await (const batch of catalog.candles({ instrument: name, granularity: 'M1', from: startMs - 7 * 86_400_000, to: startMs + 60_000 })) {
          const last = batch[batch.length - 1];
          if (last) quotes.set(name, { bid: last.bo, ask: last.ao, time: startMs, liquidity: 10_000_000 });
        }
      } catch (e) {
        log?.warn({ err: (e as Error).message, instrument: name }, 'no initial price from the catalog');
      }
      const q = quotes.get(name);
      if (q) for (const a of accounts.values()) a.broker.onEvent({ kind: 'tick', instrument: name, at: startMs, bid: q.bid, ask: q.ask });
    }
  }

  // ------------------------------------------------------------------------------------------
  // Helpers for handlers

  const account = (id: string | undefined): SandboxAccount => {
    const a = id !== undefined ? accounts.get(id) : undefined;
    if (!a) throw new HttpError(404, `The Account specified does not exist (${id ?? ''}); the sandbox serves ${[...accounts.keys()].join(', ')}`, 'INVALID_ACCOUNT_ID');
    return a;
  };
  const submit = (a: SandboxAccount, intent: OrderIntent): Transaction[] => a.submit(intent, now).txs;
  /**
   * Submits an intent whose answer carries its fill (an order, a replace, a trade or position
   * close), as v20 answers: with the latency fault on, the market orders reach the simulator at
   * T + delay, so the answer waits for the sandbox clock to pass that time (at most
   * `latencyTimeoutMs` real ms: then 504; the order still fills when the clock gets there and its
   * transactions are on the stream).
   */
  const submitAndWait = async (a: SandboxAccount, intent: OrderIntent): Promise<Transaction[]> => {
    const decided = now;
    const r = a.submit(intent, now);
    if (r.arriving === undefined) return r.txs;
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([r.arriving, closing.promise, new Promise<'timeout'>((done) => {
      timer = setTimeout(() => done('timeout'), latencyTimeoutMs);
    })]);
    clearTimeout(timer);
    if (late === 'timeout') {
      throw new HttpError(504, `The order decided at ${formatTime(decided)} reaches the market at ${formatTime(r.arrivesAt ?? decided)} (sandbox latency ${a.latency.name}), and the sandbox clock did not get there within ${latencyTimeoutMs} ms: move it (POST /sandbox/time, /sandbox/advance, /sandbox/prices) or raise fill.latencyTimeoutMs. The order was not lost: it fills once the clock passes that time, and its transactions go out on the transaction stream.`);
    }
    if (late === 'closed') throw new HttpError(503, 'The sandbox is closing: the order was still on its way to the market (latency fault) and was not filled');
    return r.txs.concat(late);
  };
  /** Resolved when the sandbox closes: answers still waiting for a delayed fill give up. */
  const closing: { promise: Promise<'closed'>; done: () => void } = (() => {
    let done = (): void => {};
    const promise = new Promise<'closed'>((r) => {
      done = () => r('closed');
    });
    return { promise, done };
  })();
  let intentSeq = 0;
  const intentID = (): string => `sandbox-${++intentSeq}`;
  // ------------------------------------------------------------------------------------------
  // Routes

  const routes: [string, RegExp, Handler][] = [];
  const on = (method: string, path: string, h: Handler): void => {
    const re = new RegExp(`^${path.replace(/\{[a-zA-Z]+\}/g, '([^/]+)')}$`);
    routes.push([method, re, h]);
  };
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const slowest = { ms: 0, cpuMs: 0, request: '' };
  // The route families, each in its own file under v3/, on one view of the running sandbox.
  const ctx: V3Context = {
    accounts, instruments, catalog, faults, financing, priceStreams, txStreams, loopDelay, slowest,
    now: () => now,
    baseUrl: () => baseUrl,
    account,
    setFinancing,
    setFaults,
    quoteTime: (n) => quotes.get(n)?.time,
    priceJSON,
    tick,
    setTime,
    openStream: (res) => openStream(res),
    streamWrite,
    submit,
    submitAndWait,
    intentID,
    stats: () => stats(),
  };
  accountRoutes(ctx, on);
  pricingRoutes(ctx, on);
  orderRoutes(ctx, on);
  tradePositionRoutes(ctx, on);
  transactionRoutes(ctx, on);
  controlRoutes(ctx, on);

  // Mounted routes: Labs (/labs/v1/) and OAuth (/v1/oauth2/).
  const oauth = oauthRoute({ baseUrl: () => baseUrl });
  // The legacy generation (/v1) on the same accounts, through the same submit path as /v3.
  const legacy = legacyRoute({ accounts, instruments, now: () => now, baseUrl: () => baseUrl, submit, ...(opts.legacyRateClock ? { rateClock: opts.legacyRateClock } : {}), ...(opts.legacyMaxScan !== undefined ? { maxScan: opts.legacyMaxScan } : {}) });
  const mounted: SandboxRoute[] = [legacy.route, labsRoute({ now: () => now, instruments, ...(opts.labs !== undefined ? { recorded: resolve(opts.labs) } : {}) }), oauth];

  const queuedBytes = (): number => {
    let n = 0;
    for (const x of priceStreams) n += x.conn.res.writableLength + x.conn.held.length;
    for (const x of txStreams) n += x.conn.res.writableLength + x.conn.held.length;
    return n;
  };
  const stats = (): SandboxStats => ({
    requests: counters.requests,
    streamConnections: counters.streamConnections,
    droppedStreams: counters.droppedStreams,
    slowStreamsClosed: counters.slowStreamsClosed,
    openStreams: priceStreams.size + txStreams.size,
    streamQueuedBytes: queuedBytes(),
    linesWritten: counters.linesWritten,
    delayedOrders: [...accounts.values()].reduce((n, a) => n + a.delayed, 0),
  });

  // ------------------------------------------------------------------------------------------
  // HTTP

  const openStream = (res: ServerResponse): StreamConn => {
    counters.streamConnections++;
    // A client that goes away mid-write must not take the server down.
    res.on('error', (e) => log?.debug({ err: e.message }, 'stream connection error'));
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'RequestID': nextRequestID(), 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    return { res, lines: 0, chain: Promise.resolve(), busy: 0, held: '', drainHooked: false, blockedSince: undefined, limits: streamLimits };
  };
  const nextRequestID = (): string => String(++requestID + 1_000_000_000);

  const send = (res: ServerResponse, reply: SandboxReply, unix: boolean, extra?: Record<string, string>): void => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'RequestID': nextRequestID(), ...reply.headers, ...extra };
    const data = reply.raw ?? (reply.body === undefined ? '' : toJSON(reply.body, unix));
    headers['Content-Length'] = String(Buffer.byteLength(data));
    res.writeHead(reply.status, headers);
    res.end(data);
  };

  const v20Error = (e: { status: number; message: string; errorCode?: string | undefined }): SandboxReply => ({
    status: e.status,
    body: e.errorCode ? { errorMessage: e.message, errorCode: e.errorCode } : { errorMessage: e.message },
  });

  /** Whether a request carries the required token (or one the OAuth endpoints issued). */
  const authorized = (req: IncomingMessage): boolean => {
    if (opts.requireToken === undefined) return true;
    // The scheme is case-insensitive (RFC 9110 11.1): 'bearer' is 'Bearer'.
    const auth = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    const token = auth?.[1];
    return token !== undefined && (token === opts.requireToken || oauth.issued.has(token));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    counters.requests++;
    const method = req.method ?? 'GET';
    const unix = (req.headers['accept-datetime-format'] ?? '').toString().toUpperCase() === 'UNIX';
    let path = '';
    try {
      const url = requestTarget(req.url ?? '/', baseUrl);
      path = url.pathname;
      // With --require-token every route is guarded: the API, labs, the OAuth endpoints (which issue
      // tokens) and the control routes (which move time and prices).
      if (!authorized(req)) {
        await readBody(req).catch(() => '');
        const replacement = legacyReplacement(method, path);
        send(res, { status: 401, body: { errorMessage: 'Insufficient authorization to perform request.' } }, unix, replacement !== undefined ? { 'X-V3-Replacement': replacement } : undefined);
        return;
      }
      if (path.startsWith('/v3/') || path.startsWith('/labs/')) {
        const fault = faults.rest();
        if (fault) {
          await readBody(req).catch(() => '');
          send(res, fault, unix);
          return;
        }
      }
      const text = await readBody(req);
      // /v1 is served by the legacy route; only the labs endpoints OANDA removed are retired here.
      const retired = path.startsWith('/v1') ? undefined : retiredCall(method, path);
      if (retired) {
        // v20's errorMessage, and the legacy API's code/message for a /v1 client that reads those.
        send(res, { status: 404, body: { errorMessage: retired.message, errorCode: 'RETIRED_ENDPOINT', code: 404, message: retired.message, moreInfo: 'https://developer.oanda.com/rest-live-v20/introduction/' } }, unix);
        return;
      }
      let body: unknown;
      // OAuth's token endpoint (RFC 6749 4.1.3) and the legacy /v1 routes take form bodies: they get
      // them as text. Only there: the v20 routes read every body as JSON whatever its Content-Type
      // (curl -d sends JSON labelled as a form), and a body that is not JSON is a 400 saying what to send.
      const form = path.startsWith('/v1/') && (req.headers['content-type'] ?? '').toString().startsWith('application/x-www-form-urlencoded');
      if (form) body = text;
      else if (text.trim() !== '') {
        try {
          body = parseJsonBody(text);
        } catch (e) {
          const type = req.headers['content-type'];
          if (e instanceof InputError && type !== undefined && !/json/i.test(type)) {
            throw new InputError(400, `${e.message}. The body is read as JSON whatever its Content-Type (it was '${type}'): send a JSON object, with Content-Type: application/json`);
          }
          throw e;
        }
      }
      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      for (const route of mounted) {
        const reply = await route({ method, url, headers, body });
        if (reply) {
          send(res, reply, unix);
          return;
        }
      }
      const allowed: string[] = [];
      for (const [m, re, h] of routes) {
        const match = re.exec(path);
        if (!match) continue;
        if (m !== method) {
          allowed.push(m);
          continue;
        }
        // The synchronous part of a handler (the call, up to its first await) and the send are timed:
        // the slowest is in /sandbox/stats, what a load run checks against "never blocks".
        // Wall time counts time the process was not scheduled on a busy machine; CPU time does not.
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        const pending = h({ method, url, headers, body, unix, res }, match.slice(1).map(decodeSegment));
        let took = performance.now() - t0;
        const cpu = process.cpuUsage(c0);
        const reply = await pending;
        const t1 = performance.now();
        const c1 = process.cpuUsage();
        if (reply !== 'stream') send(res, reply, unix);
        took += performance.now() - t1;
        const c2 = process.cpuUsage(c1);
        const cpuMs = (cpu.user + cpu.system + c2.user + c2.system) / 1000;
        if (!path.startsWith('/sandbox/')) {
          if (took > slowest.ms) {
            slowest.ms = took;
            slowest.request = `${method} ${path}`;
          }
          if (cpuMs > slowest.cpuMs) slowest.cpuMs = cpuMs;
        }
        return;
      }
      if (allowed.length > 0) {
        allowed.sort();
        send(res, { status: 405, body: { errorMessage: `Method ${method} is not allowed on ${path} (use ${allowed.join(' or ')})` } }, unix, { Allow: allowed.join(', ') });
        return;
      }
      throw new HttpError(404, `No such endpoint: ${method} ${path} (the sandbox serves OANDA's v20 /v3 endpoints and /sandbox control)`);
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError || e instanceof InputError) {
        send(res, v20Error(e), unix, e.status === 413 || e.status === 414 ? { Connection: 'close' } : undefined);
        return;
      }
      const err = e as Error & { code?: string };
      if (err.code === 'INSTRUMENT') {
        send(res, { status: 400, body: { errorMessage: err.message, errorCode: 'INVALID_INSTRUMENT' } }, unix);
        return;
      }
      log?.error({ err: err.message, stack: err.stack, method, path }, 'sandbox request failed');
      send(res, { status: 500, body: { errorMessage: `Internal sandbox error: ${err.message}` } }, unix);
    }
  };

  const server = createServer((req, res) => {
    const t0 = Date.now();
    res.on('finish', () => log?.debug({ method: req.method, path: (req.url ?? '').split('?')[0], status: res.statusCode, ms: Date.now() - t0 }, 'request'));
    // handle answers every error itself; this catch is the last guard that keeps the server up.
    handle(req, res).catch((e: unknown) => {
      log?.error({ err: (e as Error).message }, 'sandbox request handler failed');
      res.destroy();
    });
  });
  // A request Node's HTTP parser refuses never reaches handle: answer it here, v20-shaped.
  server.on('clientError', (err: Error & { code?: string }, socket: import('node:stream').Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err, nextRequestID()));
  });
  // Expect: 100-continue with a body over the limit: 413 at once, before the client sends it.
  server.on('checkContinue', (req, res) => {
    if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
      send(res, { status: 413, body: { errorMessage: `Request body too large (at most ${MAX_BODY_BYTES} bytes, 1 MiB)` } }, false, { Connection: 'close' });
      return;
    }
    res.writeContinue();
    server.emit('request', req, res);
  });
  // CONNECT (a proxy tunnel) is no v20 method: Node would close the connection without an answer.
  server.on('connect', (_req, socket: import('node:stream').Duplex) => {
    socket.end(clientErrorResponse(Object.assign(new Error('CONNECT'), { code: 'HPE_INVALID_METHOD' }), nextRequestID()));
  });
  // An Expect header other than 100-continue: Node would answer 417 with no body.
  server.on('checkExpectation', (req, res) => {
    send(res, { status: 417, body: { errorMessage: `Expectation failed: the sandbox only honours 'Expect: 100-continue' (got '${String(req.headers.expect)}')` } }, false, { Connection: 'close' });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((done, fail) => {
    server.once('error', (e) => fail(new SandboxError(`sandbox cannot listen on ${host}:${opts.port ?? 0}: ${e.message}`)));
    server.listen(opts.port ?? 0, host, () => done());
  });
  const addr = server.address() as AddressInfo;
  const baseUrl = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;

  loopDelay.enable();
  const heartbeat = setInterval(() => {
    if (faults.stalled) return;
    const time = formatTime(now);
    for (const s of priceStreams) if (!streamWrite(s.conn, { type: 'HEARTBEAT', time }, s.unix)) priceStreams.delete(s);
    for (const s of txStreams) {
      if (!streamWrite(s.conn, { type: 'HEARTBEAT', lastTransactionID: s.account.broker.ledger.lastTransactionID, time }, s.unix)) {
        s.off();
        txStreams.delete(s);
      }
    }
  }, heartbeatMs);
  heartbeat.unref();
  replay?.start();
  log?.info({ url: baseUrl, accounts: [...accounts.keys()], clock: replay ? 'replay' : 'manual' }, 'sandbox started');

  let closed = false;
  return {
    url: baseUrl,
    accountIDs: [...accounts.keys()],
    setTime: (ms) => setTime(typeof ms === 'string' ? controlTime(ms) : ms),
    time: () => now,
    advance: (ms) => setTime(now + ms),
    pushPrice: (p) => {
      const t = p.time === undefined ? undefined : typeof p.time === 'string' ? controlTime(p.time) : p.time;
      tick({ instrument: p.instrument, bid: Number(p.bid), ask: Number(p.ask), ...(t !== undefined ? { time: t } : {}), ...(p.liquidity !== undefined ? { liquidity: p.liquidity } : {}) });
    },
    setFinancing: (name, rates) => setFinancing(name, rates),
    setFaults: (f) => setFaults(f, false),
    stats,
    legacyReport: (json = false) => formatLegacyReport(legacy.calls.entries(), json),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      closing.done();
      clearInterval(heartbeat);
      loopDelay.disable();
      replay?.stop();
      for (const s of priceStreams) s.conn.res.end();
      for (const s of txStreams) {
        s.off();
        s.conn.res.end();
      }
      priceStreams.clear();
      txStreams.clear();
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeIdleConnections();
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 200).unref();
      });
    },
  };
}
