// Issue 18 item 4: `fxflow run` keeps its inputs; `fxflow replay <run-folder>` puts them through the
// simulator and reconciles the two. Real processes (`fxflow run`, `fxflow replay`) against a real
// sandbox over HTTP on its manual clock; real files.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { inputFiles, readInputs, readRunMeta } from '../../src/runner/recording/recording.ts';
import type { Reconciliation } from '../../src/app/replay.ts';
import { pricePath, rig, startFxflowRun, until, type FxflowRun, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const STRATEGY = 'test/runner/replay-strategy.ts';
let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await r?.close();
  r = undefined;
});

/** Whether the replay strategy decides on a price at `t` (its rule: seconds ≡ 2 mod 3). */
const decides = (t: number): boolean => Math.floor(t / 1000) % 3 === 2;

/**
 * `fxflow run` of the replay strategy against the rig's sandbox into `out`: pushes the prices one by
 * one on the sandbox's clock; after a price the strategy decides on, waits until the account has the
 * fill and the runner has journaled it (so the order reached the sandbox before the next price, as
 * it would on a market that moves slower than the round trip). Stops it with SIGTERM.
 */
async function liveRun(
  rr: Rig,
  out: string | undefined,
  n: number,
  o: { journal?: string; from?: number; fills?: number; kill?: boolean } = {},
): Promise<{ stdout: string; fills: number }> {
  const journal = o.journal ?? mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
  run = await startFxflowRun(rr.sandbox, STRATEGY, [
    '--journal',
    journal,
    ...(out !== undefined ? ['--out', out] : []),
    '--log-file',
    join(journal, 'run.log'),
  ]);
  let fills = o.fills ?? 0;
  for (const p of pricePath(n).slice(o.from ?? 0)) {
    rr.sandbox.setTime(p.time);
    rr.sandbox.pushPrice(p);
    if (!decides(p.time)) continue;
    fills++;
    await until(async () => {
      const j = Journal.read(journal);
      const last = (await rr.rest.summary(rr.accountID)).lastTransactionID;
      return (
        j.transactions.filter((t) => t.type === 'ORDER_FILL').length === fills && j.lastTransactionID === last
      );
    }, `the fill of order ${fills}`);
  }
  if (o.kill === true && out !== undefined) {
    // kill -9 once the recording holds the last price (the recorder flushes its gzip stream every second).
    const lastTime = pricePath(n)[n - 1]!.time;
    await until(async () => {
      let seen = false;
      await readInputs(out, inputFiles(out, readRunMeta(out)).files, (x) => {
        if (x.k === 'tick' && x.t === lastTime) seen = true;
      });
      return seen;
    }, 'the last price in the recording');
    run.proc.kill('SIGKILL');
    await run.exited;
  } else {
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }
  const stdout = run.out();
  run = undefined;
  return { stdout, fills };
}

