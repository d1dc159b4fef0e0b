/**
 * Load run of `fxflow sandbox`: places N market orders (default 1,000,000) against a sandbox
 * process on loopback and reports the process's memory and the worst event-loop delay as it goes,
 * then the large reads that used to block (`/changes` since 1, the transaction pages). A script,
 * not a test: its figures depend on the machine.
 *
 *   node --import tsx test/bench/sandbox-load.ts [--orders 1000000] [--concurrency 32] [--keep 100000] [--every 100000]
 *
 * The sandbox runs as its own process (`bin/fxflow.js sandbox --manual`), so its RSS is its own. It
 * reports memory and the event-loop delay (perf_hooks histogram, 10 ms resolution; max since the
 * last sample) on `GET /sandbox/stats?reset=true`. Orders alternate buy and sell 1 unit of EUR_USD,
 * so trades open and close all the time: orders, fills, closed trades and transactions pile up.
 *
 *   node --import tsx test/bench/sandbox-load.ts --unread-streams 300 [--seconds 45] [--speed 3000]
 *
 * Slow readers instead: a replaying sandbox (`--speed` simulated ms per real ms) and N price streams
 * (EUR_USD, GBP_USD, USD_JPY) on raw sockets that read the first bytes and then never read again.
 * Every second for `--seconds`: the time a health request (GET /sandbox/stats) takes, the
 * sandbox's RSS, its event loop's worst delay, and how many streams it has closed as slow
 * consumers. Done when RSS stays under 600 MB and every health request is answered within 2 s.
 */
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

const ROOT = resolve(import.meta.dirname, '../..');

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1)
    throw new Error(`--${name} must be a whole number >= 1 (got ${process.argv[i + 1]})`);
  return v;
}

interface Stats {
  memory: { rssBytes: number; heapUsedBytes: number };
  eventLoopDelayMs: { max: number; p99: number };
  slowestHandler: { ms: number; cpuMs: number; request: string };
  transactions: Record<string, { kept: number; oldestID: string; lastID: string }>;
}

const mb = (b: number): string => `${(b / 1048576).toFixed(0)} MB`;

