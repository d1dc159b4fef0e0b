// Issue 24, items 5 and 6: the run folder survives `kill -9`, and a refused start writes nothing.
// Real `fxflow run` processes against the sandbox, through the fault proxy (test/fault-proxy.ts),
// whose hold tells the test that an order request is in flight when it kills the runner.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { type FaultProxy, startFaultProxy, v20 } from '../fault-proxy.ts';
import {
  accountTransactions,
  type FxflowRun,
  pricePath,
  rig,
  type Rig,
  spawnFxflowRun,
  startFxflowRun,
  until,
  watch,
} from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
const procs: FxflowRun[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.proc.kill('SIGKILL');
  await proxy?.close();
  proxy = undefined;
  await r?.close();
  r = undefined;
});

const STRATEGY = 'test/runner/ping-pong-strategy.ts';
const ROOT = resolve(import.meta.dirname, '../..');

/** Every line of every input file, each file read as whole gzip members (throws on a torn or unended one). */
function strictInputs(dir: string): { k: string; seq: number; intent?: { id: string } }[] {
  const files = readdirSync(dir)
    .filter((f) => /^inputs-\d{6}\.jsonl\.gz$/.test(f))
    .sort();
  return files.flatMap((f) =>
    gunzipSync(readFileSync(join(dir, f)))
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { k: string; seq: number; intent?: { id: string } }),
  );
}

const clientIdOf = (body: string): string =>
  (JSON.parse(body) as { order: { clientExtensions: { id: string } } }).order.clientExtensions.id;

