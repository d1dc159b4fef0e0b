import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { Catalog, ensureSample } from '../adapters/catalog/index.ts';
import type { OrderIntent } from '../domain/intents.ts';
import { loadInstruments, type FinancingRates, type InstrumentRegistry } from '../domain/instrument.ts';
import { formatTime, formatUnixTime, parseRequestTime, parseTime, type UnixMs } from '../domain/time.ts';
import { parseOrderRequest } from '../domain/v20/parse.ts';
import { decimalsAsStrings } from '../domain/v20/request.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { retiredCall } from '../domain/v20/retired.ts';
import { SandboxAccount, tradeSummary } from './account.ts';
import { candlesReply } from './candles.ts';
import { FaultError, Faults, type FaultCounters, type FaultOptions, type StreamConn } from './faults.ts';
import { fillModels, type FillModelNames } from './fill-models.ts';
import { labsRoute } from './labs.ts';
import { legacyReplacement, legacyRoute } from './legacy/routes.ts';
import { formatLegacyReport } from './legacy/migration.ts';
import { oauthRoute } from './oauth.ts';
import { rejectMessage } from './reject-messages.ts';
import { Replay } from './replay.ts';
import { clientErrorResponse, decodeSegment, InputError, MAX_BODY_BYTES, parseJsonBody, readBody, requestTarget } from './http-input.ts';
import type { SandboxReply, SandboxRoute } from './route.ts';

export type { FaultOptions } from './faults.ts';

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
  /** Catalog folder for replay and candles (default data/catalog, the generated sample). */
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
  stats(): { requests: number; streamConnections: number; droppedStreams: number; linesWritten: number; delayedOrders: number };
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

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const DEFAULT_START = '2024-01-02T00:00:00Z';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

interface Req {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string | undefined>;
  readonly body: unknown;
  readonly unix: boolean;
  readonly res: ServerResponse;
}

type Reply = SandboxReply | 'stream';
type Handler = (r: Req, m: string[]) => Reply | Promise<Reply>;

class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly errorCode?: string) {
    super(message);
  }
}

const DAY_MS = 86_400_000;
/** The control endpoints move the clock no further than this (the simulator charges financing per day). */
const MAX_CONTROL_TIME = Date.UTC(2200, 0, 1);