/** Starts `fxflow sandbox` with `args` as its own process; its URL once it listens. */
async function sandbox(args: string[]): Promise<{ child: ReturnType<typeof spawn>; url: string }> {
  const child = spawn(process.execPath, ['bin/fxflow.js', 'sandbox', '--port', '0', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const url = await new Promise<string>((done, fail) => {
    const t = setTimeout(() => fail(new Error(`no listening line within 60 s: ${out}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(t);
        done(m[1]!);
      }
    });
    child.on('exit', (code) => fail(new Error(`sandbox exited (${code}) before listening: ${out}`)));
  });
  return { child, url };
}

async function main(): Promise<void> {
  if (process.argv.includes('--unread-streams')) return unreadStreams();
  const orders = arg('orders', 1_000_000);
  const concurrency = arg('concurrency', 32);
  const keep = arg('keep', 100_000);
  const every = arg('every', 100_000);
  const { child, url } = await sandbox(['--manual', '--keep-transactions', String(keep)]);
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const get = async <T>(path: string): Promise<{ status: number; body: T; ms: number }> => {
    const t0 = performance.now();
    const r = await pool.request({ method: 'GET', path });
    const text = await r.body.text();
    return { status: r.statusCode, body: JSON.parse(text) as T, ms: performance.now() - t0 };
  };
  const stats = async (): Promise<Stats> => (await get<Stats>('/sandbox/stats?reset=true')).body;
  const accountID = (await get<{ accounts: { id: string }[] }>('/v3/accounts')).body.accounts[0]!.id;
  const A = `/v3/accounts/${accountID}`;

  const first = await stats();
  console.log(
    `sandbox ${url}, keep ${keep} transactions; start: RSS ${mb(first.memory.rssBytes)}, heap ${mb(first.memory.heapUsedBytes)}`,
  );
  console.log('orders\tRSS\theap\tloop max ms\tloop p99 ms\tslowest handler ms (wall / CPU)\torders/s');
  const rows: {
    orders: number;
    rss: number;
    heap: number;
    loopMax: number;
    loopP99: number;
    handler: number;
    handlerCpu: number;
    rate: number;
  }[] = [];
  let placed = 0;
  let failed = 0;
  let mark = performance.now();
  let markPlaced = 0;
  const bodies = [
    JSON.stringify({ order: { type: 'MARKET', instrument: 'EUR_USD', units: '1' } }),
    JSON.stringify({ order: { type: 'MARKET', instrument: 'EUR_USD', units: '-1' } }),
  ];
  let next = 0;
  let sampling: Promise<void> = Promise.resolve();
  const worker = async (): Promise<void> => {
    while (next < orders) {
      const k = next++;
      const r = await pool.request({
        method: 'POST',
        path: `${A}/orders`,
        headers: { 'content-type': 'application/json' },
        body: bodies[k % 2],
      });
      await r.body.dump();
      if (r.statusCode !== 201) failed++;
      placed++;
      if (placed % every === 0) {
        const n = placed;
        const now = performance.now();
        const rate = ((n - markPlaced) * 1000) / (now - mark);
        mark = now;
        markPlaced = n;
        sampling = sampling.then(async () => {
          const s = await stats();
          rows.push({
            orders: n,
            rss: s.memory.rssBytes,
            heap: s.memory.heapUsedBytes,
            loopMax: s.eventLoopDelayMs.max,
            loopP99: s.eventLoopDelayMs.p99,
            handler: s.slowestHandler.ms,
            handlerCpu: s.slowestHandler.cpuMs,
            rate,
          });
          console.log(
            `${n}\t${mb(s.memory.rssBytes)}\t${mb(s.memory.heapUsedBytes)}\t${s.eventLoopDelayMs.max.toFixed(1)}\t${s.eventLoopDelayMs.p99.toFixed(1)}\t${s.slowestHandler.ms.toFixed(1)} / ${s.slowestHandler.cpuMs.toFixed(1)}\t${rate.toFixed(0)}`,
          );
        });
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  await sampling;
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `${placed} orders in ${seconds.toFixed(0)} s (${(placed / seconds).toFixed(0)}/s), ${failed} not 201`,
  );

  // The large reads, one at a time, each with the event-loop delay of its own window.
  await stats();
  const reads: [string, string][] = [
    ['changes since 1', `${A}/changes?sinceTransactionID=1`],
    ['changes, last 500', ''],
    ['transaction pages', `${A}/transactions?pageSize=1000`],
    ['orders ALL (500)', `${A}/orders?state=ALL&count=500`],
    ['trades CLOSED (500)', `${A}/trades?state=CLOSED&count=500`],
    ['account', A],
  ];
  const last = Number((await get<{ lastTransactionID: string }>(A)).body.lastTransactionID);
  reads[1] = ['changes, last 500', `${A}/changes?sinceTransactionID=${last - 500}`];
  for (const [what, path] of reads) {
    const r = await get<Record<string, unknown>>(path);
    const s = await stats();
    console.log(
      `${what}: ${r.status} in ${r.ms.toFixed(1)} ms (handler ${s.slowestHandler.ms.toFixed(1)} ms wall, ${s.slowestHandler.cpuMs.toFixed(1)} ms CPU), loop max ${s.eventLoopDelayMs.max.toFixed(1)} ms${r.status >= 400 ? ` (${String(r.body.errorMessage).slice(0, 120)})` : ''}`,
    );
  }
  const end = await stats();
  console.log(
    `end: RSS ${mb(end.memory.rssBytes)}, heap ${mb(end.memory.heapUsedBytes)}, transactions kept ${JSON.stringify(end.transactions[accountID])}`,
  );
  const worst = rows.reduce((m, r) => Math.max(m, r.loopMax), 0);
  const handler = rows.reduce((m, r) => Math.max(m, r.handler), 0);
  const handlerCpu = rows.reduce((m, r) => Math.max(m, r.handlerCpu), 0);
  console.log(
    `during the orders: worst event-loop delay ${worst.toFixed(1)} ms (${concurrency} requests in flight: one loop turn serves many), slowest single handler ${handler.toFixed(1)} ms wall / ${handlerCpu.toFixed(1)} ms CPU; RSS range ${mb(Math.min(...rows.map((r) => r.rss)))} - ${mb(Math.max(...rows.map((r) => r.rss)))}`,
  );
  await pool.close();
  child.kill('SIGTERM');
}

/** N price streams that never read, against a fast replay: the sandbox's memory and responsiveness. */
async function unreadStreams(): Promise<void> {
  const n = arg('unread-streams', 300);
  const seconds = arg('seconds', 45);
  const speed = arg('speed', 3000);
  const { child, url } = await sandbox(['--speed', String(speed)]);
  const u = new URL(url);
  const health = async (): Promise<{
    ms: number;
    body: (Stats & { slowStreamsClosed: number; openStreams: number; streamQueuedBytes: number }) | undefined;
  }> => {
    const t0 = performance.now();
    try {
      const r = await fetch(`${url}/sandbox/stats?reset=true`, { signal: AbortSignal.timeout(15_000) });
      return { ms: performance.now() - t0, body: (await r.json()) as never };
    } catch {
      return { ms: performance.now() - t0, body: undefined };
    }
  };
  const accountID = ((await (await fetch(`${url}/v3/accounts`)).json()) as { accounts: { id: string }[] })
    .accounts[0]!.id;
  const path = `/v3/accounts/${accountID}/pricing/stream?instruments=EUR_USD,GBP_USD,USD_JPY`;
  const start = await health();
  console.log(`sandbox ${url} at speed ${speed}; start: RSS ${mb(start.body!.memory.rssBytes)}`);
  const sockets: Socket[] = [];
  let opened = 0;
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((done) => {
          const s = connect(Number(u.port), u.hostname);
          sockets.push(s);
          s.on('error', () => {});
          s.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`);
          // The first bytes (the 200 and a snapshot), then never read again.
          s.once('data', () => {
            s.pause();
            opened++;
            done();
          });
        }),
    ),
  );
  console.log(`${opened} streams open, none read from now on`);
  console.log('s\thealth ms\tRSS\theap\tloop max ms\tstreams open\tclosed as slow\tqueued');
  let worstHealth = 0;
  let worstRss = 0;
  let worstLoop = 0;
  let unanswered = 0;
  let last: Awaited<ReturnType<typeof health>>['body'];
  const t0 = performance.now();
  for (let i = 1; i <= seconds; i++) {
    // One sample a second (the next one starts a second after the previous started).
    const wait = t0 + i * 1000 - performance.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    const h = await health();
    worstHealth = Math.max(worstHealth, h.ms);
    if (!h.body) {
      unanswered++;
      console.log(`${i}\t${h.ms.toFixed(0)} (no answer)`);
      continue;
    }
    last = h.body;
    worstRss = Math.max(worstRss, h.body.memory.rssBytes);
    worstLoop = Math.max(worstLoop, h.body.eventLoopDelayMs.max);
    console.log(
      `${i}\t${h.ms.toFixed(0)}\t${mb(h.body.memory.rssBytes)}\t${mb(h.body.memory.heapUsedBytes)}\t${h.body.eventLoopDelayMs.max.toFixed(0)}\t${h.body.openStreams}\t${h.body.slowStreamsClosed}\t${mb(h.body.streamQueuedBytes)}`,
    );
  }
  const ok = worstRss < 600 * 1048576 && worstHealth < 2000 && unanswered === 0;
  console.log(
    `${n} unread streams for ${seconds} s at speed ${speed}: worst RSS ${mb(worstRss)}, slowest health request ${worstHealth.toFixed(0)} ms${unanswered ? ` (${unanswered} unanswered)` : ''}, worst event-loop delay ${worstLoop.toFixed(0)} ms, ${last?.slowStreamsClosed ?? '?'} streams closed as slow consumers: ${ok ? 'done (RSS < 600 MB, health < 2 s)' : 'NOT done'}`,
  );
  for (const s of sockets) s.destroy();
  child.kill('SIGTERM');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
