import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxOptions } from '../cli/sandbox.ts';
import { call } from './testkit.ts';

// `fxflow sandbox --slow-stream-bytes / --slow-stream-seconds`: the slow-consumer bounds of
// startSandbox({ streams }) from the command line, checked on the real process with a real socket
// that stops reading.

const ROOT = resolve(import.meta.dirname, '../..');
const children: ChildProcess[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGTERM');
});

/** Starts `fxflow sandbox` with `args`; resolves with its URL once it listens. */
async function sandbox(args: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, ['bin/fxflow.js', 'sandbox', '--port', '0', '--manual', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return new Promise<string>((done, fail) => {
    child.on('exit', (code) => fail(new Error(`fxflow sandbox exited ${code}: ${err}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /fxflow sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) done(m[1]!);
    });
  });
}

/** Runs `fxflow sandbox` with flags it must refuse: its exit code and stderr. */
async function refused(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['bin/fxflow.js', 'sandbox', '--port', '0', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
  return { code, stderr };
}

/** A price stream on a raw socket that reads the response head and then stops reading. */
async function pausedReader(url: string): Promise<void> {
  const accounts = await call('GET', `${url}/v3/accounts`);
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  sockets.push(socket);
  socket.on('error', () => {});
  socket.write(
    `GET /v3/accounts/${accounts.body.accounts[0].id}/pricing/stream?instruments=EUR_USD&snapshot=false HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`,
  );
  await new Promise<void>((done) =>
    socket.once('data', () => {
      socket.pause();
      done();
    }),
  );
}

interface Stats {
  slowStreamsClosed: number;
  openStreams: number;
  streamQueuedBytes: number;
}
const stats = async (url: string): Promise<Stats> => (await call<Stats>('GET', `${url}/sandbox/stats`)).body;
const batch = Array.from({ length: 100 }, (_, i) => ({
  instrument: 'EUR_USD',
  bid: 1.1 + i * 1e-5,
  ask: 1.1002 + i * 1e-5,
}));

describe('fxflow sandbox --slow-stream-bytes / --slow-stream-seconds', () => {
  it('--slow-stream-bytes: a reader that stops reading is closed once that many bytes wait for it', async () => {
    const bound = 65_536;
    // Time cannot close it here: an hour unwritable.
    const url = await sandbox([
      '--heartbeat-ms',
      '60000',
      '--slow-stream-bytes',
      String(bound),
      '--slow-stream-seconds',
      '3600',
    ]);
    await pausedReader(url);
    let most = 0;
    for (let n = 0; (await stats(url)).slowStreamsClosed === 0; n++) {
      if (n > 20_000) throw new Error(`the paused reader was never closed (at most ${most} bytes queued)`);
      await call('POST', `${url}/sandbox/prices`, batch);
      most = Math.max(most, (await stats(url)).streamQueuedBytes);
    }
    const end = await stats(url);
    console.log(`[sandbox --slow-stream-bytes ${bound}] closed with at most ${most} bytes seen queued`);
    expect(end.slowStreamsClosed).toBe(1);
    expect(end.openStreams).toBe(0);
    // One batch of lines past the bound at most: far below the default 512 KiB.
    expect(most).toBeLessThan(2 * bound);
  }, 60_000);

  it('--slow-stream-seconds: a reader whose socket refuses writes that long is closed, however little waits', async () => {
    const url = await sandbox([
      '--heartbeat-ms',
      '50',
      '--slow-stream-seconds',
      '0.3',
      '--slow-stream-bytes',
      String(2 ** 30),
    ]);
    await pausedReader(url);
    // Fill the socket until the sandbox holds lines for it (its writes are refused), then only heartbeats.
    for (let n = 0; (await stats(url)).streamQueuedBytes === 0; n++) {
      if (n > 20_000) throw new Error('the paused reader never filled its socket');
      await call('POST', `${url}/sandbox/prices`, batch);
    }
    const t0 = Date.now();
    while ((await stats(url)).slowStreamsClosed === 0) {
      // Half the default 10 s: only the flag's 0.3 s closes it in time.
      if (Date.now() - t0 > 5000) throw new Error('the paused reader was not closed within 5 s');
      await new Promise((done) => setTimeout(done, 50));
    }
    const waited = Date.now() - t0;
    console.log(`[sandbox --slow-stream-seconds 0.3] closed ${waited} ms after its socket filled`);
    expect((await stats(url)).openStreams).toBe(0);
  }, 60_000);

  it('refuses bad values, naming the flag and the fix', async () => {
    const bytes = await refused(['--slow-stream-bytes', '1.5']);
    expect(bytes.code).not.toBe(0);
    expect(bytes.stderr).toMatch(
      /--slow-stream-bytes must be a whole number of bytes >= 1 \(got 1\.5\); leave it out for the default 524288/,
    );
    const secs = await refused(['--slow-stream-seconds', '0']);
    expect(secs.code).not.toBe(0);
    expect(secs.stderr).toMatch(/--slow-stream-seconds must be a number of seconds > 0 \(got 0\)/);
    expect(secs.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(sandboxOptions({ port: 0, slowStreamBytes: 4096, slowStreamSeconds: 2.5 }, {}).streams).toEqual({
      maxQueuedBytes: 4096,
      maxBlockedMs: 2500,
    });
    expect(sandboxOptions({ port: 0 }, {}).streams).toBeUndefined();
  }, 60_000);
});
