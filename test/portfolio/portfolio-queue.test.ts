import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A member sweep (`optimize --portfolio file --member name`) through the queue, against a real
 * Redis (this test starts its own redis-server on a free port, no disk) and real `fxflow`
 * processes: the manifest carries the portfolio, `fxflow worker` loads every member's module (where
 * the coordinator named it, or from its own copy of the portfolio's folder with --portfolio-dir),
 * checks each against the coordinator's code, and runs whole portfolio backtests as local threads
 * do: the same trials, figures and best trial as a local `--workers` sweep.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/fxflow.js');
const HAS_REDIS = spawnSync('redis-server', ['--version']).status === 0;
if (!HAS_REDIS)
  console.warn(
    'test/portfolio/portfolio-queue.test.ts: SKIPPED: no redis-server on this machine (apt-get install redis-server)',
  );
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-queue-'));

/**
 * A project folder as a machine holds it: the two members' modules under strategies/ and the
 * portfolio file under portfolios/, naming them from its folder. `edited`: brk's module has one
 * more line (another content hash, the same strategy).
 */
function project(name: string, edited = false): string {
  const dir = join(tmp, name);
  mkdirSync(join(dir, 'strategies'), { recursive: true });
  mkdirSync(join(dir, 'portfolios'));
  for (const f of ['sma-cross.ts', 'breakout-tpsl.ts'])
    copyFileSync(join(ROOT, 'strategies', f), join(dir, 'strategies', f));
  if (edited) appendFileSync(join(dir, 'strategies/breakout-tpsl.ts'), '\n// edited\n');
  writeFileSync(
    join(dir, 'portfolios/portfolio.json'),
    JSON.stringify({
      strategies: [
        { module: '../strategies/sma-cross.ts', name: 'sma', params: { fast: 10, slow: 30 } },
        { module: '../strategies/breakout-tpsl.ts', name: 'brk', params: { lookback: 36 } },
      ],
    }),
  );
  return join(dir, 'portfolios');
}
/** The coordinator's portfolio folder, another machine's copy of it (elsewhere), and a copy with brk edited. */
const HOME = project('coordinator');
const COPY = project('copy');
const EDITED = project('edited', true);

/** sma's fast × slow inside the portfolio: 6 trials, each a whole portfolio backtest of half a year. */
const sweep = (of: 'member' | 'account'): string[] => [
  'optimize',
  '--portfolio',
  join(HOME, 'portfolio.json'),
  '--member',
  'sma',
  '--objective-of',
  of,
  '--param',
  'fast=5,8,12',
  '--param',
  'slow=30,40',
  '--config',
  'config/classic.json',
  '--objective',
  'netPL',
  '--from',
  '2024-01-01',
  '--to',
  '2024-07-01',
  '--json',
];

interface Proc {
  readonly child: ChildProcess;
  readonly exit: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Resolves once the process's stderr so far matches `re`. */
  readonly said: (re: RegExp) => Promise<string>;
}

const started: ChildProcess[] = [];

function fxflow(args: readonly string[]): Proc {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let stdout = '';
  let stderr = '';
  const watchers: (() => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const w of [...watchers]) w();
  });
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
    child.on('close', (code) => res({ code, stdout, stderr })),
  );
  const said = (re: RegExp): Promise<string> =>
    new Promise((res) => {
      const check = (): void => {
        const m = re.exec(stderr);
        if (!m) return;
        watchers.splice(watchers.indexOf(check), 1);
        res(m[0]);
      };
      watchers.push(check);
      check();
    });
  return { child, exit, said };
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

let redis: ChildProcess | undefined;
let url = '';

beforeAll(async () => {
  if (!HAS_REDIS) return;
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  started.push(child);
  redis = await new Promise<ChildProcess>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) res(child);
    });
    child.once('exit', (code) => rej(new Error(`redis-server exited (${code}): ${out}`)));
  });
  url = `redis://127.0.0.1:${port}/0`;
}, 60_000);

afterAll(() => {
  // A test that failed half-way leaves no process behind.
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  redis?.kill('SIGKILL');
});

interface Summary {
  trials: number;
  failed: number;
  best: { trial: number; params: Record<string, number>; objective: number };
}

const references = new Map<string, Promise<{ table: string; summary: Summary }>>();
/** The local sweep (two worker threads, no queue): what the queued one must end with. */
function reference(of: 'member' | 'account'): Promise<{ table: string; summary: Summary }> {
  let r = references.get(of);
  if (!r) {
    r = (async () => {
      const out = join(tmp, `local-${of}`);
      const local = await fxflow([...sweep(of), '--workers', '2', '--out', out]).exit;
      expect(local.stderr).toBe('');
      expect(local.code).toBe(0);
      return {
        table: readFileSync(join(out, 'trials.csv'), 'utf8'),
        summary: JSON.parse(local.stdout) as Summary,
      };
    })();
    references.set(of, r);
  }
  return r;
}

/** The queued sweep's table and summary equal the local one's: every trial's figures, and the best trial. */
async function sameAsLocal(of: 'member' | 'account', out: string, stdout: string): Promise<void> {
  const ref = await reference(of);
  const r = JSON.parse(stdout) as Summary;
  expect(r.trials).toBe(6);
  expect(r.failed).toBe(0);
  expect(r.best).toEqual(ref.summary.best);
  expect(readFileSync(join(out, 'trials.csv'), 'utf8')).toBe(ref.table);
}

