import { createRequire } from 'node:module';
import { formatViolations, type OpenApiValidator, type Violation } from './openapi.ts';
import { bodyText, type RecordingProxy } from './recording-proxy.ts';

/**
 * What the contract tests need of OANDA's own JavaScript client (`@oanda/v20`, CommonJS and
 * untyped): its Context and classes, a promise around its callbacks, and the checks of what the
 * sandbox served (every body against the OpenAPI definitions, nothing the client's classes drop).
 */

// The official client is CommonJS and untyped: what the tests use of it, typed loosely.
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Body = Record<string, any>;
export interface V20Response {
  method: string;
  path: string;
  statusCode: string;
  contentType: string;
  rawBody: string;
  body: Body | null;
}
export type Callback = (r: V20Response) => void;
export interface V20Context {
  account: {
    list(cb: Callback): void;
    get(id: string, cb: Callback): void;
    summary(id: string, cb: Callback): void;
    instruments(id: string, q: Body, cb: Callback): void;
    changes(id: string, q: Body, cb: Callback): void;
    configure(id: string, body: Body, cb: Callback): void;
  };
  order: {
    market(id: string, spec: Body, cb: Callback): void;
    limit(id: string, spec: Body, cb: Callback): void;
    stop(id: string, spec: Body, cb: Callback): void;
    marketIfTouched(id: string, spec: Body, cb: Callback): void;
    trailingStopLoss(id: string, spec: Body, cb: Callback): void;
    limitReplace(id: string, orderID: string, spec: Body, cb: Callback): void;
    list(id: string, q: Body, cb: Callback): void;
    listPending(id: string, cb: Callback): void;
    get(id: string, orderID: string, cb: Callback): void;
    cancel(id: string, orderID: string, cb: Callback): void;
    setClientExtensions(id: string, orderID: string, body: Body, cb: Callback): void;
  };
  trade: {
    list(id: string, q: Body, cb: Callback): void;
    listOpen(id: string, cb: Callback): void;
    get(id: string, tradeID: string, cb: Callback): void;
    close(id: string, tradeID: string, body: Body, cb: Callback): void;
    setClientExtensions(id: string, tradeID: string, body: Body, cb: Callback): void;
    setDependentOrders(id: string, tradeID: string, body: Body, cb: Callback): void;
  };
  position: {
    list(id: string, cb: Callback): void;
    listOpen(id: string, cb: Callback): void;
    get(id: string, instrument: string, cb: Callback): void;
    close(id: string, instrument: string, body: Body, cb: Callback): void;
  };
  transaction: {
    since(id: string, q: Body, cb: Callback): void;
    range(id: string, q: Body, cb: Callback): void;
    list(id: string, q: Body, cb: Callback): void;
    get(id: string, transactionID: string, cb: Callback): void;
    stream(id: string, onLine: (x: Body) => void, cb: Callback): void;
  };
  instrument: { candles(instrument: string, q: Body, cb: Callback): void };
  pricing: { get(id: string, q: Body, cb: Callback): void };
}
export type Classes = Record<string, new (...args: any[]) => object>;

const require = createRequire(import.meta.url);
export const { Context } = require('@oanda/v20/context') as {
  Context: new (host: string, port: number, ssl: boolean, app: string) => V20Context;
};
export const tx = require('@oanda/v20/transaction') as Classes;
export const ord = require('@oanda/v20/order') as Classes;
export const trd = require('@oanda/v20/trade') as Classes;
export const pos = require('@oanda/v20/position') as Classes;
export const acc = require('@oanda/v20/account') as Classes;
export const ins = require('@oanda/v20/instrument') as Classes;
export const prim = require('@oanda/v20/primitives') as Classes;
export const pri = require('@oanda/v20/pricing') as Classes;
export const pric = require('@oanda/v20/pricing_common') as Classes;
export const C = (m: Classes, name: string) => {
  const k = m[name];
  if (!k) throw new Error(`@oanda/v20 has no class ${name}`);
  return k;
};

let calls = 0;

/** How many calls `call` has made (the proxy must have seen each). */
export function callCount(): number {
  return calls;
}

/** Calls the client and resolves with its Response; a status other than `expected` fails with the body. */
export function call(expected: number, fn: (cb: Callback) => void): Promise<V20Response> {
  calls++;
  return new Promise((resolve, reject) => {
    fn((r) => {
      if (r.statusCode !== String(expected))
        reject(
          new Error(
            `${r.method} ${r.path}: status ${r.statusCode}, expected ${expected}: ${r.rawBody.slice(0, 400)}`,
          ),
        );
      else if (!r.body)
        reject(new Error(`${r.method} ${r.path}: the client parsed no body (Content-Type ${r.contentType})`));
      else resolve(r);
    });
  });
}

