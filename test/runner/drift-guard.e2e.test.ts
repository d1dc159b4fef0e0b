// Issue 37 item 5: the drift guard. A real `fxflow run --shadow --max-drift 1` process trades the
// ping-pong strategy against the sandbox. When the sandbox fills every market order 3 pips worse
// (`fill.slippage fixed:3`, as `fxflow sandbox --slippage fixed:3`), the first pair of fills is
// past the 1-pip tolerance: the run halts itself through the kill switch's halt (the journal's
// halt record naming the tolerance and the fill), flattens, and its report says which tolerance
// and which fill; a restart on the journal trades nothing; `fxflow replay` of the run folder names
// the same fills. The same run without the slippage does not halt. Prices move 0.2 pip per price
// (the simulator fills at the next price, the account at the current one), so without slippage the
// two differ by 0.2 pip. Every wait is on an event (an account fill, the status page, an exit).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Reconciliation } from '../../src/app/replay.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { RunnerStatus } from '../../src/report/runner-status.ts';
import { parseMaxDrift } from '../../src/runner/recording/drift.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import {
  accountTransactions,
  endTest,
  type FxflowRun,
  rig,
  type Rig,
  settle,
  spawnFxflowRun,
  startFxflowRun,
  until,
  watch,
} from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  await endTest(run, undefined, r);
  [run, r] = [undefined, undefined];
});

/** EUR_USD rising 0.2 pip per price, 1 s apart (ask = bid + 1.5 pips). */
function walk(
  n: number,
  start = Date.UTC(2024, 0, 2, 10, 0),
): { instrument: string; bid: number; ask: number; time: number }[] {
  return Array.from({ length: n }, (_, i) => {
    const bid = Math.round((1.1 + 0.00002 * i) * 1e5) / 1e5;
    return {
      instrument: 'EUR_USD',
      bid,
      ask: Math.round((bid + 0.00015) * 1e5) / 1e5,
      time: start + i * 1000,
    };
  });
}

const fills = (txs: readonly Transaction[]): Transaction[] => txs.filter((t) => t.type === 'ORDER_FILL');
const strategyOrders = (txs: readonly Transaction[]): Transaction[] =>
  txs.filter(
    (t) =>
      t.type === 'MARKET_ORDER' &&
      ((t as { clientExtensions?: { id?: string } }).clientExtensions?.id ?? '').startsWith('ping-pong-'),
  );

/**
 * Pushes the prices one by one; after each price the strategy decides on (every 3rd), waits until
 * the account has filled its order, so that the account fills it at that price. Stops early when
 * the run has exited (halted).
 */
async function pushPaced(rg: Rig, path: ReturnType<typeof walk>, exited: () => boolean): Promise<void> {
  let orders = 0;
  for (const [i, p] of path.entries()) {
    if (exited()) return;
    rg.sandbox.setTime(p.time);
    rg.sandbox.pushPrice(p);
    if (i % 3 !== 2) continue;
    orders++;
    await until(
      async () => exited() || fills(strategyOrdersFilled(await accountTransactions(rg))).length >= orders,
      `the account to fill order ${orders}`,
    );
  }
}

/** The fills of the strategy's orders (not the kill switch's closes). */
function strategyOrdersFilled(txs: readonly Transaction[]): Transaction[] {
  const ids = new Set(strategyOrders(txs).map((t) => t.id));
  return txs.filter((t) => t.type === 'ORDER_FILL' && ids.has((t as { orderID?: string }).orderID ?? ''));
}