function replay(
  folder: string,
  args: readonly string[] = [],
): { status: number | null; stdout: string; stderr: string; rec: Reconciliation } {
  const out = spawnSync(process.execPath, ['bin/fxflow.js', 'replay', folder, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const dirOut = args.includes('--out') ? args[args.indexOf('--out') + 1]! : folder;
  return {
    status: out.status,
    stdout: out.stdout,
    stderr: out.stderr,
    rec: JSON.parse(readFileSync(join(dirOut, 'reconciliation.json'), 'utf8')) as Reconciliation,
  };
}

/** The run folder a `fxflow run` printed. */
const folderOf = (stdout: string): string => /run folder: (\S+)/.exec(stdout)![1]!;

describe('fxflow replay: golden runs against the sandbox', () => {
  it('a run against the sandbox, stopped and replayed: zero differences; replayed with backtest fills (--fill next): each fill differs by the next price, attributed to it', async () => {
    r = await rig();
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-')), 'live');
    const live = await liveRun(r, out, 30);
    expect(live.stdout).toContain(`run folder: ${out}`);
    expect(live.stdout).toContain(`fxflow replay ${out}`);
    const a = replay(out);
    console.log(`[replay golden] ${a.stdout.trim()}`);
    expect(a.status).toBe(0);
    expect(a.rec.differences).toBe(0);
    expect(a.rec.decisions).toMatchObject({ live: 10, replay: 10, differ: 0 });
    expect(a.rec.fills).toMatchObject({ compared: 10, differ: 0 });
    expect(a.rec.problems).toEqual([]);
    // The run's figures, pinned: 10 market orders of 1000 units alternating sides on the path, 5 round trips, each losing the spread (1.5 pips) less the move.
    expect(a.rec.money.live).toEqual(a.rec.money.replay);
    expect(a.rec.money.live.fills).toBe(10);
    expect(a.rec.money.live.realizedPL).toBe('-1.4400');
    expect(a.rec.money.live.balance).toBe('99998.5600');
    expect(a.rec.records.intents).toBe(10);
    expect(readFileSync(join(out, 'reconciliation.txt'), 'utf8')).toMatch(/differences: 0 /);
    // The report files a backtest's run folder has.
    for (const f of [
      'report.txt',
      'report.html',
      'trades.csv',
      'equity.csv',
      'transactions.jsonl',
      'summary.json',
      'run.json',
    ])
      expect(readFileSync(join(out, f)).length).toBeGreaterThan(0);

    const nextOut = mkdtempSync(join(tmpdir(), 'fxflow-replay-next-'));
    const b = replay(out, ['--fill', 'next', '--out', nextOut]);
    console.log(`[replay --fill next] ${b.stdout.trim()}`);
    expect(b.status).toBe(0);
    // The last decision is on the last price: the simulator, waiting for a next price, never fills it.
    expect(b.rec.fills.differ).toBe(10);
    expect(b.rec.fills.byCause).toEqual({ 'next-price': 9, 'missed-or-late-event': 1 });
    const first = b.rec.fills.diffs[0]!;
    const path = pricePath(30);
    // The first decision is on the 3rd price (10:00:02, a buy): OANDA filled at its ask, the simulator at the 4th's.
    expect(first.live.price).toBe(path[2]!.ask.toFixed(5));
    expect(first.replay.price).toBe(path[3]!.ask.toFixed(5));
    // --fail-on-diff: differences are an error for CI.
    const c = spawnSync(
      process.execPath,
      ['bin/fxflow.js', 'replay', out, '--fill', 'next', '--out', nextOut, '--fail-on-diff'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(c.status).toBe(1);
    expect(c.stderr).toMatch(/differs from the live run in \d+ places \(--fail-on-diff\)/);
  }, 120_000);

  it('a run stopped and started again continues its run folder as a second session; the replay runs on through the restart: zero differences', async () => {
    r = await rig();
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    const folder = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-restart-')), 'live');
    const first = await liveRun(r, folder, 30, { journal });
    expect(folderOf(first.stdout)).toBe(folder);
    // The same folder again (a start on the same journal without --out does the same: live-run-folder.test.ts).
    const second = await liveRun(r, folder, 60, { journal, from: 30, fills: first.fills });
    expect(folderOf(second.stdout)).toBe(folder);
    const meta = JSON.parse(readFileSync(join(folder, 'run.json'), 'utf8')) as {
      sessions: { runId: string; restoredState: boolean; files: string[] }[];
    };
    expect(meta.sessions).toHaveLength(2);
    expect(meta.sessions[1]!.restoredState).toBe(true);
    expect(meta.sessions[0]!.runId).not.toBe(meta.sessions[1]!.runId);
    const a = replay(folder);
    console.log(`[replay restart] ${a.stdout.trim()}`);
    expect(a.status).toBe(0);
    expect(a.rec.sessions).toBe(2);
    expect(a.rec.restarts).toHaveLength(1);
    expect(a.rec.restarts[0]).toMatchObject({
      session: 2,
      restoredState: true,
      sequenceLive: 10,
      sequenceReplay: 10,
    });
    expect(a.rec.differences).toBe(0);
    expect(a.rec.decisions).toMatchObject({ live: 20, replay: 20, differ: 0 });
    expect(a.rec.fills).toMatchObject({ compared: 20, differ: 0 });
    expect(a.rec.money.live).toEqual(a.rec.money.replay);
    expect(a.rec.money.live.fills).toBe(20);
    expect(a.rec.money.live.realizedPL).toBe('-1.3500');
  }, 120_000);

  it("--broker sim: the replay fills at the next price as the run's simulator did: zero differences", async () => {
    r = await rig();
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-sim-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(
      r.sandbox,
      STRATEGY,
      ['--broker', 'sim', '--journal', journal, '--out', out, '--log-file', join(journal, 'run.log')],
      1,
    );
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
    }
    // 10 decisions; the last is on the last price, so 9 fills (each at the price after its decision).
    await until(
      () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === 9,
      "the simulator's 9 fills",
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    run = undefined;
    const a = replay(out);
    console.log(`[replay --broker sim] ${a.stdout.trim()}`);
    expect(a.status).toBe(0);
    expect(a.rec.fill).toBe('next');
    expect(a.rec.differences).toBe(0);
    expect(a.rec.decisions).toMatchObject({ live: 10, replay: 10, differ: 0 });
    expect(a.rec.money.live).toEqual(a.rec.money.replay);
    expect(a.rec.money.live.fills).toBe(9);
    expect(a.rec.money.live.realizedPL).toBe('-1.1300');
  }, 120_000);

  it("--broker sim with fill models (--slippage fixed:1 --latency fixed:1500): the replay uses the run's models: zero differences", async () => {
    r = await rig();
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-sim-models-')), 'live');
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    run = await startFxflowRun(
      r.sandbox,
      STRATEGY,
      [
        '--broker',
        'sim',
        '--slippage',
        'fixed:1',
        '--latency',
        'fixed:1500',
        '--journal',
        journal,
        '--out',
        out,
        '--log-file',
        join(journal, 'run.log'),
      ],
      1,
    );
    for (const p of pricePath(30)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
    }
    // Each order reaches the simulator 1.5 s after its decision and fills at the first price after: 9 of the 10 within the 30 prices.
    await until(
      () => Journal.read(journal).transactions.filter((t) => t.type === 'ORDER_FILL').length === 9,
      "the simulator's 9 fills",
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    run = undefined;
    const a = replay(out);
    console.log(`[replay --broker sim, models] ${a.stdout.trim()}`);
    expect(a.status).toBe(0);
    expect(a.rec.models).toEqual({ slippage: 'fixed:1', latency: 'fixed:1500', commission: 'none' });
    expect(a.rec.differences).toBe(0);
    expect(a.rec.decisions).toMatchObject({ live: 10, replay: 10, differ: 0 });
    expect(a.rec.money.live).toEqual(a.rec.money.replay);
    expect(a.rec.money.live.fills).toBe(9);
  }, 120_000);

  it('kill -9, then a restart into the same folder: the cut-off session is named, its records keep their numbers, the replay runs on: zero differences', async () => {
    r = await rig();
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-replay-journal-'));
    const folder = join(mkdtempSync(join(tmpdir(), 'fxflow-replay-kill-')), 'live');
    const first = await liveRun(r, folder, 30, { journal, kill: true });
    await liveRun(r, folder, 60, { journal, from: 30, fills: first.fills });
    const meta = readRunMeta(folder);
    expect(meta.sessions).toHaveLength(2);
    expect(meta.sessions[0]!.reason).toBe('cut off: no stop marker (the process was killed or crashed)');
    expect(meta.sessions[1]!.firstSeq).toBe(meta.sessions[0]!.lastSeq! + 1);
    const a = replay(folder);
    console.log(`[replay kill -9] ${a.stdout.trim()}`);
    expect(a.status).toBe(0);
    expect(a.rec.problems).toEqual([]);
    expect(a.rec.restarts).toHaveLength(1);
    expect(a.rec.restarts[0]!.previousStop).toBe(
      'cut off: no stop marker (the process was killed or crashed)',
    );
    expect(a.rec.differences).toBe(0);
    expect(a.rec.decisions).toMatchObject({ live: 20, replay: 20, differ: 0 });
    expect(a.rec.money.live.realizedPL).toBe('-1.3500');
  }, 120_000);
});