const doneLines = (stderr: string): number => (stderr.match(/trial \d+ of sma-\w+ done/g) ?? []).length;

describe.skipIf(!HAS_REDIS)(
  'fxflow optimize --portfolio --member --queue / fxflow worker (real Redis)',
  () => {
    it("one worker (2 threads, the coordinator's paths): the local sweep's trials, figures and best trial", async () => {
      await reference('member');
      const q = `${url}?name=one`;
      const out = join(tmp, 'one');
      const worker = fxflow(['worker', '--queue', q, '--threads', '2']);
      const done = await fxflow([...sweep('member'), '--queue', q, '--out', out]).exit;
      worker.child.kill('SIGTERM');
      const w = await worker.exit;
      expect(done.stderr).toBe('');
      expect(done.code).toBe(0);
      await sameAsLocal('member', out, done.stdout);
      // Prepared once, as a portfolio; every trial ran there.
      expect(
        w.stderr.match(
          /\(member sma of a portfolio of 2\): \d+ candles checked against the sweep's data hash/g,
        ),
      ).toHaveLength(1);
      expect(doneLines(w.stderr)).toBe(6);
      expect(w.stderr).not.toMatch(/failed/);
    }, 60_000);

    it("two workers, one finding the modules where the coordinator named them, the other in its own copy (--portfolio-dir); the account's objective: the local sweep's", async () => {
      await reference('account');
      const q = `${url}?name=two`;
      const out = join(tmp, 'two');
      const here = fxflow(['worker', '--queue', q, '--threads', '1']);
      const there = fxflow(['worker', '--queue', q, '--threads', '1', '--portfolio-dir', COPY]);
      await Promise.all([here.said(/waiting for trials/), there.said(/waiting for trials/)]);
      const done = await fxflow([...sweep('account'), '--queue', q, '--out', out]).exit;
      here.child.kill('SIGTERM');
      there.child.kill('SIGTERM');
      const [h, t] = await Promise.all([here.exit, there.exit]);
      expect(done.stderr).toBe('');
      expect(done.code).toBe(0);
      await sameAsLocal('account', out, done.stdout);
      // Both ran trials (one at a time each), 6 in all, each once.
      expect(doneLines(h.stderr)).toBeGreaterThan(0);
      expect(doneLines(t.stderr)).toBeGreaterThan(0);
      expect(doneLines(h.stderr) + doneLines(t.stderr)).toBe(6);
    }, 60_000);

    it("a worker whose copy of a member's module differs is refused, naming the member and the file (and one missing a module too); a worker with the same code finishes the sweep", async () => {
      await reference('member');
      const q = `${url}?name=refused`;
      const out = join(tmp, 'refused');
      const coordinator = fxflow([...sweep('member'), '--queue', q, '--out', out, '--idle-warn-ms', '1000']);
      const edited = await fxflow(['worker', '--queue', q, '--threads', '1', '--portfolio-dir', EDITED]).exit;
      expect(edited.code).toBe(1);
      const file = join(EDITED, '../strategies/breakout-tpsl.ts');
      expect(edited.stderr.trim().split('\n').pop()).toMatch(
        new RegExp(
          `^fxflow: sweep sma-\\w+: member 'brk': ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not the coordinator's module \\(content hash \\w{12}…, the sweep's \\w{12}…\\): the workers need the same strategy files$`,
        ),
      );
      // The coordinator names the refusal in its warning.
      const warning = await coordinator.said(/^.*refused this sweep.*$/m);
      expect(warning).toMatch(
        /^fxflow optimize: no worker has taken a trial for \d+ s \(6 waiting on redis:\/\/127\.0\.0\.1:\d+\/0\?name=refused\): the worker \S+ \(pid \d+\) refused this sweep: sweep sma-\w+: member 'brk': \S+breakout-tpsl\.ts is not the coordinator's module/,
      );
      // A folder without the modules: the first member's is missing, said with its path from the portfolio's folder.
      const empty = join(tmp, 'empty');
      mkdirSync(empty);
      const missing = await fxflow(['worker', '--queue', q, '--threads', '1', '--portfolio-dir', empty]).exit;
      expect(missing.code).toBe(1);
      expect(missing.stderr.trim().split('\n').pop()).toBe(
        `fxflow: sweep ${/sweep (sma-\w+)/.exec(edited.stderr)![1]}: member 'sma': its module ${join(tmp, 'strategies/sma-cross.ts')} is not on this machine: --portfolio-dir ${empty} has no ../strategies/sma-cross.ts (the module's path from the coordinator's portfolio file, ${join(HOME, 'portfolio.json')})`,
      );
      const good = fxflow(['worker', '--queue', q, '--threads', '2', '--portfolio-dir', COPY]);
      const done = await coordinator.exit;
      good.child.kill('SIGTERM');
      await good.exit;
      expect(done.code).toBe(0);
      await sameAsLocal('member', out, done.stdout);
    }, 60_000);
  },
);
