// An HTTP-aware fault proxy on 127.0.0.1 in front of a loopback server (the sandbox): the faults an
// operator's network and broker produce, per request, chosen at run time. Where test/tcp-tap.ts
// relays bytes blindly (for tests about connections), this one reads the HTTP/1.1 framing of both
// directions (test/http-framing.ts) so it can act on one request of a keep-alive connection:
//
//   delay  forward at once, hand the reply on `ms` later (each part of a stream too)
//   cut    forward, and close the client's connection when the reply begins: the request took
//          effect, the client never hears it
//   answer reply with a status (503, 429 + Retry-After…) without forwarding: nothing reached the server
//   hold   keep the request `ms` (or until `release()`), then forward it, even when the client has
//          given up meanwhile: bytes in transit arrive whatever the sender does
//   stall  hand on the reply's head and its first `afterBytes` body bytes, then nothing until
//          `release()`: a stream that goes silent with its connection open
//
// Rules are tried in the order added; the first whose predicate matches a complete request (method,
// path, headers, body) decides, `times` limits how often. Every request is recorded with the stages
// it passed, and `reached(stage, where)` resolves on an event (no polling), so a test knows, for
// example, that an order request is being held before it kills the runner.
import { EventEmitter } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { type HttpHead, HttpFramer, replyIsBodyless } from './http-framing.ts';

/** A complete request as the proxy read it. */
export interface ProxyRequest {
  /** 1, 2, … in arrival order over all connections. */
  readonly n: number;
  /** Which client connection (1, 2, … in accept order). */
  readonly connection: number;
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body as UTF-8 text ('' when none). */
  readonly body: string;
}

export type FaultAction =
  | { readonly kind: 'pass' }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'cut' }
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: string;
    }
  | { readonly kind: 'hold'; readonly ms: number }
  | { readonly kind: 'stall'; readonly afterBytes?: number };

/**
 * The stages a request passes. `withheld`: a stalled reply had bytes to hand on and kept them (the
 * event fires each time). `abandoned`: its client closed the connection before the reply ended (a
 * held request is still forwarded). `dropped`: never forwarded nor answered (its client left first),
 * or its reply was lost with the server's connection.
 */
export type ProxyStage =
  | 'received'
  | 'held'
  | 'forwarded'
  | 'answered'
  | 'cut'
  | 'stalled'
  | 'withheld'
  | 'replied'
  | 'abandoned'
  | 'dropped';

/** A request, the action taken, and when (performance.now()) it passed each stage. */
export interface ProxyRecord extends ProxyRequest {
  action: FaultAction['kind'];
  readonly at: Partial<Record<ProxyStage, number>>;
  /** Whether the client's connection had closed when the request was forwarded. */
  clientGoneAtForward: boolean;
  /** Reply bytes handed to the client. */
  bytesDown: number;
  /** Reply bytes kept back now by a stall. */
  keptBytes: number;
}

/** A rule in force; `remove()` takes it out. */
export interface FaultRuleHandle {
  /** Requests it has decided so far. */
  readonly hits: number;
  remove(): void;
}

export interface FaultProxy {
  /** http://127.0.0.1:PORT, forwarding to the target. */
  readonly url: string;
  /** Every request seen, in arrival order. */
  readonly requests: readonly ProxyRecord[];
  /** Adds a rule: requests matching `when` get `action` (the first `times` of them; default all). */
  rule(when: (r: ProxyRequest) => boolean, action: FaultAction, times?: number): FaultRuleHandle;
  /** Removes every rule (requests held or replies stalled stay so until `release()` or their time). */
  clearRules(): void;
  /** Forwards every held request now and resumes every stalled reply. */
  release(): void;
  /** Stalls, from now on, the replies already flowing for requests matching `where` (e.g. an open stream). */
  stallOpen(where: (r: ProxyRequest) => boolean): number;
  /**
   * Resolves with the first request (already seen or still to come) matching `where` that reached
   * `stage`; rejects after `ms` naming what it waited for (a guard against a hang, not a timing).
   */
  reached(stage: ProxyStage, where?: (r: ProxyRecord) => boolean, ms?: number): Promise<ProxyRecord>;
  /** Client connections open now. */
  open(): number;
  /** Connections to the server open now (the proxy opens one per client connection, again after the server closes it). */
  serverConnections(): number;
  close(): Promise<void>;
}