/** Runs `fxflow replay <dir> --out <tmp>`; its exit code and output. */
async function replay(dir: string): Promise<{ code: number | null; out: string; err: string }> {
  const out = mkdtempSync(join(tmpdir(), 'fxflow-replay-cut-'));
  const w = watch(
    spawn(process.execPath, [join('bin', 'fxflow.js'), 'replay', dir, '--out', out], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const code = await w.exited;
  return { code, out: w.out(), err: w.err() };
}

describe('a durable run folder', () => {
  it("kill -9 while an order is in flight: the inputs are whole gzip members holding that order's intent; transactions.jsonl ends with a whole line and the restart fills what it lacks; replay stops at the cut and says so", async () => {
    r = await rig();
    proxy = await startFaultProxy(r.sandbox.url);
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-durable-')), 'run');
    const args = [
      '--journal',
      r.journalDir,
      '--out',
      out,
      '--log-file',
      join(r.journalDir, 'run.log'),
      '--max-intent-age',
      '600',
    ];
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    let run = await startFxflowRun(r.sandbox, STRATEGY, args, 2, { url: proxy.url });
    procs.push(run);
    const path = pricePath(12);
    let i = 0;
    const push = (): void => {
      const p = path[i++]!;
      r!.sandbox.setTime(p.time);
      r!.sandbox.pushPrice(p);
    };
    // Ping-pong orders on every 3rd price: one order goes through and fills.
    for (let k = 0; k < 3; k++) push();
    await until(
      async () => (await accountTransactions(r!, start)).some((t) => t.type === 'ORDER_FILL'),
      'the first fill',
    );
    // The next order request is held in transit; the runner is killed while it waits for the answer.
    proxy.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
    for (let k = 0; k < 3; k++) push();
    const held = await proxy.reached('held', v20.orderPost);
    run.proc.kill('SIGKILL');
    await run.exited;
    const heldID = clientIdOf(held.body);

    // What the folder holds right after the kill: whole gzip members (today's streaming gzip left a
    // file without its end), and the intent whose order was in flight (it was still in a buffer).
    const records = strictInputs(out);
    const intents = records.filter((x) => x.k === 'intent').map((x) => x.intent!.id);
    const txText = readFileSync(join(out, 'transactions.jsonl'), 'utf8');
    console.log(
      `[durable run folder] after kill -9 with order ${heldID} in flight: ${records.length} records in whole gzip members, intents ${intents.join(', ')}; transactions.jsonl ${txText.split('\n').length - 1} lines`,
    );
    expect(intents).toContain(heldID);
    expect(txText === '' || txText.endsWith('\n')).toBe(true);

    // The cut folder replays to the cut and says where it stopped.
    const cut = await replay(out);
    expect(cut.code).toBe(0);
    const lastSeq = Math.max(...records.map((x) => x.seq));
    expect(cut.out).toMatch(
      new RegExp(
        `session 1 was cut off \\(no stop marker: the process was killed or crashed\\): its inputs end at record ${lastSeq} \\(inputs-000001\\.jsonl\\.gz line \\d+, received 20\\d\\d-`,
      ),
    );
    console.log(
      `[durable run folder] replay of the cut folder: ${cut.out
        .trim()
        .split('\n')
        .find((l) => l.includes('cut off'))}`,
    );

    // The order was in transit: it reaches the account after the kill.
    proxy.release();
    await proxy.reached('replied', v20.orderPost);
    // A kill within the flush period loses the transactions.jsonl lines not yet written: the last
    // one is taken away here (as such a kill does), and the restart must write it again.
    const lines = txText.split('\n').filter((l) => l !== '');
    writeFileSync(
      join(out, 'transactions.jsonl'),
      lines
        .slice(0, -1)
        .map((l) => `${l}\n`)
        .join(''),
    );
    run = await startFxflowRun(r.sandbox, STRATEGY, args, 2, { url: proxy.url });
    procs.push(run);
    for (let k = 0; k < 3; k++) push();
    await until(
      async () => (await accountTransactions(r!, start)).filter((t) => t.type === 'ORDER_FILL').length >= 3,
      'the third fill',
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const account = (await accountTransactions(r, start)).map((t) => t.id);
    const written = readFileSync(join(out, 'transactions.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as Transaction).id);
    console.log(
      `[durable run folder] after the restart and a stop: transactions.jsonl ${written.length} transactions, the account ${account.length} since the run began`,
    );
    expect(written).toEqual(account);
    const whole = await replay(out);
    expect(whole.code).toBe(0);
    expect(whole.out).toMatch(/session 1 was cut off .* then goes on with session 2/);
    expect(whole.out).not.toMatch(/session 2 was cut off/);
  }, 120_000);
});

describe('a refused start writes nothing', () => {
  it("a second fxflow run on a journal in use: no run folder, no change to the journal's run-folder pointer, no journal byte", async () => {
    r = await rig();
    const base = mkdtempSync(join(tmpdir(), 'fxflow-refused-'));
    const first = await startFxflowRun(r.sandbox, STRATEGY, [
      '--journal',
      r.journalDir,
      '--out',
      join(base, 'first'),
    ]);
    procs.push(first);
    const snapshot = (): Record<string, string> => {
      const s: Record<string, string> = {};
      for (const f of readdirSync(r!.journalDir)) {
        const p = join(r!.journalDir, f);
        s[f] = statSync(p).isFile()
          ? `${statSync(p).size}:${statSync(p).mtimeMs}:${readFileSync(p, 'latin1')}`
          : 'dir';
      }
      return s;
    };
    // The first runner is paused while the second tries (it is still alive, its lock held): whatever
    // changes in the journal directory meanwhile is the second's doing.
    first.proc.kill('SIGSTOP');
    const before = snapshot();
    expect(before['run-folder']).toContain(join(base, 'first'));
    const second = watch(
      spawnFxflowRun(r.sandbox.url, STRATEGY, ['--journal', r.journalDir, '--out', join(base, 'second')]),
    );
    procs.push(second);
    const code = await second.exited;
    console.log(
      `[refused start] exit ${code}: ${second.err().trim().split('\n').pop()}; folders in ${base}: ${readdirSync(base).join(', ')}`,
    );
    expect(code).not.toBe(0);
    expect(second.err()).toContain(`is in use by pid ${first.proc.pid}`);
    expect(existsSync(join(base, 'second'))).toBe(false);
    expect(second.out()).not.toContain('run folder:');
    expect(snapshot()).toEqual(before);
    first.proc.kill('SIGCONT');
  }, 60_000);
});