/** /changes serves at most this many transactions; an older sinceTransactionID is a 416. */
const MAX_CHANGES = 500;

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
  const dataRoot = opts.data !== undefined ? resolve(opts.data) : resolve(ROOT, 'data/catalog');
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
  const counters: FaultCounters & { requests: number; streamConnections: number } = { requests: 0, streamConnections: 0, droppedStreams: 0, linesWritten: 0 };
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
    if (faults.stalled) return;
    for (const s of priceStreams) {
      if (!s.instruments.has(p.instrument)) continue;
      const body = priceJSON(s.account, p.instrument);
      if (body && !streamWrite(s.conn, body, s.unix)) priceStreams.delete(s);
    }
  };

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
  const ok = (body: unknown, status = 200, headers?: Record<string, string>): SandboxReply => (headers ? { status, body, headers } : { status, body });
  const objectBody = (b: unknown, what: string): Record<string, unknown> => {
    if (b === undefined || b === null) return {};
    if (typeof b !== 'object' || Array.isArray(b)) throw new HttpError(400, `Invalid request body: ${what} must be a JSON object`);
    // Decimals as OANDA reads them: a JSON number where v20 defines a decimal string is taken.
    return decimalsAsStrings(b as Record<string, unknown>);
  };
  const units = (v: unknown, field: string, allowNone: boolean): string | undefined => {
    if (v === undefined) return undefined;
    if (typeof v === 'string' && (v === 'ALL' || (allowNone && v === 'NONE') || /^\d+(\.\d+)?$/.test(v))) return v;
    throw new HttpError(400, `Invalid value specified for '${field}': ${JSON.stringify(v)} (give 'ALL'${allowNone ? ", 'NONE'" : ''} or a positive decimal string)`, 'INVALID_UNITS');
  };
  const ids = (txs: readonly Transaction[]): string[] => txs.map((t) => t.id);
  const isReject = (t: Transaction): boolean => t.type.endsWith('_REJECT');
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

  /** v20's response to an order create/replace/close: transactions by role. */
  const orderResponse = (a: SandboxAccount, txs: Transaction[], prefix = ''): { body: Record<string, unknown>; rejected: Transaction | undefined } => {
    const body: Record<string, unknown> = {};
    let created: string | undefined;
    let rejected: Transaction | undefined;
    for (const t of txs) {
      const x = t as Transaction & { orderID?: string; reason?: string; replacesOrderID?: string };
      if (isReject(t)) {
        rejected ??= t;
        body[`${prefix}orderRejectTransaction`] = t;
      } else if (t.type.endsWith('_ORDER') && created === undefined && !x.type.startsWith('TAKE_PROFIT') && !x.type.startsWith('STOP_LOSS') && !x.type.startsWith('TRAILING') && !x.type.startsWith('GUARANTEED')) {
        created = t.id;
        body[`${prefix}orderCreateTransaction`] = t;
      } else if (t.type.endsWith('_ORDER') && created === undefined) {
        created = t.id;
        body[`${prefix}orderCreateTransaction`] = t;
      } else if (t.type === 'ORDER_FILL' && x.orderID === created) {
        body[`${prefix}orderFillTransaction`] = t;
      } else if (t.type === 'ORDER_CANCEL' && (x.orderID === created || (created === undefined && x.reason === 'CLIENT_REQUEST_REPLACED'))) {
        body[`${prefix}orderCancelTransaction`] = t;
      }
    }
    if (!prefix) {
      body.relatedTransactionIDs = ids(txs);
      body.lastTransactionID = a.broker.ledger.lastTransactionID;
    }
    return { body, rejected };
  };

  const rejectReply = (status: number, body: Record<string, unknown>, rejected: Transaction, field = 'order'): SandboxReply => {
    const reason = (rejected as { rejectReason?: string }).rejectReason ?? 'UNKNOWN';
    body.errorCode = reason;
    body.errorMessage = rejectMessage(reason, field);
    return ok(body, status);
  };

  const orderSpec = (a: SandboxAccount, spec: string): Record<string, unknown> => {
    const o = a.findOrder(spec);
    if (!o) throw new HttpError(404, 'The Order specified does not exist', 'NO_SUCH_ORDER');
    return o;
  };

  /** An order specifier as an order ID when the sandbox knows it (so rejects name the ID, as v20's do). */
  const resolveOrder = (a: SandboxAccount, spec: string): string => (a.findOrder(spec)?.id as string | undefined) ?? spec;

  const parseOrder = (body: unknown): import('../domain/v20/index.ts').OrderRequest => {
    const b = objectBody(body, 'the body');
    if (b.order === undefined) throw new HttpError(400, "Invalid request body: field 'order' is missing (send {\"order\": {\"type\": \"MARKET\", ...}})");
    const r = parseOrderRequest(b.order, 'order');
    // OANDA names the field and nothing else ("Invalid value specified for 'order.instrument'"); the
    // sandbox adds what it expected. No transaction, no ID used.
    if (!r.ok) throw new HttpError(400, `Invalid value specified for '${r.error.path}': expected ${r.error.expected}`);
    const instrument = (r.value as { instrument?: unknown }).instrument;
    if (typeof instrument === 'string' && !instruments.has(instrument)) throw new HttpError(400, "Invalid value specified for 'order.instrument'");
    return r.value;
  };

  let intentSeq = 0;
  const intentID = (): string => `sandbox-${++intentSeq}`;

  const pageOf = <T extends { id: string }>(list: T[], url: URL, maxCount: number, defCount: number): { items: T[]; link?: string } => {
    const countText = url.searchParams.get('count');
    const count = countText === null ? defCount : Number(countText);
    if (!Number.isInteger(count) || count < 1 || count > maxCount) throw new HttpError(400, `Invalid value specified for 'count': ${countText} (1 to ${maxCount})`, 'INVALID_COUNT');
    const before = url.searchParams.get('beforeID');
    let items = before !== null ? list.filter((x) => Number(x.id) < Number(before)) : list;
    const more = items.length > count;
    items = items.slice(0, count);
    if (!more) return { items };
    const next = new URL(url.href);
    next.searchParams.set('beforeID', items[items.length - 1]!.id);
    return { items, link: `<${next.href}>; rel="next"` };
  };

  const filterByIds = <T extends { id: string }>(list: T[], url: URL): T[] => {
    const idsText = url.searchParams.get('ids');
    if (idsText === null) return list;
    const want = new Set(idsText.split(','));
    return list.filter((x) => want.has(x.id));
  };

  const txSlice = (a: SandboxAccount, from: number, to: number, url: URL): Transaction[] => {
    const typeText = url.searchParams.get('type');
    const types = typeText !== null ? new Set(typeText.split(',')) : undefined;
    const out: Transaction[] = [];
    a.transactions.forEach(from, to, (t) => {
      if (!types || types.has(t.type) || types.has(txFilterOf(t.type))) out.push(t);
    });
    return out;
  };

  /** A request for transactions the capped log no longer holds: 416, as v20 answers a range it cannot serve. */
  const tooOld = (a: SandboxAccount, since: number, field: string): HttpError =>
    new HttpError(416, `Invalid value specified for '${field}': transactions after ${since} are no longer available; this sandbox keeps the newest ${a.transactions.capacity} (oldest kept: ${a.transactions.oldestID}, last: ${a.transactions.lastID}; raise it with --keep-transactions)`, 'INVALID_RANGE');

  // ------------------------------------------------------------------------------------------
  // Routes

  const routes: [string, RegExp, Handler][] = [];
  const on = (method: string, path: string, h: Handler): void => {
    const re = new RegExp(`^${path.replace(/\{[a-zA-Z]+\}/g, '([^/]+)')}$`);
    routes.push([method, re, h]);
  };
  const A = '/v3/accounts/{accountID}';

  on('GET', '/v3/accounts', () => ok({ accounts: [...accounts.keys()].map((id) => ({ id, tags: [] })) }));
  on('GET', A, (_r, [id]) => {
    const a = account(id);
    return ok({ account: a.full(), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/summary`, (_r, [id]) => {
    const a = account(id);
    return ok({ account: a.summary(), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/instruments`, (r, [id]) => {
    const a = account(id);
    const want = r.url.searchParams.get('instruments');
    const list = want !== null ? want.split(',').map((n) => instruments.get(n)) : instruments.list();
    return ok({ instruments: list.map((i) => wireInstrument(i.wire as unknown as Record<string, unknown>, financing.get(i.name))), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('PATCH', `${A}/configuration`, (r, [id]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    const fields: { alias?: string; marginRate?: string } = {};
    if (b.alias !== undefined) {
      if (typeof b.alias !== 'string') throw new HttpError(400, "Invalid value specified for 'alias': must be a string");
      fields.alias = b.alias;
    }
    if (b.marginRate !== undefined) {
      if (typeof b.marginRate !== 'string' || !/^\d+(\.\d+)?$/.test(b.marginRate) || !(Number(b.marginRate) > 0 && Number(b.marginRate) <= 1)) {
        throw new HttpError(400, "Invalid value specified for 'marginRate': a decimal string in (0, 1], e.g. \"0.05\"", 'INVALID_MARGIN_RATE');
      }
      fields.marginRate = b.marginRate;
    }
    if (fields.alias === undefined && fields.marginRate === undefined) throw new HttpError(400, "Invalid request body: give 'alias' and/or 'marginRate'");
    const txs = a.configure(fields);
    return ok({ clientConfigureTransaction: txs[0], lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/changes`, (r, [id]) => {
    const a = account(id);
    const since = Number(r.url.searchParams.get('sinceTransactionID') ?? 'NaN');
    if (!Number.isInteger(since) || since < 0) throw new HttpError(400, "Invalid value specified for 'sinceTransactionID': give a transaction ID", 'INVALID_TRANSACTION_ID');
    const log = a.transactions;
    if (since < log.oldestID - 1) throw tooOld(a, since, 'sinceTransactionID');
    if (log.lastID - since > MAX_CHANGES) {
      throw new HttpError(416, `Invalid value specified for 'sinceTransactionID': ${since} is ${log.lastID - since} transactions behind the last (${log.lastID}); /changes serves at most ${MAX_CHANGES}. Get the account (GET /v3/accounts/${a.id}) and poll from its lastTransactionID, or read the transactions in pages with /transactions/idrange`, 'INVALID_RANGE');
    }
    const txs = log.range(since + 1, log.lastID);
    const changes = changesOf(a, txs);
    const state: Record<string, unknown> = { ...a.state() };
    // DynamicOrderState: the trailing stops' current values.
    state.orders = a.pendingOrders().filter((o) => o.type === 'TRAILING_STOP_LOSS').map((o) => ({ id: o.id, trailingStopValue: o.trailingStopValue, triggerDistance: o.distance, isTriggerDistanceExact: true }));
    state.trades = a.openTrades().map((t) => ({ id: t.id, unrealizedPL: t.unrealizedPL, marginUsed: t.marginUsed }));
    state.positions = a.positions(true).map((p) => ({ instrument: p.instrument, netUnrealizedPL: p.unrealizedPL, longUnrealizedPL: (p.long as Record<string, unknown>).unrealizedPL, shortUnrealizedPL: (p.short as Record<string, unknown>).unrealizedPL, marginUsed: p.marginUsed }));
    return ok({ changes, state, lastTransactionID: a.broker.ledger.lastTransactionID });
  });

  // Instruments: candles
  const candles: Handler = async (r, m) => {
    const instrument = m[m.length - 1]!;
    if (!instruments.has(instrument)) throw new HttpError(400, `Invalid value specified for 'instrument': ${instrument}`, 'INVALID_INSTRUMENT');
    const fault = await faults.candles();
    if (fault) return fault;
    return candlesReply(catalog, instrument, r.url.searchParams, now, faults.candleCompleteLagMs);
  };
  on('GET', '/v3/instruments/{instrument}/candles', candles);
  on('GET', `${A}/instruments/{instrument}/candles`, (r, m) => {
    account(m[0]);
    return candles(r, m);
  });

  // Pricing
  const instrumentsParam = (url: URL): string[] => {
    const text = url.searchParams.get('instruments');
    if (text === null || text === '') throw new HttpError(400, "Invalid value specified for 'instruments': give a comma-separated list, e.g. instruments=EUR_USD,USD_JPY", 'INVALID_INSTRUMENTS');
    const list = text.split(',');
    for (const n of list) if (!instruments.has(n)) throw new HttpError(400, `Invalid value specified for 'instruments': unknown instrument '${n}'`, 'INVALID_INSTRUMENT');
    return list;
  };
  on('GET', `${A}/pricing`, (r, [id]) => {
    const a = account(id);
    const list = instrumentsParam(r.url);
    const sinceText = r.url.searchParams.get('since');
    let since = -Infinity;
    if (sinceText !== null) {
      since = /^\d+(\.\d+)?$/.test(sinceText) ? Number(sinceText) * 1000 : parseRequestTime(sinceText);
      if (!Number.isFinite(since)) throw new HttpError(400, `Invalid value specified for 'since': ${sinceText} (RFC 3339 or UNIX seconds)`);
    }
    // since: only prices that changed after that time.
    const prices = list.filter((n) => (quotes.get(n)?.time ?? -Infinity) > since).map((n) => priceJSON(a, n)).filter((p) => p !== undefined);
    const body: Record<string, unknown> = { prices, time: formatTime(now) };
    if (r.url.searchParams.get('includeHomeConversions') === 'true') {
      const currencies = new Set<string>();
      for (const i of instruments.list()) {
        currencies.add(i.base);
        currencies.add(i.quote);
      }
      body.homeConversions = [...currencies].sort().map((c) => a.homeConversion(c)).filter((x) => x !== undefined);
    }
    return ok(body);
  });
  on('GET', `${A}/pricing/stream`, (r, [id]) => {
    const a = account(id);
    const list = instrumentsParam(r.url);
    const conn = openStream(r.res);
    const s = { conn, account: a, instruments: new Set(list), unix: r.unix };
    priceStreams.add(s);
    r.res.on('close', () => priceStreams.delete(s));
    // OANDA starts a price stream with the current price of each instrument (snapshot=false: not).
    for (const n of r.url.searchParams.get('snapshot') === 'false' ? [] : list) {
      const body = priceJSON(a, n);
      if (body && !streamWrite(conn, body, r.unix)) {
        priceStreams.delete(s);
        break;
      }
    }
    return 'stream';
  });

  // Orders
  on('POST', `${A}/orders`, async (r, [id]) => {
    const a = account(id);
    const request = parseOrder(r.body);
    const txs = await submitAndWait(a, { kind: 'order', id: intentID(), request });
    const { body, rejected } = orderResponse(a, txs);
    if (rejected) return rejectReply(400, body, rejected);
    const created = body.orderCreateTransaction as Transaction | undefined;
    return ok(body, 201, created ? { Location: `${baseUrl}/v3/accounts/${a.id}/orders/${created.id}` } : undefined);
  });
  const ordersList = (r: Req, a: SandboxAccount, pendingOnly: boolean): SandboxReply => {
    let list = pendingOnly ? a.pendingOrders() : a.orders();
    if (!pendingOnly) {
      const state = r.url.searchParams.get('state') ?? 'PENDING';
      if (!['PENDING', 'FILLED', 'TRIGGERED', 'CANCELLED', 'ALL'].includes(state)) throw new HttpError(400, `Invalid value specified for 'state': ${state} (PENDING, FILLED, TRIGGERED, CANCELLED or ALL)`);
      if (state !== 'ALL') list = list.filter((o) => o.state === state || (state === 'FILLED' && o.state === 'FILLED'));
      const inst = r.url.searchParams.get('instrument');
      if (inst !== null) list = list.filter((o) => o.instrument === inst || (o.tradeID !== undefined && a.tradeBySpec(o.tradeID)?.instrument === inst));
      list = filterByIds(list, r.url);
      const { items, link } = pageOf(list, r.url, 500, 50);
      return ok({ orders: items, lastTransactionID: a.broker.ledger.lastTransactionID }, 200, link ? { Link: link } : undefined);
    }
    return ok({ orders: list, lastTransactionID: a.broker.ledger.lastTransactionID });
  };
  on('GET', `${A}/orders`, (r, [id]) => ordersList(r, account(id), false));
  on('GET', `${A}/pendingOrders`, (r, [id]) => ordersList(r, account(id), true));
  on('GET', `${A}/orders/{spec}`, (_r, [id, spec]) => {
    const a = account(id);
    return ok({ order: orderSpec(a, spec!), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('PUT', `${A}/orders/{spec}`, async (r, [id, spec]) => {
    const a = account(id);
    const old = orderSpec(a, spec!);
    const request = parseOrder(r.body);
    const txs = await submitAndWait(a, { kind: 'replace', id: intentID(), orderSpecifier: old.id as string, request });
    const { body, rejected } = orderResponse(a, txs);
    if (rejected) return rejectReply(rejected.type === 'ORDER_CANCEL_REJECT' ? 404 : 400, body, rejected);
    const created = body.orderCreateTransaction as Transaction | undefined;
    return ok(body, 201, created ? { Location: `${baseUrl}/v3/accounts/${a.id}/orders/${created.id}` } : undefined);
  });
  on('PUT', `${A}/orders/{spec}/cancel`, (_r, [id, spec]) => {
    const a = account(id);
    const txs = submit(a, { kind: 'cancel', id: intentID(), orderSpecifier: resolveOrder(a, spec!) });
    const t = txs[0];
    const last = a.broker.ledger.lastTransactionID;
    if (!t || t.type === 'ORDER_CANCEL_REJECT') {
      const body: Record<string, unknown> = { relatedTransactionIDs: ids(txs), lastTransactionID: last };
      if (t) body.orderCancelRejectTransaction = t;
      return rejectReply(404, body, t ?? ({ rejectReason: 'ORDER_DOESNT_EXIST' } as unknown as Transaction));
    }
    return ok({ orderCancelTransaction: t, relatedTransactionIDs: ids(txs), lastTransactionID: last });
  });
  on('PUT', `${A}/orders/{spec}/clientExtensions`, (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    if (b.clientExtensions === undefined && b.tradeClientExtensions === undefined) throw new HttpError(400, "Invalid request body: give 'clientExtensions' and/or 'tradeClientExtensions'");
    const intent: OrderIntent = {
      kind: 'clientExtensions', id: intentID(), orderSpecifier: resolveOrder(a, spec!),
      ...(b.clientExtensions !== undefined ? { clientExtensions: objectBody(b.clientExtensions, "'clientExtensions'") } : {}),
      ...(b.tradeClientExtensions !== undefined ? { tradeClientExtensions: objectBody(b.tradeClientExtensions, "'tradeClientExtensions'") } : {}),
    };
    const txs = submit(a, intent);
    const t = txs[0]!;
    const last = a.broker.ledger.lastTransactionID;
    if (isReject(t)) return rejectReply(404, { orderClientExtensionsModifyRejectTransaction: t, lastTransactionID: last, relatedTransactionIDs: ids(txs) }, t);
    return ok({ orderClientExtensionsModifyTransaction: t, lastTransactionID: last, relatedTransactionIDs: ids(txs) });
  });

  // Trades
  const tradesList = (r: Req, a: SandboxAccount, openOnly: boolean): SandboxReply => {
    let list = (openOnly ? a.openTrades() : a.allTrades()) as ({ id: string } & Record<string, unknown>)[];
    if (openOnly) return ok({ trades: list, lastTransactionID: a.broker.ledger.lastTransactionID });
    const state = r.url.searchParams.get('state') ?? 'OPEN';
    if (!['OPEN', 'CLOSED', 'CLOSE_WHEN_TRADEABLE', 'ALL'].includes(state)) throw new HttpError(400, `Invalid value specified for 'state': ${state} (OPEN, CLOSED, CLOSE_WHEN_TRADEABLE or ALL)`);
    if (state !== 'ALL') list = list.filter((t) => t.state === state);
    const inst = r.url.searchParams.get('instrument');
    if (inst !== null) list = list.filter((t) => t.instrument === inst);
    list = filterByIds(list, r.url);
    const { items, link } = pageOf(list, r.url, 500, 50);
    return ok({ trades: items, lastTransactionID: a.broker.ledger.lastTransactionID }, 200, link ? { Link: link } : undefined);
  };
  on('GET', `${A}/trades`, (r, [id]) => tradesList(r, account(id), false));
  on('GET', `${A}/openTrades`, (r, [id]) => tradesList(r, account(id), true));
  const tradeSpec = (a: SandboxAccount, spec: string): Record<string, unknown> => {
    const t = a.tradeBySpec(spec);
    if (!t) throw new HttpError(404, 'The Trade specified does not exist', 'NO_SUCH_TRADE');
    return t;
  };
  on('GET', `${A}/trades/{spec}`, (_r, [id, spec]) => {
    const a = account(id);
    return ok({ trade: tradeSpec(a, spec!), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('PUT', `${A}/trades/{spec}/close`, async (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    const u = units(b.units, 'units', false) ?? 'ALL';
    const s = spec!;
    if (!a.findTrade(s)) throw new HttpError(404, 'The Trade specified does not exist', 'NO_SUCH_TRADE');
    const txs = await submitAndWait(a, { kind: 'closeTrade', id: intentID(), tradeSpecifier: s, units: u });
    const { body, rejected } = orderResponse(a, txs);
    if (rejected) return rejectReply(400, body, rejected);
    return ok(body);
  });
  on('PUT', `${A}/trades/{spec}/clientExtensions`, (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    if (b.clientExtensions === undefined) throw new HttpError(400, "Invalid request body: field 'clientExtensions' is missing");
    const txs = submit(a, { kind: 'clientExtensions', id: intentID(), tradeSpecifier: spec!, tradeClientExtensions: objectBody(b.clientExtensions, "'clientExtensions'") });
    const t = txs[0]!;
    const last = a.broker.ledger.lastTransactionID;
    if (isReject(t)) return rejectReply(404, { tradeClientExtensionsModifyRejectTransaction: t, lastTransactionID: last, relatedTransactionIDs: ids(txs) }, t);
    return ok({ tradeClientExtensionsModifyTransaction: t, lastTransactionID: last, relatedTransactionIDs: ids(txs) });
  });
  on('PUT', `${A}/trades/{spec}/orders`, (r, [id, spec]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    const s = spec!;
    if (!a.findTrade(s)) throw new HttpError(404, 'The Trade specified does not exist', 'NO_SUCH_TRADE');
    const dep = (k: string): Record<string, unknown> | null | undefined => {
      const v = b[k];
      if (v === undefined || v === null) return v as null | undefined;
      return objectBody(v, `'${k}'`);
    };
    const intent = {
      kind: 'tradeOrders', id: intentID(), tradeSpecifier: s,
      ...(b.takeProfit !== undefined ? { takeProfit: dep('takeProfit') } : {}),
      ...(b.stopLoss !== undefined ? { stopLoss: dep('stopLoss') } : {}),
      ...(b.trailingStopLoss !== undefined ? { trailingStopLoss: dep('trailingStopLoss') } : {}),
      ...(b.guaranteedStopLoss !== undefined ? { guaranteedStopLoss: dep('guaranteedStopLoss') } : {}),
    } as OrderIntent;
    const txs = submit(a, intent);
    const body: Record<string, unknown> = {};
    let rejected: Transaction | undefined;
    const names: Record<string, string> = { TAKE_PROFIT: 'takeProfit', STOP_LOSS: 'stopLoss', TRAILING_STOP_LOSS: 'trailingStopLoss', GUARANTEED_STOP_LOSS: 'guaranteedStopLoss' };
    const createdType = new Map<string, string>();
    for (const t of txs) {
      const x = t as Transaction & { orderID?: string };
      const m1 = /^(TAKE_PROFIT|STOP_LOSS|TRAILING_STOP_LOSS|GUARANTEED_STOP_LOSS)_ORDER(_REJECT)?$/.exec(t.type);
      if (m1) {
        const n = names[m1[1]!]!;
        if (m1[2]) {
          rejected ??= t;
          body[`${n}OrderRejectTransaction`] = t;
        } else {
          body[`${n}OrderTransaction`] = t;
          createdType.set(t.id, n);
        }
      } else if (t.type === 'ORDER_CANCEL') {
        const o = a.findOrder(x.orderID ?? '');
        const n = o ? names[o.type] : undefined;
        if (n) body[`${n}OrderCancelTransaction`] = t;
      } else if (t.type === 'ORDER_FILL') {
        const n = createdType.get(x.orderID ?? '');
        if (n) body[`${n}OrderFillTransaction`] = t;
      }
    }
    body.relatedTransactionIDs = ids(txs);
    body.lastTransactionID = a.broker.ledger.lastTransactionID;
    // The refused field is under the dependent order's key of the request (takeProfit.price …).
    if (rejected) return rejectReply(400, body, rejected, names[/^[A-Z_]+?(?=_ORDER_REJECT$)/.exec(rejected.type)?.[0] ?? ''] ?? 'order');
    return ok(body);
  });

  // Positions
  on('GET', `${A}/positions`, (_r, [id]) => {
    const a = account(id);
    return ok({ positions: a.positions(false), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/openPositions`, (_r, [id]) => {
    const a = account(id);
    return ok({ positions: a.positions(true), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/positions/{instrument}`, (_r, [id, inst]) => {
    const a = account(id);
    if (!instruments.has(inst!)) throw new HttpError(400, `Invalid value specified for 'instrument': ${inst}`, 'INVALID_INSTRUMENT');
    return ok({ position: a.position(inst!), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('PUT', `${A}/positions/{instrument}/close`, async (r, [id, inst]) => {
    const a = account(id);
    if (!instruments.has(inst!)) throw new HttpError(400, `Invalid value specified for 'instrument': ${inst}`, 'INVALID_INSTRUMENT');
    const b = objectBody(r.body, 'the body');
    const longUnits = units(b.longUnits, 'longUnits', true);
    const shortUnits = units(b.shortUnits, 'shortUnits', true);
    const intent: OrderIntent = { kind: 'closePosition', id: intentID(), instrument: inst!, ...(longUnits !== undefined ? { longUnits } : {}), ...(shortUnits !== undefined ? { shortUnits } : {}) };
    const txs = await submitAndWait(a, intent);
    const body: Record<string, unknown> = {};
    let rejected: Transaction | undefined;
    const sideOf = new Map<string, 'long' | 'short'>();
    for (const t of txs) {
      const x = t as Transaction & { orderID?: string; longPositionCloseout?: unknown; shortPositionCloseout?: unknown };
      if (isReject(t)) {
        rejected ??= t;
        body.longOrderRejectTransaction ??= t;
      } else if (t.type === 'MARKET_ORDER') {
        const side = x.longPositionCloseout !== undefined ? 'long' : 'short';
        sideOf.set(t.id, side);
        body[`${side}OrderCreateTransaction`] = t;
      } else if (t.type === 'ORDER_FILL' && sideOf.has(x.orderID ?? '')) {
        body[`${sideOf.get(x.orderID!)}OrderFillTransaction`] = t;
      } else if (t.type === 'ORDER_CANCEL' && sideOf.has(x.orderID ?? '')) {
        body[`${sideOf.get(x.orderID!)}OrderCancelTransaction`] = t;
      }
    }
    body.relatedTransactionIDs = ids(txs);
    body.lastTransactionID = a.broker.ledger.lastTransactionID;
    if (rejected) return rejectReply(400, body, rejected);
    // v20 declares a Location header (the position just closed out) on this 200.
    return ok(body, 200, { Location: `${baseUrl}/v3/accounts/${a.id}/positions/${inst}` });
  });

  // Transactions
  on('GET', `${A}/transactions`, (r, [id]) => {
    const a = account(id);
    const q = r.url.searchParams;
    const sizeText = q.get('pageSize');
    const pageSize = sizeText === null ? 100 : Number(sizeText);
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) throw new HttpError(400, `Invalid value specified for 'pageSize': ${sizeText} (1 to 1000)`, 'INVALID_PAGE_SIZE');
    const timeParam = (k: string): UnixMs | undefined => {
      const v = q.get(k);
      if (v === null) return undefined;
      const t = /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : parseRequestTime(v);
      if (!Number.isFinite(t)) throw new HttpError(400, `Invalid value specified for '${k}': ${v} (RFC 3339 or UNIX seconds)`);
      return t;
    };
    const from = timeParam('from');
    const to = timeParam('to');
    // Times grow with IDs, so the time range is an ID range (two binary searches). Pages are idrange
    // URLs of at most pageSize matching transactions; with no type filter they follow from the IDs.
    const log = a.transactions;
    // A range that reaches into forgotten transactions lists their pages too (their idrange answers
    // 416); their times and types are gone, so only a range from the account's start can say which.
    const timeOf = (t: Transaction): number => parseTime(t.time);
    const typeText = q.get('type');
    const oldest = log.get(log.oldestID);
    const reachesForgotten = log.oldestID > 1 && oldest !== undefined && (from === undefined || from <= timeOf(oldest));
    if (reachesForgotten && (typeText !== null || (from !== undefined && from > parseTime(a.createdTime)))) throw tooOld(a, log.oldestID - 1, 'from');
    const lo = reachesForgotten ? 1 : from === undefined ? log.oldestID : log.firstAtOrAfter(from, timeOf);
    const hi = (to === undefined ? log.lastID + 1 : log.firstAtOrAfter(to + 1, timeOf)) - 1;
    const pageIDs: number[] = [];
    let count = 0;
    if (typeText === null) {
      count = Math.max(0, hi - lo + 1);
      for (let id = lo; id <= hi; id += pageSize) pageIDs.push(id, Math.min(hi, id + pageSize - 1));
    } else {
      for (const t of txSlice(a, lo, hi, r.url)) {
        if (count % pageSize === 0) pageIDs.push(Number(t.id), Number(t.id));
        else pageIDs[pageIDs.length - 1] = Number(t.id);
        count++;
      }
    }
    // One URL per page: built by concatenation (a URL object per page costs ~10 µs, 20 ms for 2M transactions).
    const pages: string[] = [];
    const pageBase = `${baseUrl}/v3/accounts/${encodeURIComponent(a.id)}/transactions/idrange?from=`;
    const typeQuery = typeText !== null ? `&type=${encodeURIComponent(typeText)}` : '';
    for (let i = 0; i < pageIDs.length; i += 2) pages.push(`${pageBase}${pageIDs[i]}&to=${pageIDs[i + 1]}${typeQuery}`);
    const body: Record<string, unknown> = {
      from: formatTime(from ?? parseTime(a.createdTime)),
      to: formatTime(to ?? now),
      pageSize,
      count,
      pages,
      lastTransactionID: a.broker.ledger.lastTransactionID,
    };
    if (q.get('type') !== null) body.type = q.get('type')!.split(',');
    return ok(body);
  });
  on('GET', `${A}/transactions/idrange`, (r, [id]) => {
    const a = account(id);
    const from = Number(r.url.searchParams.get('from'));
    const to = Number(r.url.searchParams.get('to'));
    if (!Number.isInteger(from) || from < 1) throw new HttpError(400, "Invalid value specified for 'from': give a transaction ID", 'INVALID_RANGE');
    if (!Number.isInteger(to) || to < from) throw new HttpError(400, "Invalid value specified for 'to': give a transaction ID not below 'from'", 'INVALID_RANGE');
    if (to - from + 1 > 1000) throw new HttpError(400, 'Invalid range: at most 1000 transactions per request', 'INVALID_RANGE');
    if (from < a.transactions.oldestID) throw tooOld(a, from - 1, 'from');
    return ok({ transactions: txSlice(a, from, to, r.url), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/transactions/sinceid`, (r, [id]) => {
    const a = account(id);
    const since = Number(r.url.searchParams.get('id'));
    if (!Number.isInteger(since) || since < 0) throw new HttpError(400, "Invalid value specified for 'id': give a transaction ID", 'INVALID_TRANSACTION_ID');
    if (since < a.transactions.oldestID - 1) throw tooOld(a, since, 'id');
    return ok({ transactions: txSlice(a, since + 1, since + 1000, r.url), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/transactions/stream`, (r, [id]) => {
    const a = account(id);
    const conn = openStream(r.res);
    const s = { conn, account: a, unix: r.unix, off: () => {} };
    s.off = a.onTransaction((tx) => {
      if (!streamWrite(conn, tx, s.unix)) {
        s.off();
        txStreams.delete(s);
      }
    });
    txStreams.add(s);
    r.res.on('close', () => {
      s.off();
      txStreams.delete(s);
    });
    return 'stream';
  });
  on('GET', `${A}/transactions/{txid}`, (_r, [id, txid]) => {
    const a = account(id);
    const n = Number(txid);
    const t = a.transactions.get(n);
    if (!t) {
      const forgotten = Number.isInteger(n) && n >= 1 && n < a.transactions.oldestID;
      throw new HttpError(404, forgotten ? `The Transaction specified (${n}) is older than the oldest this sandbox keeps (${a.transactions.oldestID}; it keeps the newest ${a.transactions.capacity}, --keep-transactions)` : 'The Transaction specified does not exist', 'NO_SUCH_TRANSACTION');
    }
    return ok({ transaction: t, lastTransactionID: a.broker.ledger.lastTransactionID });
  });

  // Control
  const controlTime = (v: unknown): number => {
    if (typeof v === 'number') return v;
    if (typeof v === 'string') return /^\d+$/.test(v) ? Number(v) : parseRequestTime(v);
    return Number.NaN;
  };
  /**
   * Moves the clock to `ms` a simulated day at a time, yielding to the event loop between days: a
   * jump of years (each day may charge financing, expire orders) never blocks other requests.
   */
  const advanceTo = async (ms: number, field: string): Promise<void> => {
    if (!Number.isFinite(ms)) throw new HttpError(400, `Invalid value specified for '${field}': give RFC 3339 or epoch ms`);
    if (ms > MAX_CONTROL_TIME) throw new HttpError(400, `Invalid value specified for '${field}': ${formatTime(Math.min(ms, 8.64e15))} is past ${formatTime(MAX_CONTROL_TIME)}, the latest time the sandbox clock accepts`);
    while (ms - now > DAY_MS) {
      setTime(now + DAY_MS);
      await new Promise<void>((done) => setImmediate(done));
    }
    setTime(ms);
  };
  on('POST', '/sandbox/time', async (r) => {
    await advanceTo(controlTime(objectBody(r.body, 'the body').time), 'time');
    return ok({ time: formatTime(now) });
  });
  on('POST', '/sandbox/advance', async (r) => {
    const ms = objectBody(r.body, 'the body').ms;
    if (typeof ms !== 'number' || !(ms >= 0)) throw new HttpError(400, "Invalid value specified for 'ms': a number of milliseconds >= 0");
    await advanceTo(now + ms, 'ms');
    return ok({ time: formatTime(now) });
  });
  on('POST', '/sandbox/prices', async (r) => {
    const list = Array.isArray(r.body) ? r.body : [r.body];
    for (const [i, p] of list.entries()) {
      const o = objectBody(p, `price #${i}`);
      const num = (k: string): number => {
        const v = o[k];
        const x = typeof v === 'string' ? Number(v) : v;
        if (typeof x !== 'number' || !Number.isFinite(x)) throw new HttpError(400, `Invalid value specified for '${k}' (price #${i}): a number`);
        return x;
      };
      if (typeof o.instrument !== 'string') throw new HttpError(400, `Invalid value specified for 'instrument' (price #${i}): a name like EUR_USD`);
      const bid = num('bid');
      const ask = num('ask');
      const liquidity = o.liquidity !== undefined ? num('liquidity') : undefined;
      if (o.time !== undefined) await advanceTo(controlTime(o.time), 'time');
      tick({ instrument: o.instrument, bid, ask, ...(liquidity !== undefined ? { liquidity } : {}) });
    }
    return ok({ time: formatTime(now), prices: list.length });
  });
  on('POST', '/sandbox/faults', (r) => {
    try {
      setFaults(objectBody(r.body, 'the body') as FaultOptions, true);
    } catch (e) {
      if (e instanceof FaultError) throw new HttpError(400, e.message);
      throw e;
    }
    return ok({ faults: faults.opts });
  });
  on('POST', '/sandbox/financing', (r) => {
    const b = objectBody(r.body, 'the body');
    if (typeof b.instrument !== 'string') throw new HttpError(400, "Invalid value specified for 'instrument': a name like EUR_USD");
    setFinancing(b.instrument, { longRate: b.longRate as string, shortRate: b.shortRate as string });
    return ok({ instrument: b.instrument, financing: financing.get(b.instrument) });
  });
  on('GET', '/sandbox/stats', (r) => {
    const m = process.memoryUsage();
    const delay = { max: loopDelay.max / 1e6, p99: loopDelay.percentile(99) / 1e6 };
    // ?reset=true starts a new event-loop delay window (a load run measures one phase at a time).
    const slowestHandler = { ms: slowest.ms, cpuMs: slowest.cpuMs, request: slowest.request };
    if (r.url.searchParams.get('reset') === 'true') {
      loopDelay.reset();
      slowest.ms = 0;
      slowest.cpuMs = 0;
      slowest.request = '';
    }
    return ok({
      ...stats(),
      time: formatTime(now),
      // The process's memory and the event loop's worst delay since the start: what a load run watches.
      memory: { rssBytes: m.rss, heapUsedBytes: m.heapUsed },
      eventLoopDelayMs: delay,
      slowestHandler,
      transactions: Object.fromEntries([...accounts].map(([id, a]) => [id, { kept: a.transactions.length, oldestID: String(a.transactions.oldestID), lastID: String(a.transactions.lastID) }])),
    });
  });

  // Mounted routes: Labs (/labs/v1/) and OAuth (/v1/oauth2/).
  const oauth = oauthRoute({ baseUrl: () => baseUrl });
  // The legacy generation (/v1) on the same accounts, through the same submit path as /v3.
  const legacy = legacyRoute({ accounts, instruments, now: () => now, baseUrl: () => baseUrl, submit, ...(opts.legacyRateClock ? { rateClock: opts.legacyRateClock } : {}), ...(opts.legacyMaxScan !== undefined ? { maxScan: opts.legacyMaxScan } : {}) });
  const mounted: SandboxRoute[] = [legacy.route, labsRoute({ now: () => now, instruments, ...(opts.labs !== undefined ? { recorded: resolve(opts.labs) } : {}) }), oauth];

  const stats = (): ReturnType<Sandbox['stats']> => ({
    requests: counters.requests,
    streamConnections: counters.streamConnections,
    droppedStreams: counters.droppedStreams,
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
    return { res, lines: 0, chain: Promise.resolve() };
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
    const auth = req.headers.authorization ?? '';
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
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
      // OAuth's token endpoint takes a form body (RFC 6749 4.1.3): routes get it as text.
      const form = (req.headers['content-type'] ?? '').toString().startsWith('application/x-www-form-urlencoded');
      if (form) body = text;
      else if (text.trim() !== '') body = parseJsonBody(text);
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

  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const slowest = { ms: 0, cpuMs: 0, request: '' };
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

/** The TransactionFilter a transaction type belongs to (v20 filters by type names, plus ORDER etc.). */
function txFilterOf(type: string): string {
  if (type.endsWith('_ORDER')) return 'ORDER';
  if (type.startsWith('ORDER_') || type.endsWith('_ORDER_REJECT')) return 'ORDER';
  if (type.startsWith('TRADE_')) return 'TRADE';
  return type;
}

/**
 * The `changes` of GET /changes: orders, trades and positions touched by `txs`, and the transactions.
 * A trade is listed once, by where it ended up: closed, else opened, else reduced.
 */
function changesOf(a: SandboxAccount, txs: readonly Transaction[]): Record<string, unknown> {
  const ordersCreated: unknown[] = [];
  const ordersCancelled: unknown[] = [];
  const ordersFilled: unknown[] = [];
  const opened = new Set<string>();
  const reduced = new Set<string>();
  const closed = new Set<string>();
  const instruments = new Set<string>();
  for (const t of txs) {
    const x = t as Transaction & { orderID?: string; instrument?: string; tradeOpened?: { tradeID: string }; tradeReduced?: { tradeID: string }; tradesClosed?: { tradeID: string }[] };
    if (t.type.endsWith('_ORDER')) {
      const o = a.findOrder(t.id);
      if (o) ordersCreated.push(o);
    } else if (t.type === 'ORDER_CANCEL') {
      const o = a.findOrder(x.orderID ?? '');
      if (o) ordersCancelled.push(o);
    } else if (t.type === 'ORDER_FILL') {
      const o = a.findOrder(x.orderID ?? '');
      if (o) ordersFilled.push(o);
      if (x.instrument) instruments.add(x.instrument);
      if (x.tradeOpened) opened.add(x.tradeOpened.tradeID);
      if (x.tradeReduced) reduced.add(x.tradeReduced.tradeID);
      for (const c of x.tradesClosed ?? []) closed.add(c.tradeID);
    }
  }
  const tradesOpened: unknown[] = [];
  const tradesReduced: unknown[] = [];
  const tradesClosed: unknown[] = [];
  for (const id of new Set([...opened, ...reduced, ...closed])) {
    const tr = a.tradeBySpec(id);
    if (!tr) continue;
    const s = tradeSummary(tr);
    if (tr.state === 'CLOSED') tradesClosed.push(s);
    else if (opened.has(id)) tradesOpened.push(s);
    else tradesReduced.push(s);
  }
  return {
    ordersCreated,
    ordersCancelled,
    ordersFilled,
    ordersTriggered: [],
    tradesOpened,
    tradesReduced,
    tradesClosed,
    positions: [...instruments].map((i) => a.position(i)),
    transactions: txs,
  };
}

/**
 * The fields of v20's Instrument definition, and `financing` as OANDA's live service added it after
 * 3.0.25 (`longRate`, `shortRate` as decimal strings, `financingDaysOfWeek` with DayOfWeek values
 * `MONDAY`…); data/instruments.json carries more (tradingHours, which is not a v20 field).
 */
const INSTRUMENT_FIELDS = ['name', 'type', 'displayName', 'pipLocation', 'displayPrecision', 'tradeUnitsPrecision', 'minimumTradeSize', 'maximumTrailingStopDistance', 'minimumTrailingStopDistance', 'maximumPositionSize', 'maximumOrderUnits', 'marginRate', 'commission'];

function wireInstrument(w: Record<string, unknown>, rates: { longRate: string; shortRate: string } | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of INSTRUMENT_FIELDS) if (w[k] !== undefined) out[k] = w[k];
  const f = w.financing as { longRate: string; shortRate: string; financingDaysOfWeek: { dayOfWeek: string; daysCharged: number }[] } | undefined;
  if (f !== undefined) {
    out.financing = {
      longRate: rates?.longRate ?? f.longRate,
      shortRate: rates?.shortRate ?? f.shortRate,
      financingDaysOfWeek: f.financingDaysOfWeek.map((d) => ({ dayOfWeek: d.dayOfWeek.toUpperCase(), daysCharged: d.daysCharged })),
    };
  }
  return out;
}