/** What a request is sent as upstream: the raw bytes, its record and the action decided. */
interface Exchange {
  readonly rec: ProxyRecord;
  readonly raw: Buffer;
  readonly action: FaultAction;
  /** Reply bytes kept back by a stall (or while waiting for release). */
  stalled: boolean;
  kept: Buffer[];
  /** Body bytes the stall still lets through. */
  allowance: number;
  replyStarted: boolean;
  /** The reply ended upstream while kept back: it ends for the client at release. */
  endedWhileStalled: boolean;
  done: (() => void) | undefined;
  /** Hands on what was kept and lets the rest through (release). */
  resume(): void;
}

const REASONS: Record<number, string> = {
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Starts a proxy forwarding to `target` (an `http://127.0.0.1:port` URL). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const up = new URL(target);
  if (up.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(up.hostname))
    throw new Error(`fault proxy: target ${target} must be http on 127.0.0.1`);
  const port = Number(up.port);
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const requests: ProxyRecord[] = [];
  type Rule = { when: (r: ProxyRequest) => boolean; action: FaultAction; left: number; hits: number };
  let rules: Rule[] = [];
  const releases = new Set<() => void>();
  const flowing = new Set<Exchange>();
  const clients = new Set<Socket>();
  const upstreams = new Set<Socket>();
  let connections = 0;

  const mark = (rec: ProxyRecord, stage: ProxyStage): void => {
    rec.at[stage] ??= performance.now();
    events.emit('stage', rec, stage);
  };

  const decide = (r: ProxyRequest): FaultAction => {
    for (const rule of rules) {
      if (rule.left > 0 && rule.when(r)) {
        rule.left--;
        rule.hits++;
        return rule.action;
      }
    }
    return { kind: 'pass' };
  };

  const server = createServer((client) => {
    const connection = ++connections;
    clients.add(client);
    let clientGone = false;
    let upstream: Socket | undefined;
    const waiting: { rec: ProxyRecord; raw: Buffer }[] = [];
    // Requests forwarded whose replies have not ended, oldest first (replies come in request order).
    const inFlight: Exchange[] = [];
    let busy = false; // a request is being decided, held, forwarded or answered
    let pendingForwards = 0; // held requests still to be forwarded
    const heldHere = new Set<ProxyRecord>();

    const toClient = (b: Buffer, ex: Exchange): void => {
      if (clientGone || client.destroyed) return;
      ex.rec.bytesDown += b.length;
      client.write(b);
    };

    const closeUpstreamIfIdle = (): void => {
      if (clientGone && inFlight.length === 0 && pendingForwards === 0) upstream?.destroy();
    };

    const replyPart = (ex: Exchange, b: Buffer, isHead: boolean, payload = false): void => {
      if (ex.action.kind === 'cut') {
        if (!ex.replyStarted) {
          ex.replyStarted = true;
          mark(ex.rec, 'cut');
          clientGone = true;
          client.destroy();
          if (pendingForwards === 0 && inFlight.length === 1) upstream?.destroy();
        }
        return;
      }
      ex.replyStarted = true;
      if (isHead) {
        emitPart(ex, b);
        if (ex.action.kind === 'stall' && ex.allowance === 0 && !ex.stalled) {
          ex.stalled = true;
          mark(ex.rec, 'stalled');
        }
        return;
      }
      if (payload && !ex.stalled && ex.action.kind === 'stall' && ex.allowance !== Number.POSITIVE_INFINITY) {
        const n = Math.min(ex.allowance, b.length);
        ex.allowance -= n;
        if (n > 0) emitPart(ex, b.subarray(0, n));
        if (ex.allowance === 0) {
          ex.stalled = true;
          mark(ex.rec, 'stalled');
        }
        if (n === b.length) return;
        b = b.subarray(n);
      }
      if (ex.stalled) {
        ex.kept.push(b);
        ex.rec.keptBytes += b.length;
        mark(ex.rec, 'withheld');
        return;
      }
      emitPart(ex, b);
    };

    const emitPart = (ex: Exchange, b: Buffer): void => {
      if (ex.action.kind === 'delay') {
        // One delay for every part keeps their order (timers of equal delay fire in creation order).
        setTimeout(() => toClient(b, ex), ex.action.ms);
      } else toClient(b, ex);
    };

    const replyEnded = (ex: Exchange): void => {
      const done = (): void => {
        flowing.delete(ex);
        mark(ex.rec, 'replied');
        busy = false;
        closeUpstreamIfIdle();
        pump();
      };
      inFlight.shift();
      ex.done = done;
      if (ex.stalled) {
        // The reply is complete upstream but kept back: it ends for the client at release().
        ex.endedWhileStalled = true;
        return;
      }
      if (ex.action.kind === 'delay') setTimeout(done, ex.action.ms);
      else done();
    };

    const ensureUpstream = (): Socket => {
      if (upstream !== undefined && !upstream.destroyed && !upstream.readableEnded) return upstream;
      const u = connect(port, up.hostname);
      upstream = u;
      upstreams.add(u);
      const framer = new HttpFramer(
        'response',
        {
          head: (_h: HttpHead, b: Buffer) => replyPart(inFlight[0]!, b, true),
          body: (b: Buffer, payload: boolean) => replyPart(inFlight[0]!, b, false, payload),
          end: () => replyEnded(inFlight[0]!),
        },
        (h) => replyIsBodyless(inFlight[0]?.rec.method ?? 'GET', h),
      );
      u.on('data', (b: Buffer) => {
        if (inFlight.length === 0) return; // nothing asked: drop (a server never speaks first in HTTP/1.1)
        framer.feed(b);
      });
      const gone = (): void => {
        upstreams.delete(u);
        if (upstream === u) upstream = undefined;
        // The server closed an idle keep-alive connection (e.g. while a request was held): the
        // next forward opens another, as a pooling middlebox does; the client is not told.
        if (inFlight.length === 0) return;
        // A reply that runs to the close (no length) ends here; one cut short is lost with it.
        for (const ex of inFlight.splice(0)) {
          flowing.delete(ex);
          mark(ex.rec, ex.replyStarted ? 'replied' : 'dropped');
        }
        clientGone = true;
        client.destroy();
      };
      u.on('close', gone);
      u.on('error', gone);
      return u;
    };

    const forward = (rec: ProxyRecord, raw: Buffer, action: FaultAction): void => {
      const ex: Exchange = {
        rec,
        raw,
        action,
        stalled: false,
        kept: [],
        allowance: action.kind === 'stall' ? (action.afterBytes ?? 0) : 0,
        replyStarted: false,
        endedWhileStalled: false,
        done: undefined,
        resume() {
          ex.stalled = false;
          ex.allowance = Number.POSITIVE_INFINITY;
          ex.rec.keptBytes = 0;
          for (const b of ex.kept.splice(0)) emitPart(ex, b);
          if (ex.endedWhileStalled) {
            ex.endedWhileStalled = false;
            ex.done?.();
          }
        },
      };
      rec.clientGoneAtForward = clientGone;
      inFlight.push(ex);
      flowing.add(ex);
      ensureUpstream().write(raw);
      mark(rec, 'forwarded');
    };

    const pump = (): void => {
      if (busy || clientGone) return;
      const next = waiting.shift();
      if (next === undefined) return;
      busy = true;
      const { rec, raw } = next;
      const action = decide(rec);
      rec.action = action.kind;
      switch (action.kind) {
        case 'answer': {
          const body = Buffer.from(
            action.body ?? JSON.stringify({ errorMessage: `fault proxy: ${action.status}` }),
          );
          const head = [
            `HTTP/1.1 ${action.status} ${REASONS[action.status] ?? 'Fault'}`,
            'Content-Type: application/json',
            `Content-Length: ${body.length}`,
            'Connection: keep-alive',
          ];
          for (const [k, v] of Object.entries(action.headers ?? {})) head.push(`${k}: ${v}`);
          const bytes = Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), body]);
          rec.bytesDown += bytes.length;
          client.write(bytes);
          mark(rec, 'answered');
          busy = false;
          pump();
          return;
        }
        case 'hold': {
          mark(rec, 'held');
          heldHere.add(rec);
          pendingForwards++;
          let sent = false;
          const go = (): void => {
            if (sent) return;
            sent = true;
            clearTimeout(timer);
            releases.delete(go);
            heldHere.delete(rec);
            pendingForwards--;
            forward(rec, raw, { kind: 'pass' });
          };
          const timer = setTimeout(go, action.ms);
          releases.add(go);
          return;
        }
        default:
          forward(rec, raw, action);
      }
    };

    let head: HttpHead | undefined;
    let parts: Buffer[] = [];
    const framer = new HttpFramer('request', {
      head: (h, b) => {
        head = h;
        parts = [b];
      },
      body: (b) => parts.push(b),
      end: () => {
        const raw = Buffer.concat(parts);
        const [method = '', path = ''] = head!.startLine.split(' ');
        const bodyStart = raw.indexOf('\r\n\r\n') + 4;
        const chunked = (head!.headers['transfer-encoding'] ?? '').includes('chunked');
        const rec: ProxyRecord = {
          n: requests.length + 1,
          connection,
          method,
          path,
          headers: head!.headers,
          body: chunked ? unchunk(raw.subarray(bodyStart)) : raw.subarray(bodyStart).toString('utf8'),
          action: 'pass',
          at: {},
          clientGoneAtForward: false,
          bytesDown: 0,
          keptBytes: 0,
        };
        requests.push(rec);
        mark(rec, 'received');
        waiting.push({ rec, raw });
        pump();
      },
    });
    client.on('data', (b: Buffer) => {
      try {
        framer.feed(b);
      } catch {
        client.destroy();
      }
    });
    const clientClosed = (): void => {
      clients.delete(client);
      clientGone = true;
      for (const w of waiting.splice(0)) mark(w.rec, 'dropped');
      for (const rec of heldHere) mark(rec, 'abandoned');
      for (const ex of inFlight) mark(ex.rec, 'abandoned');
      closeUpstreamIfIdle();
    };
    client.on('close', clientClosed);
    client.on('error', clientClosed);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));

  const release = (): void => {
    for (const go of [...releases]) {
      releases.delete(go);
      go();
    }
    for (const ex of [...flowing]) if (ex.stalled) ex.resume();
  };

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    rule(when, action, times = Number.POSITIVE_INFINITY) {
      const r: Rule = { when, action, left: times, hits: 0 };
      rules.push(r);
      return {
        get hits() {
          return r.hits;
        },
        remove: () => {
          rules = rules.filter((x) => x !== r);
        },
      };
    },
    clearRules() {
      rules = [];
    },
    release,
    stallOpen(where) {
      let n = 0;
      for (const ex of flowing) {
        if (ex.stalled || !where(ex.rec)) continue;
        ex.stalled = true;
        mark(ex.rec, 'stalled');
        n++;
      }
      return n;
    },
    reached(stage, where = () => true, ms = 60_000) {
      const found = requests.find((r) => r.at[stage] !== undefined && where(r));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise<ProxyRecord>((resolve, reject) => {
        const on = (rec: ProxyRecord, s: ProxyStage): void => {
          if (s !== stage || !where(rec)) return;
          clearTimeout(timer);
          events.off('stage', on);
          resolve(rec);
        };
        const timer = setTimeout(() => {
          events.off('stage', on);
          reject(
            new Error(
              `fault proxy: no request matching the predicate reached '${stage}' within ${ms} ms (${requests.length} seen: ${requests
                .slice(-5)
                .map((r) => `${r.method} ${r.path} ${Object.keys(r.at).join('>')}`)
                .join('; ')})`,
            ),
          );
        }, ms);
        events.on('stage', on);
      });
    },
    open: () => clients.size,
    serverConnections: () => upstreams.size,
    close: () =>
      new Promise<void>((done) => {
        rules = [];
        releases.clear();
        for (const s of clients) s.destroy();
        for (const s of upstreams) s.destroy();
        server.close(() => done());
      }),
  };
}

/** The payload of a chunked body (chunk sizes and trailers removed). */
function unchunk(b: Buffer): string {
  const out: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = Number.parseInt(b.subarray(i, eol).toString('latin1').split(';')[0]!, 16);
    if (!(size > 0)) break;
    out.push(b.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out).toString('utf8');
}

/** Predicates for the v20 requests tests aim at. */
export const v20 = {
  /** A new order: POST /v3/accounts/{id}/orders. */
  orderPost: (r: ProxyRequest): boolean =>
    r.method === 'POST' && /^\/v3\/accounts\/[^/]+\/orders$/.test(r.path),
  /** The transaction stream. */
  transactionStream: (r: ProxyRequest): boolean => /\/transactions\/stream/.test(r.path),
  /** The pricing stream. */
  pricingStream: (r: ProxyRequest): boolean => /\/pricing\/stream/.test(r.path),
  /** Any request that changes state (POST, PUT, PATCH, DELETE). */
  write: (r: ProxyRequest): boolean => r.method !== 'GET' && r.method !== 'HEAD',
};
