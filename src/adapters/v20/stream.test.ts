import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../domain/v20/index.ts';
import { V20Error } from './errors.ts';
import { V20Http } from './http.ts';
import { V20Rest } from './rest.ts';
import { newStreamStats, pricingStream, transactionStream } from './stream.ts';

// A small real v20-like server on 127.0.0.1: a transaction log, sinceid, and streams whose
// connections each test scripts. (The full sandbox is exercised in test/adapter/.)
let server: Server;
let base = '';
let log: Transaction[] = [];
let onStream: (
  kind: 'pricing' | 'transactions',
  res: ServerResponse,
  n: number,
  req: IncomingMessage,
) => void = () => undefined;
let streamConnections = 0;
let closedStreams = 0;
/** Called after each sinceid answer has been sent, with the ID asked from. */
let onSinceId: (since: number) => void = () => undefined;

const tx = (id: number): Transaction =>
  ({
    id: String(id),
    time: '2024-01-02T10:00:00.000000000Z',
    type: 'CLIENT_CONFIGURE',
    alias: `a${id}`,
  }) as Transaction;
const addTx = (): Transaction => {
  const t = tx(log.length + 1);
  log.push(t);
  return t;
};
const line = (v: unknown) => `${JSON.stringify(v)}\n`;
const price = (bid: string) => ({
  type: 'PRICE',
  instrument: 'EUR_USD',
  time: '2024-01-02T10:00:00.000000000Z',
  bids: [{ price: bid, liquidity: 1000000 }],
  asks: [{ price: '1.10020', liquidity: 1000000 }],
  closeoutBid: bid,
  closeoutAsk: '1.10020',
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    if (u.pathname.endsWith('/transactions/sinceid')) {
      const since = Number(u.searchParams.get('id'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          transactions: log.filter((t) => Number(t.id) > since),
          lastTransactionID: String(log.length),
        }),
      );
      onSinceId(since);
      return;
    }
    const kind = u.pathname.endsWith('/pricing/stream')
      ? 'pricing'
      : u.pathname.endsWith('/transactions/stream')
        ? 'transactions'
        : undefined;
    if (kind) {
      streamConnections++;
      req.on('close', () => closedStreams++);
      onStream(kind, res, streamConnections, req);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const client = () => {
  let text = '';
  const http = new V20Http({
    baseUrl: base,
    connectionsPerSecond: 50,
    log: pino({ level: 'debug' }, { write: (s: string) => void (text += s) }),
  });
  return { http, rest: new V20Rest(http), logText: () => text };
};

describe('transactionStream', () => {
  it('delivers every transaction after lastTransactionID once, in order, through duplicates, a gap, a malformed line and a drop', async () => {
    log = [];
    for (let i = 0; i < 5; i++) addTx();
    streamConnections = 0;
    // Each step waits for the client's own request that proves it has read what came before, so a
    // busy machine cannot reorder the script (no timers). The connections: 1 carries duplicates, a
    // malformed line and a gap, then drops; 2 carries a heartbeat and one new transaction.
    const conns: ServerResponse[] = [];
    onStream = (_k, res) => {
      res.writeHead(200);
      res.flushHeaders();
      conns.push(res);
    };
    onSinceId = (since) => {
      if (since === 2) {
        // the opening backfill (3, 4, 5) is answered: 4 and 5 again (duplicates), a malformed line,
        // then 6 is missed and 7 arrives (a gap, filled with sinceid)
        const res = conns[0]!;
        res.write(line(log[3]));
        res.write(line(log[4]));
        res.write('{"id":"8","type":\n');
        addTx();
        res.write(line(addTx()));
      } else if (since === 5) {
        // the gap's backfill is answered, so the client has read every line before 7; now 8
        // happens while the connection drops
        addTx();
        conns[0]!.destroy();
      } else if (since === 7) {
        // the reconnect's backfill (8) is answered: a heartbeat, then 9 on the new connection
        const res = conns[1]!;
        res.write(
          line({
            type: 'HEARTBEAT',
            lastTransactionID: String(log.length),
            time: '2024-01-02T10:00:05.000000000Z',
          }),
        );
        res.write(line(addTx()));
      }
    };
    const { http, rest, logText } = client();
    const stats = newStreamStats();
    const got = await firstValueFrom(
      transactionStream(http, rest, 'A', { lastTransactionID: '2', stats, reconnectBaseMs: 10 }).pipe(
        take(7),
        toArray(),
      ),
    );
    await http.close();
    expect(got.map((t) => t.id)).toEqual(['3', '4', '5', '6', '7', '8', '9']);
    expect(stats.malformed).toBe(1);
    expect(stats.reconnects).toBe(1);
    expect(stats.duplicates).toBe(3); // 4 and 5 after the opening backfill, 7 after the gap's backfill
    expect(stats.backfilled).toBe(6); // 3, 4, 5 at the start; 6, 7 at the gap; 8 after the reconnect
    expect(logText()).toContain('malformed transaction line skipped');
    onSinceId = () => undefined;
  });

  it('refuses a lastTransactionID that is not an ID', () => {
    const { http, rest } = client();
    expect(() => transactionStream(http, rest, 'A', { lastTransactionID: 'latest' })).toThrow(
      /decimal integer/,
    );
    return http.close();
  });
});

describe('pricingStream', () => {
  it('reconnects when the watchdog sees no line for watchdogMs, and skips malformed lines', async () => {
    streamConnections = 0;
    onStream = (_k, res, n) => {
      res.writeHead(200);
      if (n === 1) {
        res.write(line(price('1.10000')));
        res.write('not json\n');
        // then silence: no heartbeat
      } else res.write(line(price('1.10005')));
    };
    const { http } = client();
    const stats = newStreamStats();
    const got = await firstValueFrom(
      pricingStream(http, 'A', ['EUR_USD'], { watchdogMs: 150, reconnectBaseMs: 10, stats }).pipe(
        take(2),
        toArray(),
      ),
    );
    await http.close();
    expect(got.map((p) => (p as { closeoutBid: string }).closeoutBid)).toEqual(['1.10000', '1.10005']);
    expect(stats.stalls).toBe(1);
    expect(stats.reconnects).toBe(1);
    expect(stats.malformed).toBe(1);
  });

  it('unsubscribing aborts the HTTP request', async () => {
    streamConnections = 0;
    closedStreams = 0;
    let opened!: () => void;
    const isOpen = new Promise<void>((r) => (opened = r));
    onStream = (_k, res) => {
      res.writeHead(200);
      res.write(line(price('1.10000')));
      opened();
    };
    const { http } = client();
    const sub = pricingStream(http, 'A', ['EUR_USD']).subscribe();
    await isOpen;
    sub.unsubscribe();
    for (let i = 0; i < 100 && closedStreams === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await http.close();
    expect(closedStreams).toBe(1);
    expect(streamConnections).toBe(1);
  });

  it('completes when the client is closed instead of reconnecting forever', async () => {
    streamConnections = 0;
    onStream = (_k, res) => {
      res.writeHead(200);
      res.write(line(price('1.10000')));
    };
    const { http } = client();
    let completed = false;
    const first = new Promise<void>((resolve) => {
      pricingStream(http, 'A', ['EUR_USD'], { reconnectBaseMs: 10 }).subscribe({
        next: () => resolve(),
        complete: () => (completed = true),
      });
    });
    await first;
    await http.close();
    for (let i = 0; i < 100 && !completed; i++) await new Promise((r) => setTimeout(r, 10));
    expect(completed).toBe(true);
    expect(streamConnections).toBe(1);
  });

  it('ends with a typed error on 401 instead of reconnecting', async () => {
    streamConnections = 0;
    onStream = (_k, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errorMessage: 'Insufficient authorization to perform request.' }));
    };
    const { http } = client();
    const err = await firstValueFrom(pricingStream(http, 'A', ['EUR_USD'])).catch((e: unknown) => e);
    await http.close();
    expect(err).toBeInstanceOf(V20Error);
    expect((err as V20Error).status).toBe(401);
    expect(streamConnections).toBe(1);
  });
});
