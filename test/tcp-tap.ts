// A TCP relay on 127.0.0.1 in front of a loopback server (the sandbox), for tests that must see
// what happens to connections: when each one opened and closed, which side closed it, and how many
// bytes went each way. Bytes pass unchanged; nothing is parsed or answered by the tap itself.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** One client connection through the tap (and its upstream twin). */
export interface TapConnection {
  /** `performance.now()` when the client connected. */
  readonly openedAt: number;
  /** `performance.now()` when the first side closed; undefined while open. */
  closedAt: number | undefined;
  /** Which side closed first: the client (e.g. an aborted request) or the server. */
  closedBy: 'client' | 'server' | undefined;
  /** Bytes the client sent (requests) and the server sent back (answers). */
  bytesUp: number;
  bytesDown: number;
  /** The first 64 KiB the client sent (request lines and headers), latin1. */
  sent: string;
}

/** A running tap: the URL to give a client, what it saw, and how to stop it. */
export interface TcpTap {
  /** http://127.0.0.1:PORT, forwarding to the target. */
  readonly url: string;
  readonly connections: TapConnection[];
  /** Connections still open (client side). */
  open(): number;
  /**
   * Holds back what the server sends on connections whose first request matches `where` (e.g. a
   * stream that lags) until `release()`; the bytes are kept and then delivered in order.
   */
  hold(where: (request: string) => boolean): void;
  release(): void;
  /** Resolves when connection `i` has closed (the close crosses the event loop after a client's abort); rejects after `ms`. */
  closed(i: number, ms?: number): Promise<TapConnection>;
  close(): Promise<void>;
}

/**
 * Starts a tap forwarding to `target` (an `http://127.0.0.1:port` URL). Closing either side of a
 * connection closes the other at once, so a client that drops its socket is seen by the server.
 */
export async function startTcpTap(target: string): Promise<TcpTap> {
  const up = new URL(target);
  if (up.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(up.hostname))
    throw new Error(`tcp tap: target ${target} must be http on 127.0.0.1`);
  const port = Number(up.port);
  const connections: TapConnection[] = [];
  const live = new Set<Socket>();
  let holding: ((request: string) => boolean) | undefined;
  const held: { client: Socket; b: Buffer }[] = [];
  const server = createServer((client) => {
    const c: TapConnection = {
      openedAt: performance.now(),
      closedAt: undefined,
      closedBy: undefined,
      bytesUp: 0,
      bytesDown: 0,
      sent: '',
    };
    connections.push(c);
    live.add(client);
    const upstream = connect(port, up.hostname);
    const ended = (by: 'client' | 'server'): void => {
      if (c.closedBy === undefined) {
        c.closedBy = by;
        c.closedAt = performance.now();
      }
      client.destroy();
      upstream.destroy();
      live.delete(client);
    };
    client.on('data', (b: Buffer) => {
      c.bytesUp += b.length;
      if (c.sent.length < 65_536) c.sent += b.toString('latin1');
      upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => {
      c.bytesDown += b.length;
      if (holding?.(c.sent)) held.push({ client, b });
      else client.write(b);
    });
    client.on('close', () => ended('client'));
    client.on('end', () => ended('client'));
    client.on('error', () => ended('client'));
    upstream.on('close', () => ended('server'));
    upstream.on('end', () => ended('server'));
    upstream.on('error', () => ended('server'));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    open: () => live.size,
    hold(where) {
      holding = where;
    },
    release() {
      holding = undefined;
      for (const { client, b } of held.splice(0)) if (!client.destroyed) client.write(b);
    },
    async closed(i, ms = 2000) {
      const t0 = performance.now();
      for (;;) {
        const c = connections[i];
        if (c?.closedBy !== undefined) return c;
        if (performance.now() - t0 > ms)
          throw new Error(`tcp tap: connection #${i} still open after ${ms} ms (${connections.length} seen)`);
        await new Promise((r) => setTimeout(r, 2));
      }
    },
    close: () =>
      new Promise<void>((done) => {
        for (const s of live) s.destroy();
        server.close(() => done());
      }),
  };
}
