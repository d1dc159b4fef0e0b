import { createServer, request, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request/response pair as it crossed the proxy: the exact bytes the upstream server sent. */
export interface Exchange {
  method: string;
  /** Path and query, as the client sent them (`/v3/accounts/.../orders?state=ALL`). */
  path: string;
  status: number;
  headers: IncomingHttpHeaders;
  /** The raw response body so far (a stream grows until it ends or the proxy cuts it). */
  body: Buffer[];
  /** True once the upstream response ended on its own. */
  complete: boolean;
}

/** A running proxy: where to point a client, what it saw, and how to stop it. */
export interface RecordingProxy {
  hostname: string;
  port: number;
  exchanges: Exchange[];
  /** Cuts every response still open (streams), so clients see the connection drop. */
  cutOpenResponses(): void;
  close(): Promise<void>;
}

/** The text of an exchange's body (UTF-8). */
export function bodyText(e: Exchange): string {
  return Buffer.concat(e.body).toString('utf8');
}

/**
 * A recording HTTP proxy on 127.0.0.1 (port 0) in front of `target` (an `http://127.0.0.1:port` URL).
 * Use it in contract tests to see exactly what a server served to a third-party client: status,
 * headers and body bytes are forwarded unchanged and recorded in `exchanges`, in arrival order.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const up = new URL(target);
  if (up.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(up.hostname)) {
    throw new Error(`recording proxy: target ${target} must be http on loopback`);
  }
  const exchanges: Exchange[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const upstream = request(
      {
        hostname: up.hostname,
        port: up.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: up.host },
      },
      (ures) => {
        const e: Exchange = {
          method: req.method ?? 'GET',
          path: req.url ?? '/',
          status: ures.statusCode ?? 0,
          headers: ures.headers,
          body: [],
          complete: false,
        };
        exchanges.push(e);
        res.writeHead(ures.statusCode ?? 502, ures.headers);
        open.add(res);
        ures.on('data', (c: Buffer) => {
          e.body.push(c);
          res.write(c);
        });
        ures.on('end', () => {
          e.complete = true;
          open.delete(res);
          res.end();
        });
        ures.on('error', () => res.destroy());
        res.on('close', () => {
          open.delete(res);
          ures.destroy();
        });
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`recording proxy: upstream failed: ${err.message}`);
      } else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    hostname: '127.0.0.1',
    port,
    exchanges,
    cutOpenResponses() {
      for (const r of open) r.destroy();
      open.clear();
    },
    close() {
      for (const r of open) r.destroy();
      server.closeAllConnections();
      return new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
