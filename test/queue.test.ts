import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The queue against a real Redis: this test starts its own redis-server on a free port (no disk).
const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/fxflow.js');
const HAS_REDIS = spawnSync('redis-server', ['--version']).status === 0;
if (!HAS_REDIS)
  console.warn('test/queue.test.ts: SKIPPED: no redis-server on this machine (apt-get install redis-server)');
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-queue-'));
const FIXTURE = join(ROOT, 'src/research/fixtures/hang-once.ts');
const SWEEP = [
  'optimize',
  FIXTURE,
  '--param',
  'fast=4,6,8',
  '--param',
  'slow=20,30',
  '--from',
  '2024-01-01',
  '--to',
  '2024-03-01',
];

interface Proc {
  readonly child: ChildProcess;
  readonly exit: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

const started: ChildProcess[] = [];

function fxflow(args: readonly string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
    child.on('close', (code) => res({ code, stdout, stderr })),
  );
  return { child, exit };
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** Resolves once `test(files in dir)` holds (waits on file-system events, no timer). */
function dirReached(dir: string, test: (names: string[]) => boolean): Promise<string[]> {
  return new Promise((res) => {
    const check = (): boolean => {
      const names = existsSync(dir) ? readdirSync(dir) : [];
      if (!test(names)) return false;
      w.close();
      res(names);
      return true;
    };
    const w = watch(dir, () => void check());
    check();
  });
}

/** Starts a redis-server on `port` (no disk); resolves once it accepts connections. */
function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  started.push(child);
  return new Promise<ChildProcess>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) res(child);
    });
    child.once('exit', (code) => rej(new Error(`redis-server exited (${code}): ${out}`)));
  });
}

let redis: ChildProcess | undefined;
let url = '';

beforeAll(async () => {
  if (!HAS_REDIS) return;
  const port = await freePort();
  redis = await startRedis(port);
  url = `redis://127.0.0.1:${port}/0`;
}, 60_000);

let reference: Promise<string> | undefined;
/** The table a local sweep (worker threads, no queue) writes: what every queued sweep must end with. */
function referenceTable(): Promise<string> {
  return (reference ??= (async () => {
    const ref = join(tmp, 'ref');
    const local = await fxflow([...SWEEP, '--workers', '1', '--out', ref]).exit;
    expect(local.stderr).toBe('');
    expect(local.code).toBe(0);
    return readFileSync(join(ref, 'trials.csv'), 'utf8');
  })());
}

/** The lines of a file in `dir` (none when it is missing). */
const linesOf = (dir: string, name: string): string[] =>
  existsSync(join(dir, name))
    ? readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];

afterAll(() => {
  // A test that failed half-way leaves no process behind.
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  redis?.kill('SIGKILL');
});

