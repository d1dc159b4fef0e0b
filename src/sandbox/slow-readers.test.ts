import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './server.ts';
import { call, jsonLines, readLines } from './testkit.ts';

/**
 * Streams with backpressure: price-stream readers that stop reading (real sockets, paused) are
 * closed once their queue passes the bound, as a real server drops a slow consumer, while a reader
 * that keeps reading stays, REST keeps answering and the bytes queued stay bounded.
 */

const WEDNESDAY = '2024-01-03T10:00:00Z';
let sb: Sandbox | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await sb?.close();
  sb = undefined;
});

/** Opens a price stream on a raw socket that reads the first bytes (the 200) and then stops reading. */
async function pausedReader(
  url: string,
  path: string,
): Promise<{ socket: Socket; head: string; closed: Promise<void> }> {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  sockets.push(socket);
  const closed = new Promise<void>((done) => socket.once('close', () => done()));
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`);
  const head = await new Promise<string>((done) => {
    socket.once('data', (d: Buffer) => {
      socket.pause();
      done(d.toString('latin1'));
    });
  });
  return { socket, head, closed };
}

const turn = (): Promise<void> => new Promise((done) => setImmediate(done));

describe('slow stream readers', () => {
  it('a handful of paused readers are closed at the byte bound; a live reader, REST and memory are unaffected', async () => {
    const bound = 64 * 1024;
    sb = await startSandbox({
      feed: false,
      start: WEDNESDAY,
      heartbeatMs: 60_000,
      streams: { maxQueuedBytes: bound, maxBlockedMs: 3_600_000 },
    });
    const id = sb.accountIDs[0]!;
    const path = `/v3/accounts/${id}/pricing/stream?instruments=EUR_USD&snapshot=false`;
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
    const paused = await Promise.all([0, 1, 2, 3, 4].map(() => pausedReader(sb!.url, path)));
    for (const p of paused) expect(p.head).toMatch(/^HTTP\/1\.1 200/);
    const live = await readLines(`${sb.url}${path}`);
    let pushes = 0;
    let maxQueued = 0;
    let slowestRest = 0;
    // Prices until the sandbox has closed every paused reader (bounded: a stream never closed fails the test).
    while (sb.stats().slowStreamsClosed < 5) {
      if (pushes > 400_000)
        throw new Error(`paused readers still open after ${pushes} prices: ${JSON.stringify(sb.stats())}`);
      for (let i = 0; i < 25; i++, pushes++)
        sb.pushPrice({
          instrument: 'EUR_USD',
          bid: 1.1 + (pushes % 50) * 1e-5,
          ask: 1.1002 + (pushes % 50) * 1e-5,
        });
      maxQueued = Math.max(maxQueued, sb.stats().streamQueuedBytes);
      if (pushes % 2000 === 0) {
        const t0 = performance.now();
        const r = await call('GET', `${sb.url}/v3/accounts/${id}/summary`);
        expect(r.status).toBe(200);
        slowestRest = Math.max(slowestRest, performance.now() - t0);
      }
      await turn();
    }
    const st = sb.stats();
    expect(st.slowStreamsClosed).toBe(5);
    // The readers see it when they read again: what was queued, then the end of the connection.
    for (const p of paused) p.socket.resume();
    await Promise.all(paused.map((p) => p.closed));
    // Memory bounded: never more than the bound (plus the line that crossed it) per stream queued.
    expect(maxQueued).toBeLessThanOrEqual(6 * (bound + 1024));
    // The reader that reads is still served, every line whole.
    expect(live.ended).toBe(false);
    const n = live.lines.length;
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.2, ask: 1.2002 });
    await live.until(() => live.lines.length > n, 5000, 'a line after the slow readers were closed');
    expect(jsonLines(live.lines).length).toBe(live.lines.length);
    expect(jsonLines(live.lines).at(-1)).toMatchObject({ type: 'PRICE', closeoutBid: '1.20000' });
    expect(st.openStreams).toBe(1);
    live.close();
    expect(slowestRest).toBeLessThan(5000);
  });

  it('a paused reader is closed once its socket refused writes for maxBlockedMs, however little is queued', async () => {
    sb = await startSandbox({
      feed: false,
      start: WEDNESDAY,
      heartbeatMs: 60_000,
      streams: { maxQueuedBytes: 1 << 30, maxBlockedMs: 50 },
    });
    const path = `/v3/accounts/${sb.accountIDs[0]}/pricing/stream?instruments=EUR_USD&snapshot=false`;
    sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
    const p = await pausedReader(sb.url, path);
    for (let pushes = 0; sb.stats().slowStreamsClosed === 0; pushes += 100) {
      if (pushes > 2_000_000) throw new Error('the paused reader was never closed');
      for (let i = 0; i < 100; i++) sb.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
      await turn();
    }
    expect(sb.stats().slowStreamsClosed).toBe(1);
    expect(sb.stats().openStreams).toBe(0);
    p.socket.resume();
    await p.closed;
  });

  it('rejects a bound that is not a positive number, naming the option', async () => {
    await expect(startSandbox({ feed: false, streams: { maxQueuedBytes: 0 } })).rejects.toThrow(
      /streams\.maxQueuedBytes must be a number > 0 \(got 0\)/,
    );
  });
});