/**
 * What the sandbox serves beyond the frozen 3.0.25 definitions, on purpose: the simulated broker writes
 * ORDER_FILL as OANDA's live service does, which added fields after 3.0.25. The reference README lists
 * `ORDER_FILL.requestedUnits` and `Instrument.financing` among the later additions; live `fullPrice` also has `timestamp`. Only
 * these exact deviations are tolerated, and only there; the test counts and prints them. (Bucket
 * liquidity is served as an integer, as 3.0.25 and the recorded responses have it.)
 */
const LIVE_API_PROPERTIES: Readonly<Record<string, readonly string[]>> = {
  OrderFillTransaction: ['requestedUnits'],
  // The reference README lists Instrument.financing (longRate, shortRate, financingDaysOfWeek) too.
  Instrument: ['financing'],
  ClientPrice: ['timestamp'],
};

/** The kind of tolerated live-API addition a violation is (`OrderFillTransaction.requestedUnits`), or undefined. */
export function liveApiAddition(v: Violation): string | undefined {
  const prop = /^property "(\w+)" is not defined in (\w+)$/.exec(v.message);
  if (prop?.[1] && prop[2] === v.schema && LIVE_API_PROPERTIES[v.schema]?.includes(prop[1])) {
    if (v.schema === 'ClientPrice' && !v.path.endsWith('.fullPrice.timestamp')) return undefined;
    return `${v.schema}.${prop[1]}`;
  }
  return undefined;
}

/**
 * The JSON paths of `raw` the client's class instance lost or changed: the generated classes copy only
 * the fields they know, so a field the sandbox sends that v20 does not define disappears here.
 */
export function lostByClient(raw: unknown, parsed: unknown, path = '$'): string[] {
  if (Array.isArray(raw)) {
    if (!Array.isArray(parsed)) return [path];
    return raw.flatMap((r, i) => lostByClient(r, parsed[i], `${path}[${i}]`));
  }
  if (typeof raw === 'object' && raw !== null) {
    if (typeof parsed !== 'object' || parsed === null) return [path];
    return Object.entries(raw).flatMap(([k, v]) => lostByClient(v, (parsed as Body)[k], `${path}.${k}`));
  }
  return raw === parsed ? [] : [path];
}

/**
 * Every call's raw JSON against what the client built from it (serialised through its own toJSON).
 * The 3.0.25 classes may drop only the live-API additions, which they cannot know.
 */
export function expectFaithful(validator: OpenApiValidator, r: V20Response): void {
  const raw = JSON.parse(r.rawBody) as unknown;
  const additions = new Set(
    validator
      .validateResponse(r.method, r.path, Number(r.statusCode), raw)
      .filter((v) => liveApiAddition(v) !== undefined && v.message.startsWith('property'))
      .map((v) => v.path),
  );
  const lost = lostByClient(raw, JSON.parse(JSON.stringify(r.body)) as unknown).filter(
    (p) => !additions.has(p),
  );
  if (lost.length > 0)
    throw new Error(
      `${r.method} ${r.path}: fields the client classes dropped or changed: ${lost.join(', ')}`,
    );
}

export async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Validates everything a proxy recorded: each REST body against its operation and status, each stream
 * line as a Transaction/TransactionHeartbeat or ClientPrice/PricingHeartbeat, the declared headers
 * (RequestID on every response, Location where v20 declares it) and the JSON Content-Type.
 */
export function validateExchanges(validator: OpenApiValidator, proxy: RecordingProxy) {
  const problems: string[] = [];
  const tolerated = new Map<string, number>();
  const check = (where: string, violations: Violation[]) => {
    for (const x of violations) {
      const kind = liveApiAddition(x);
      if (kind === undefined) problems.push(...formatViolations(where, [x]));
      else tolerated.set(kind, (tolerated.get(kind) ?? 0) + 1);
    }
  };
  let rest = 0;
  let streams = 0;
  let lines = 0;
  for (const e of proxy.exchanges) {
    const where = `${e.method} ${e.path} ${e.status}`;
    const text = bodyText(e);
    for (const h of validator.declaredHeaders(e.method, e.path, e.status) ?? ['RequestID']) {
      if (h !== 'Link' && e.headers[h.toLowerCase()] === undefined) problems.push(`${where}: no ${h} header`);
    }
    if (/\/stream(\?|$)/.test(e.path)) {
      const stream = e.path.includes('/transactions/') ? 'transaction' : 'pricing';
      streams++;
      if (text.length > 0 && !text.endsWith('\n')) problems.push(`${where}: the stream ended inside a line`);
      for (const line of text.split('\n')) {
        if (line === '') continue;
        lines++;
        check(`${where} line ${lines}`, validator.validateStreamLine(stream, line));
      }
      continue;
    }
    rest++;
    if (!String(e.headers['content-type']).startsWith('application/json'))
      problems.push(`${where}: Content-Type ${e.headers['content-type']}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push(`${where}: body is not JSON: ${text.slice(0, 80)}`);
      continue;
    }
    check(where, validator.validateResponse(e.method, e.path, e.status, body));
  }
  return { problems, rest, streams, lines, tolerated };
}
