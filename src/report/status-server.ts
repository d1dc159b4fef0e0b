import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { page } from './html.ts';

/**
 * What the live status page shows: plain figures only. Providers build it from whitelisted fields
 * (never whole transactions or options), so no token or account secret can reach the page.
 */
export interface StatusSnapshot {
  readonly at: string;
  readonly strategy: string;
  readonly mode: string;
  /** The account ID with all but its last group masked. */
  readonly account: string;
  readonly currency: string;
  readonly balance: number;
  readonly nav: number;
  readonly unrealizedPL: number;
  readonly realizedPL: number;
  readonly marginUsed: number | null;
  readonly marginAvailable: number | null;
  readonly trades: readonly {
    id: string;
    instrument: string;
    units: number;
    price: number;
    openTime: string;
    unrealizedPL: number;
  }[];
  readonly positions: readonly {
    instrument: string;
    units: number;
    unrealizedPL: number;
    bid: number | null;
    ask: number | null;
  }[];
  readonly transactions: readonly {
    id: string;
    type: string;
    time: string;
    instrument?: string;
    units?: string;
    price?: string;
    pl?: string;
    reason?: string;
  }[];
  readonly limits: readonly {
    name: string;
    label: string;
    value: number | null;
    limit: number;
    used: number | null;
  }[];
  readonly killSwitch: {
    readonly engaged: boolean;
    readonly file: string | null;
    readonly riskRefusals: number;
    readonly state?: string | null;
  };
  readonly streams: readonly {
    name: string;
    connects: number;
    reconnects: number;
    stalls: number;
    malformed: number;
    lastLineAgoMs: number | null;
  }[];
  /** Orders in doubt (sent, no answer, possibly in transit): nothing else is sent until each is settled. */
  readonly inDoubt?: readonly { intentId: string; instrument: string | null; until: string }[];
  /** Fills the runner did not expect (a second order under one client ID, one it gave up on, one it never placed). */
  readonly unknownFills?: readonly {
    transactionID: string;
    time: string;
    orderID: string;
    clientID: string | null;
    instrument: string;
    units: string;
    why: string;
  }[];
  /**
   * The drift guard (`--shadow --max-drift`): its tolerances, the measures, the fills that drifted and,
   * once one was passed, the breach (which tolerance, which fills) that halted the run.
   */
  /** A portfolio run's books: each strategy's open trades and net units per instrument, and whether it was stopped alone. */
  readonly books?: Readonly<
    Record<
      string,
      {
        readonly positions: Readonly<Record<string, number>>;
        readonly trades: readonly {
          readonly id: string;
          readonly instrument: string;
          readonly units: number;
        }[];
        readonly pendingOrders: number;
        readonly failed?: string;
      }
    >
  >;
  readonly drift?: {
    readonly tolerances: string;
    readonly compared: number;
    readonly pricePips: number;
    readonly missed: number;
    readonly plGap: number;
    readonly drifted: readonly {
      clientID: string;
      instrument: string;
      what: string;
      live?: string;
      sim?: string;
      pips?: number;
      other?: string;
    }[];
    readonly breach: {
      tolerance: string;
      value: number;
      limit: number;
      fills: readonly string[];
      why: string;
    } | null;
  };
}

/** Gives the current snapshot; called on every tick of the status server (about once a second). */
export interface StatusProvider {
  snapshot(): StatusSnapshot;
}

export interface StatusServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

let pageHtml: string | undefined;

/**
 * Serves the read-only live status page on 127.0.0.1 only: `/` the page, `/events` the snapshots as
 * server-sent events (sent when they change, and a comment every 15 s to keep proxies quiet),
 * `/status.json` the snapshot. Requests whose Host is not loopback are refused (DNS rebinding).
 */
export async function startStatusServer(o: {
  port: number;
  provider: StatusProvider;
  everyMs?: number;
}): Promise<StatusServer> {
  // Each client with the last snapshot it was sent: it gets the next one only when it differs.
  const clients = new Map<ServerResponse, string>();
  const every = o.everyMs ?? 1000;
  const take = (): string => {
    try {
      return JSON.stringify(o.provider.snapshot());
    } catch (e) {
      return JSON.stringify({ error: `the status could not be read: ${(e as Error).message}` });
    }
  };
  const tick = (): void => {
    if (clients.size === 0) return;
    const s = take();
    for (const [c, last] of clients) {
      if (s === last) continue;
      clients.set(c, s);
      c.write(`data: ${s}\n\n`);
    }
  };
  const timer = setInterval(tick, every);
  timer.unref();
  const keepAlive = setInterval(() => {
    for (const c of clients.keys()) c.write(': keep-alive\n\n');
  }, 15_000);
  keepAlive.unref();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('the status page answers on 127.0.0.1 only\n');
      return;
    }
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('read-only: GET only\n');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
    if (path === '/') {
      pageHtml ??= page({
        title: 'fxflow run · live status',
        data: { kind: 'status' },
        scripts: ['status.js'],
        charts: false,
      });
      res
        .writeHead(200, {
          ...headers,
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy':
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
        })
        .end(pageHtml);
    } else if (path === '/status.json') {
      res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(take());
    } else if (path === '/events') {
      res.writeHead(200, { ...headers, 'content-type': 'text/event-stream', connection: 'keep-alive' });
      const s = take();
      res.write(`retry: 2000\ndata: ${s}\n\n`);
      clients.set(res, s);
      req.on('close', () => clients.delete(res));
    } else {
      res
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: / (page), /events (server-sent events), /status.json\n');
    }
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      fail(
        Object.assign(
          new Error(
            `--status-port ${o.port}: cannot listen on 127.0.0.1:${o.port} (${e.code ?? e.message}); choose another port, or 0 for any free one`,
          ),
          { code: 'STATUS_PORT' },
        ),
      ),
    );
    server.listen(o.port, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    async close() {
      clearInterval(timer);
      clearInterval(keepAlive);
      for (const c of clients.keys()) c.end();
      clients.clear();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