describe.skipIf(!HAS_REDIS)('fxflow optimize --queue / fxflow worker (real Redis)', () => {
  it('a worker killed mid-trial and a coordinator killed and restarted: every trial recorded once, the table of a local sweep', async () => {
    const refTable = await referenceTable();

    const hang = join(tmp, 'hang');
    mkdirSync(hang);
    const env = { FXFLOW_HANG_DIR: hang, FXFLOW_HANG_FAST: '6' };
    const q = `${url}?name=kill`;
    const out = join(tmp, 'queued');
    const coordinator1 = fxflow([...SWEEP, '--queue', q, '--out', out], env);
    const worker1 = fxflow(['worker', '--queue', q, '--threads', '1', '--lock-ms', '2000'], env);
    // Worker 1 takes trials in order and hangs in the first trial with fast=6: kill -9 it there.
    const names = await dirReached(hang, (n) => n.some((x) => x.startsWith('hanging-')));
    expect(names.find((x) => x.startsWith('hanging-'))).toBe(`hanging-${worker1.child.pid}`);
    worker1.child.kill('SIGKILL');
    // And the coordinator too; started again, the same command picks up.
    coordinator1.child.kill('SIGKILL');
    await Promise.all([worker1.exit, coordinator1.exit]);
    const coordinator2 = fxflow([...SWEEP, '--queue', q, '--out', out], env);
    const worker2 = fxflow(['worker', '--queue', q, '--threads', '1', '--lock-ms', '2000'], env);
    const done = await coordinator2.exit;
    worker2.child.kill('SIGTERM');
    const w2 = await worker2.exit;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    // The hung trial ran again on worker 2 (its lock expired, BullMQ moved it back to the queue).
    expect(w2.stderr).toMatch(/trial \d+ of hang-once-\w+ done/);
    const table = readFileSync(join(out, 'trials.csv'), 'utf8');
    expect(table).toBe(refTable);
    const ids = readFileSync(join(out, 'trials.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids.length).toBe(6);
    expect(new Set(ids).size).toBe(6);
  }, 200_000);

  it('one `fxflow worker --threads 2` started after 20 trials wait: the sweep is prepared once, 20 of 20 succeed, the table (and best trial) of a local --workers 1 sweep', async () => {
    const grid = [
      'optimize',
      FIXTURE,
      '--param',
      'fast=4,6,8,10,12',
      '--param',
      'slow=20,30,40,50',
      '--from',
      '2024-01-01',
      '--to',
      '2024-03-01',
    ];
    const ref = join(tmp, 'late-ref');
    const local = await fxflow([...grid, '--workers', '1', '--out', ref, '--json']).exit;
    expect(local.code).toBe(0);
    const q = `${url}?name=late`;
    const out = join(tmp, 'late');
    // The test listens to the queue's events: the worker starts once all 20 trials wait.
    const events = new QueueEvents('late', {
      connection: { host: '127.0.0.1', port: Number(new URL(url).port) },
    });
    await events.waitUntilReady();
    let waiting = 0;
    const allWaiting = new Promise<void>((res) => events.on('waiting', () => ++waiting === 20 && res()));
    const coordinator = fxflow([...grid, '--queue', q, '--out', out, '--json']);
    await allWaiting;
    await events.close();
    const worker = fxflow(['worker', '--queue', q, '--threads', '2']);
    const done = await coordinator.exit;
    worker.child.kill('SIGTERM');
    const w = await worker.exit;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    // Prepared once: one line naming the sweep's data check.
    expect(w.stderr.match(/candles checked against the sweep's data hash/g)).toHaveLength(1);
    expect(w.stderr).not.toMatch(/failed/);
    const r = JSON.parse(done.stdout) as {
      trials: number;
      failed: number;
      best: { params: unknown; objective: number };
    };
    const l = JSON.parse(local.stdout) as typeof r;
    expect(r.trials).toBe(20);
    expect(r.failed).toBe(0);
    expect(r.best).toEqual(l.best);
    expect(readFileSync(join(out, 'trials.csv'), 'utf8')).toBe(readFileSync(join(ref, 'trials.csv'), 'utf8'));
  }, 200_000);

  it('Redis lost mid-sweep: the coordinator and the worker stop with one message each, nothing recorded is lost, and the same command finishes the sweep', async () => {
    const refTable = await referenceTable();
    const port = await freePort();
    let lone = await startRedis(port);
    const q = `redis://127.0.0.1:${port}/0`;
    const hang = join(tmp, 'lost-hang');
    const out = join(tmp, 'lost');
    mkdirSync(hang);
    mkdirSync(out);
    const env = { FXFLOW_HANG_DIR: hang, FXFLOW_HANG_FAST: '6' };
    const command = [...SWEEP, '--queue', q, '--out', out, '--reconnect-ms', '1000'];
    const workerCommand = [
      'worker',
      '--queue',
      q,
      '--threads',
      '1',
      '--lock-ms',
      '2000',
      '--reconnect-ms',
      '1000',
    ];
    const coordinator = fxflow(command, env);
    const worker = fxflow(workerCommand, env);
    // The worker ran trials 0 and 1 (fast=4), the coordinator recorded them, and trial 2 (fast=6) hangs: Redis dies now.
    await dirReached(hang, (n) => n.some((x) => x.startsWith('hanging-')));
    await dirReached(out, () => linesOf(out, 'trials.jsonl').length === 2);
    lone.kill('SIGKILL');
    const killedAt = performance.now();
    const workerGone = worker.exit.then(() => performance.now() - killedAt);
    const [c, w] = await Promise.all([coordinator.exit, worker.exit]);
    // The worker gives up after its 1 s of reconnect delays and is gone within 2 s of that.
    expect(await workerGone).toBeLessThan(1000 + 2000);
    expect(c.code).toBe(1);
    expect(c.stderr.trim().split('\n')).toHaveLength(1);
    expect(c.stderr.trim()).toBe(
      `fxflow: lost Redis at ${q} (ECONNREFUSED) and could not reach it again in 1 s: the sweep stopped. Nothing recorded is lost (2 trials in ${out}); it is resumable: when Redis is back, run the same command again (fxflow ${command.join(' ')}) and it runs only the missing trials`,
    );
    expect(w.code).toBe(1);
    expect(w.stderr.trim().split('\n').pop()).toBe(
      `fxflow: lost Redis at ${q} (ECONNREFUSED) and could not reach it again in 1 s: this worker stopped after 2 trials. Nothing recorded is lost: a trial it was running goes back to the queue once its lock lapses (--lock-ms 2000) and runs on another worker; when Redis is back, start this worker again (fxflow ${workerCommand.join(' ')})`,
    );
    expect(linesOf(out, 'trials.jsonl')).toHaveLength(2);

    // Redis is back (empty: it kept nothing on disk): the same commands finish the sweep.
    lone = await startRedis(port);
    const again = fxflow(command, env);
    const worker2 = fxflow(workerCommand, env);
    const done = await again.exit;
    worker2.child.kill('SIGTERM');
    await worker2.exit;
    lone.kill('SIGKILL');
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/ran 4 now \(2 already in the folder\)/);
    expect(readFileSync(join(out, 'trials.csv'), 'utf8')).toBe(refTable);
  }, 200_000);

  for (const chaos of ['restarted empty', 'flushed'] as const) {
    it(`Redis ${chaos} mid-sweep (inside the reconnect window): the coordinator queues again what Redis lost, and the sweep ends identical to an uninterrupted one`, async () => {
      const refTable = await referenceTable();
      const port = await freePort();
      let own = await startRedis(port);
      const q = `redis://127.0.0.1:${port}/0`;
      const hang = join(tmp, `chaos-hang-${chaos.replace(' ', '-')}`);
      const out = join(tmp, `chaos-${chaos.replace(' ', '-')}`);
      mkdirSync(hang);
      mkdirSync(out);
      const env = { FXFLOW_HANG_DIR: hang, FXFLOW_HANG_FAST: '6' };
      const coordinator = fxflow([...SWEEP, '--queue', q, '--out', out], env);
      const worker1 = fxflow(['worker', '--queue', q, '--threads', '1', '--lock-ms', '2000'], env);
      // Trials 0 and 1 are recorded and worker 1 hangs in trial 2: Redis loses everything now.
      await dirReached(hang, (n) => n.some((x) => x.startsWith('hanging-')));
      await dirReached(out, () => linesOf(out, 'trials.jsonl').length === 2);
      if (chaos === 'flushed')
        expect(
          spawnSync('redis-cli', ['-p', String(port), 'flushall'], { encoding: 'utf8' }).stdout.trim(),
        ).toBe('OK');
      else {
        own.kill('SIGKILL');
        await new Promise((res) => own.once('exit', res));
        own = await startRedis(port);
      }
      // Worker 1's only thread is still stuck: a second worker runs what the coordinator queues again.
      const worker2 = fxflow(['worker', '--queue', q, '--threads', '1', '--lock-ms', '2000'], env);
      const done = await coordinator.exit;
      worker1.child.kill('SIGKILL');
      worker2.child.kill('SIGTERM');
      await Promise.all([worker1.exit, worker2.exit]);
      own.kill('SIGKILL');
      expect(done.code).toBe(0);
      expect(done.stderr).toMatch(
        /^fxflow optimize: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 no longer held 4 of the 4 trials out on the queue nor the sweep's manifest \(it was emptied or restarted without its data\): queued them again\n$/,
      );
      expect(readFileSync(join(out, 'trials.csv'), 'utf8')).toBe(refTable);
      const ids = linesOf(out, 'trials.jsonl').map((l) => (JSON.parse(l) as { id: string }).id);
      expect(new Set(ids).size).toBe(6);
    }, 90_000);
  }

  it('workers that refuse the sweep: the coordinator warns, naming each refusal, and the refusing worker exits within 2 s of giving up', async () => {
    const q = `${url}?name=refused`;
    const out = join(tmp, 'refused');
    mkdirSync(out);
    const coordinator = fxflow([...SWEEP, '--queue', q, '--out', out, '--idle-warn-ms', '1000']);
    let warned: (line: string) => void = () => {};
    const warning = new Promise<string>((res) => (warned = res));
    let err = '';
    coordinator.child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const line = err.split('\n').find((l) => l.includes('refused this sweep'));
      if (line) warned(line);
    });
    await dirReached(out, (n) => n.includes('sweep.json'));
    // The same strategy with one more line: another content hash.
    const copy = join(tmp, 'hang-once-edited.ts');
    writeFileSync(copy, `${readFileSync(FIXTURE, 'utf8')}\n// edited\n`);
    const refusing = fxflow(['worker', '--queue', q, '--threads', '1', '--strategy', copy]);
    let gaveUpAt = 0;
    refusing.child.stderr!.on('data', (d: Buffer) => {
      if (!gaveUpAt && d.toString().includes('is not the coordinator')) gaveUpAt = performance.now();
    });
    const r = await refusing.exit;
    const exitMs = performance.now() - gaveUpAt;
    expect(r.code).toBe(1);
    expect(gaveUpAt).toBeGreaterThan(0);
    expect(exitMs).toBeLessThan(2000);
    const line = await warning;
    expect(line).toMatch(
      /^fxflow optimize: no worker has taken a trial for \d+ s \(6 waiting on redis:\/\/127\.0\.0\.1:\d+\/0\?name=refused\): the worker \S+ \(pid \d+\) refused this sweep: sweep hang-once-\w+: \S+hang-once-edited\.ts is not the coordinator's strategy/,
    );
    expect(line).toContain(`(pid ${refusing.child.pid})`);
    // A worker with the right file finishes the sweep.
    const good = fxflow(['worker', '--queue', q, '--threads', '1']);
    const done = await coordinator.exit;
    good.child.kill('SIGTERM');
    await good.exit;
    expect(done.code).toBe(0);
    expect(readFileSync(join(out, 'trials.csv'), 'utf8')).toBe(await referenceTable());
  }, 90_000);

  it("fxflow walkforward --queue: every window's trials and out-of-sample run are jobs keyed as optimize keys them; the same files as a local walk-forward", async () => {
    const wf = [
      'walkforward',
      FIXTURE,
      '--param',
      'fast=4,6,8',
      '--param',
      'slow=20,30',
      '--train',
      '2mo',
      '--test',
      '1mo',
      '--from',
      '2024-01-01',
      '--to',
      '2024-06-01',
    ];
    const local = join(tmp, 'wf-local');
    const l = await fxflow([...wf, '--workers', '1', '--out', local]).exit;
    expect(l.stderr).toBe('');
    expect(l.code).toBe(0);
    const q = `${url}?name=wf`;
    const queued = join(tmp, 'wf-queued');
    const worker = fxflow(['worker', '--queue', q, '--threads', '1']);
    const r = await fxflow([...wf, '--queue', q, '--out', queued]).exit;
    worker.child.kill('SIGTERM');
    const w = await worker.exit;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^walkforward hang-once: 3 windows .*, on the queue redis:\/\/127\.0\.0\.1:\d+\/0\?name=wf\n/,
    );
    for (const f of ['windows.csv', 'oos-equity.csv'])
      expect(readFileSync(join(queued, f), 'utf8')).toBe(readFileSync(join(local, f), 'utf8'));
    for (const win of ['window-01', 'window-02', 'window-03'])
      expect(readFileSync(join(queued, win, 'trials.csv'), 'utf8')).toBe(
        readFileSync(join(local, win, 'trials.csv'), 'utf8'),
      );
    // The worker ran 3 × 6 trials and 3 out-of-sample runs, each once.
    expect(w.stderr.match(/trial \d+ of hang-once-wf-\w+ done/g)).toHaveLength(18);
    expect(w.stderr.match(/window \d's out-of-sample run of hang-once-wf-\w+ done/g)).toHaveLength(3);
    // Each recorded trial is the job of the same id in Redis (bull:<queue>:<trial id>).
    const ids = ['window-01', 'window-02', 'window-03'].flatMap((win) =>
      linesOf(join(queued, win), 'trials.jsonl').map((x) => (JSON.parse(x) as { id: string }).id),
    );
    expect(new Set(ids).size).toBe(18);
    const port = new URL(url).port;
    const exists = spawnSync('redis-cli', ['-p', port, 'exists', ...ids.map((id) => `bull:wf:${id}`)], {
      encoding: 'utf8',
    });
    expect(exists.stdout.trim()).toBe('18');
  }, 200_000);

  it('one clear message: a server older than BullMQ supports (a loopback server speaking RESP as Redis 4.0 does)', async () => {
    // Answers INFO as Redis 4.0.14 would and +OK to anything else; enough for a client's handshake.
    const old = createServer((sock) => {
      let buf = '';
      sock.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        // One reply per complete RESP array (*N\r\n then N bulk strings).
        for (;;) {
          const m = /^\*(\d+)\r\n/.exec(buf);
          if (!m) return;
          let at = m[0].length;
          const parts: string[] = [];
          for (let k = 0; k < Number(m[1]); k++) {
            const b = /^\$(\d+)\r\n/.exec(buf.slice(at));
            if (!b || buf.length < at + b[0].length + Number(b[1]) + 2) return;
            parts.push(buf.slice(at + b[0].length, at + b[0].length + Number(b[1])));
            at += b[0].length + Number(b[1]) + 2;
          }
          buf = buf.slice(at);
          if (parts[0]?.toLowerCase() === 'info') {
            const body = '# Server\r\nredis_version:4.0.14\r\nloading:0\r\n';
            sock.write(`$${body.length}\r\n${body}\r\n`);
          } else sock.write('+OK\r\n');
        }
      });
    });
    await new Promise<void>((res) => old.listen(0, '127.0.0.1', res));
    const port = (old.address() as { port: number }).port;
    const r = await fxflow([...SWEEP, '--queue', `redis://127.0.0.1:${port}/0`, '--out', join(tmp, 'old')])
      .exit;
    old.close();
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `fxflow: redis://127.0.0.1:${port}/0 runs Redis 4.0.14; BullMQ needs Redis 5.0.0 or newer: upgrade it or point --queue at another server`,
    );
  }, 60_000);

  it('one clear message: Redis unreachable, a queue busy with another sweep, a worker with other data', async () => {
    const port = await freePort(); // nothing listens there
    const down = await fxflow([
      ...SWEEP,
      '--queue',
      `redis://127.0.0.1:${port}/0`,
      '--out',
      join(tmp, 'down'),
    ]).exit;
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toBe(
      `fxflow: cannot reach Redis at redis://127.0.0.1:${port}/0 (ECONNREFUSED): start it, or check the host, port and password in --queue`,
    );

    // A sweep whose trials wait (no worker), then another sweep on the same queue.
    const q = `${url}?name=busy`;
    mkdirSync(join(tmp, 'busy1'));
    const first = fxflow([...SWEEP, '--queue', q, '--out', join(tmp, 'busy1')]);
    await dirReached(join(tmp, 'busy1'), (n) => n.includes('sweep.json'));
    const another = await fxflow([
      'optimize',
      FIXTURE,
      '--param',
      'fast=4,6',
      '--param',
      'slow=40',
      '--from',
      '2024-01-01',
      '--to',
      '2024-03-01',
      '--queue',
      q,
      '--out',
      join(tmp, 'busy2'),
    ]).exit;
    expect(another.code).toBe(1);
    expect(another.stderr).toMatch(
      /^fxflow: the queue 'busy' at redis:\/\/127\.0\.0\.1:\d+\/0 holds \d+ unfinished trials? of another sweep \(hang-once, hang-once-\w+, started [^)]+\): wait for it to finish, or give this sweep its own queue/,
    );
    expect(another.stderr.trim().split('\n').length).toBe(1);

    // A worker whose catalog is not the coordinator's refuses, naming both hashes.
    // (a copy of the sample's EUR_USD H1 for the period, with one price changed).
    const other = join(tmp, 'other-catalog');
    mkdirSync(join(other, 'EUR_USD/H1'), { recursive: true });
    for (const f of ['series.json', '2024-01.csv'])
      if (existsSync(join(ROOT, 'data/catalog/EUR_USD/H1', f)))
        copyFileSync(join(ROOT, 'data/catalog/EUR_USD/H1', f), join(other, 'EUR_USD/H1', f));
    const feb = readFileSync(join(ROOT, 'data/catalog/EUR_USD/H1/2024-02.csv'), 'utf8').split('\n');
    feb[1] = feb[1]!.replace(/,\d+$/, ',1');
    writeFileSync(join(other, 'EUR_USD/H1/2024-02.csv'), feb.join('\n'));
    const w = await fxflow(['worker', '--queue', q, '--threads', '1', '--catalog', other]).exit;
    expect(w.code).toBe(1);
    expect(w.stderr).toMatch(
      // 1034: the sample has no candles in New Year's Day's closure (22 H1 hours of 2024-01-01).
      /fxflow: sweep hang-once-\w+: the data here \(.*other-catalog, 1034 candles\) is not the coordinator's \(content hash \w+…, the sweep's \w+…\): every worker needs the same catalog/,
    );
    first.child.kill('SIGKILL');
    await first.exit;
  }, 200_000);
});