function replay(folder: string): {
  status: number | null;
  stdout: string;
  stderr: string;
  rec: Reconciliation;
  txt: string;
} {
  const out = spawnSync(process.execPath, ['bin/fxflow.js', 'replay', folder], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return {
    status: out.status,
    stdout: out.stdout,
    stderr: out.stderr,
    rec: JSON.parse(readFileSync(join(folder, 'reconciliation.json'), 'utf8')) as Reconciliation,
    txt: readFileSync(join(folder, 'reconciliation.txt'), 'utf8'),
  };
}

describe('the drift guard (fxflow run --shadow --max-drift)', () => {
  it('a sandbox filling 3 pips worse: the run halts itself under --max-drift 1 (journaled halt, report, replay name the tolerance and the fill); a restart trades nothing', async () => {
    r = await rig({ fill: { slippage: 'fixed:3' } });
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-drift-')), 'live');
    const args = [
      '--shadow',
      '--max-drift',
      '1',
      '--journal',
      r.journalDir,
      '--out',
      out,
      '--log-file',
      join(r.journalDir, 'run.log'),
    ];
    run = await startFxflowRun(r.sandbox, 'test/runner/ping-pong-strategy.ts', args);
    expect(run.out()).toContain(
      'drift guard: --max-drift price=1: past any of these the run halts as the kill switch does',
    );
    const current = run;
    await pushPaced(r, walk(30), () => current.proc.exitCode !== null);
    expect(await run.exited).toBe(0);
    const stdout = run.out();
    console.log(
      `[drift halt] ${stdout
        .split('\n')
        .filter((l) => /DRIFT|drift/.test(l))
        .join(' | ')}`,
    );
    // The first order (a buy on the 3rd price, ask 1.10019) filled at the account 3 pips over it; the
    // simulator filled it at the next price it got: the 4th (ask 1.10021, 2.8 pips apart) or the
    // sandbox's own repeat of the 3rd with the fill (3.0 pips apart). Past 1 either way.
    const txs = await accountTransactions(r);
    const first = strategyOrders(txs)[0] as Transaction & { clientExtensions: { id: string } };
    const cid = first.clientExtensions.id;
    const halt = Journal.read(r.journalDir).halt;
    expect(halt?.why).toMatch(
      new RegExp(
        `^drift guard: price (2\\.8|3\\.0) past --max-drift price=1: fill of ${cid} EUR_USD: live 1\\.10049 sim 1\\.100(21|19) \\((2\\.8|3\\.0) pips\\)$`,
      ),
    );
    const drifted = /live 1\.10049 sim 1\.100\d\d \(\d\.\d pips\)/.exec(halt!.why)![0];
    // The run's report (stdout and report.txt in the run folder) says which tolerance and which fill.
    const report = readFileSync(join(out, 'report.txt'), 'utf8');
    for (const text of [stdout, report]) {
      expect(text).toContain(
        `DRIFT GUARD HALTED THE RUN (--max-drift price=1): price past its tolerance: ${halt!.why}`,
      );
      expect(text).toContain(`drifted: ${cid} EUR_USD: ${drifted}`);
    }
    expect(run.err()).toContain(`is HALTED since ${new Date(halt!.at).toISOString()} (${halt!.why})`);
    // Halted as the kill switch halts: flat at the account, and nothing of the strategy after its first order.
    expect(stdout).toMatch(/0 positions, 0 pending entry orders/);
    expect(strategyOrders(txs)).toHaveLength(1);
    expect(await r.rest.openTrades(r.accountID)).toEqual([]);

    // A restart on the halted journal trades nothing, says why, and stops.
    const before = (await r.rest.summary(r.accountID)).lastTransactionID;
    const again = watch(
      spawnFxflowRun(r.sandbox.url, 'test/runner/ping-pong-strategy.ts', [
        '--shadow',
        '--max-drift',
        '1',
        '--journal',
        r.journalDir,
        '--out',
        out,
        '--log-file',
        join(r.journalDir, 'run2.log'),
      ]),
    );
    run = again;
    expect(await again.exited).toBe(0);
    expect(again.err()).toContain(`is HALTED since ${new Date(halt!.at).toISOString()} (${halt!.why})`);
    expect(again.err()).toContain(`fxflow journal clear-halt ${r.journalDir}`);
    expect((await r.rest.summary(r.accountID)).lastTransactionID).toBe(before);

    // The replay of the run folder names the same fill, past the same tolerance, and the halt.
    const rep = replay(out);
    expect(rep.status).toBe(0);
    console.log(
      `[drift replay] ${rep.txt
        .split('\n')
        .filter((l) => /drift/.test(l))
        .join(' | ')}`,
    );
    expect(rep.rec.drift).toMatchObject({ tolerances: 'price=1', pastTolerance: ['price'], missed: 0 });
    expect(rep.rec.drift!.fills.map((f) => f.clientID)).toEqual([cid]);
    expect(rep.txt).toContain(
      'drift guard of the run (--max-drift price=1): past price against the replay; 1 fill(s) past the price tolerance, 0 on one side only',
    );
    // The replay fills at the price current at the decision as recorded: the sandbox's 3 pips of slippage, and the quote's move.
    const line = new RegExp(
      `drifted: ${cid} EUR_USD: live 1\\.10049 replay 1\\.100\\d\\d \\((\\d\\.\\d) pips\\)`,
    ).exec(rep.txt);
    expect(Number(line?.[1])).toBeGreaterThanOrEqual(2.8);
    expect(rep.txt).toContain(`the live guard halted the run: session 1: kill switch (${halt!.why})`);
  }, 120_000);

  it('the same run without the slippage: 0.2 pip apart, within --max-drift 1; the status page shows the guard; no halt', async () => {
    r = await rig();
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-drift-')), 'live');
    run = await startFxflowRun(r.sandbox, 'test/runner/ping-pong-strategy.ts', [
      '--shadow',
      '--max-drift',
      '1',
      '--journal',
      r.journalDir,
      '--out',
      out,
      '--status-port',
      '0',
      '--log-file',
      join(r.journalDir, 'run.log'),
    ]);
    const url = /Live status: (http:\/\/\S+)/.exec(run.out())![1]!;
    const current = run;
    // 10 orders (on prices 3, 6, … 30), and one price more: the simulator fills each at the next price.
    await pushPaced(r, walk(31), () => current.proc.exitCode !== null);
    type Drift = { tolerances: string; compared: number; pricePips: number; missed: number; breach: unknown };
    const status = async (): Promise<Drift> =>
      ((await (await fetch(new URL('status.json', url))).json()) as { drift: Drift }).drift;
    await until(async () => (await status()).compared >= 10, 'the status page to show 10 fills compared');
    const d = await status();
    expect(d).toMatchObject({ tolerances: 'price=1', compared: 10, missed: 0, breach: null });
    expect(d.pricePips).toBeLessThanOrEqual(0.2 + 1e-9);
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(Journal.read(r.journalDir).halt).toBeUndefined();
    expect(run.out()).toMatch(
      /Drift guard \(--max-drift price=1\): within every tolerance\n {2}10 fill\(s\) compared; largest price difference 0\.[02] pips; fills on one side only 0/,
    );
    expect(run.out()).not.toContain('DRIFT GUARD HALTED');
    expect(strategyOrders(await accountTransactions(r))).toHaveLength(10);
    const rep = replay(out);
    expect(rep.status).toBe(0);
    expect(rep.rec.drift).toMatchObject({ pastTolerance: [], fills: [], halts: [] });
    expect(rep.txt).toContain(
      'drift guard of the run (--max-drift price=1): within its tolerances against the replay',
    );
  }, 120_000);

  it('in process: the status page of a halted run names the tolerance and the fill', async () => {
    r = await rig({ fill: { slippage: 'fixed:3' } });
    const runner = r.runner({ shadow: true, maxDrift: parseMaxDrift(['price=1']) });
    const page = new RunnerStatus(() => runner, {
      strategy: 'ping-pong',
      mode: 'sandbox',
      accountID: r.accountID,
    });
    await runner.start();
    expect(page.snapshot().drift).toMatchObject({ tolerances: 'price=1', compared: 0, breach: null });
    for (const p of walk(6)) {
      if (runner.halted !== undefined) break;
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    await until(() => runner.halted !== undefined, 'the drift guard to halt the run');
    const res = await runner.done.then(() => runner.stop('end'));
    const s = page.snapshot();
    expect(s.killSwitch.engaged).toBe(true);
    expect(s.drift!.breach).toMatchObject({
      tolerance: 'price',
      limit: 1,
      fills: [expect.stringMatching(/^ping-pong-/)],
    });
    expect(s.drift!.breach!.why).toBe(runner.halted!.why);
    expect(s.drift!.drifted).toEqual([
      expect.objectContaining({
        what: 'price',
        live: '1.10049',
        sim: expect.stringMatching(/^1\.100(19|21)$/),
      }),
    ]);
    expect(res.drift?.breach?.tolerance).toBe('price');
  }, 60_000);
});
