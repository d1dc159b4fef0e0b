// Issue 15, item 2: one journal, one runner. Real `fxflow run` processes on one journal directory,
// `kill -9`, and lock files naming live processes with the wrong start time (a reused pid).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal, JournalLockedError } from '../../src/runner/order-path/journal.ts';
import { type FxflowRun, rig, type Rig, spawnFxflowRun, startFxflowRun, watch } from './harness.ts';

let r: Rig | undefined;
const procs: FxflowRun[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.proc.kill('SIGKILL');
  await r?.close();
  r = undefined;
});

const startTime = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};
const hasProc = existsSync('/proc/self/stat');

describe('one journal, one runner', () => {
  it('a second fxflow run on the same journal refuses, naming the pid that holds it; after kill -9 of the first, the next one starts (no stale lock)', async () => {
    r = await rig();
    const args = ['--journal', r.journalDir, '--log-file', join(r.journalDir, 'run.log')];
    const first = await startFxflowRun(r.sandbox, 'test/runner/ping-pong-strategy.ts', args);
    procs.push(first);
    const second = watch(spawnFxflowRun(r.sandbox.url, 'test/runner/ping-pong-strategy.ts', args));
    procs.push(second);
    const code = await second.exited;
    const err = second.err();
    console.log(`[journal lock] second runner: exit ${code}: ${err.trim().split('\n').pop()}`);
    expect(code).not.toBe(0);
    expect(err).toContain(`is in use by pid ${first.proc.pid}`);
    expect(second.out()).not.toContain('Ctrl-C stops');
    // The first one still trades alone; kill -9 leaves its lock file behind, naming a dead pid.
    first.proc.kill('SIGKILL');
    await first.exited;
    expect(existsSync(join(r.journalDir, 'journal.lock'))).toBe(true);
    const third = await startFxflowRun(r.sandbox, 'test/runner/ping-pong-strategy.ts', args);
    procs.push(third);
    const holder = JSON.parse(readFileSync(join(r.journalDir, 'journal.lock'), 'utf8')) as { pid: number };
    expect(holder.pid).toBe(third.proc.pid);
    third.proc.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    expect(existsSync(join(r.journalDir, 'journal.lock'))).toBe(false); // released at a clean stop
  }, 90_000);

  it.skipIf(!hasProc)(
    'a lock naming a live process is honoured only while that pid has the start time recorded (a reused pid does not hold the journal)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'fxflow-lock-'));
      // A live process that is not fxflow: what a reused pid looks like.
      const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      try {
        await new Promise((res) => other.once('spawn', res));
        const pid = other.pid!;
        const lock = (start: string): void =>
          writeFileSync(
            join(dir, 'journal.lock'),
            JSON.stringify({ pid, start, host: hostname(), token: 'x', since: Date.now() }),
          );
        lock(startTime(pid));
        let refused: unknown;
        try {
          Journal.open(dir);
        } catch (e) {
          refused = e;
        }
        expect(refused).toBeInstanceOf(JournalLockedError);
        expect((refused as Error).message).toContain(`in use by pid ${pid}`);
        lock(String(Number(startTime(pid)) - 12345)); // same pid, another start: the holder is gone
        const j = Journal.open(dir);
        expect(JSON.parse(readFileSync(join(dir, 'journal.lock'), 'utf8')).pid).toBe(process.pid);
        // This process now holds it: a second open here is refused as well.
        expect(() => Journal.open(dir)).toThrow(/in use by this process/);
        j.close();
        expect(existsSync(join(dir, 'journal.lock'))).toBe(false);
        console.log(
          `[journal lock] pid ${pid} alive with its recorded start time: refused; with another start time (a reused pid): taken over`,
        );
      } finally {
        other.kill('SIGKILL');
      }
    },
  );
});
