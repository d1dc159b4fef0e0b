// Issue 33, item 3: the operator's signals act from the process's first moment. bin/fxflow.js records
// SIGUSR2, SIGINT and SIGTERM for `fxflow run` before any of fxflow's modules load, and the run's start
// handlers act on what it recorded. FXFLOW_TEST_HOLD_START=1 holds the process right there until a
// signal arrives, so the signal is delivered during module loading for certain (it used to meet
// Node's default action: exit 140, nothing flattened, the position left open). Real `fxflow run`
// processes against the sandbox over HTTP, real journal files, real signals.
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/runner/order-path/journal.ts';
import {
  endTest,
  type FxflowRun,
  pricePath,
  rig,
  type Rig,
  spawnFxflowRun,
  until,
  watch,
} from './harness.ts';

let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  await endTest(run, undefined, r);
  [run, r] = [undefined, undefined];
});

const HOLDING = 'signals recorded; holding until one arrives';
type Tx = { type: string; clientExtensions?: { id?: string } };

/** Spawns `fxflow run` held right after its signal handlers are installed; resolves once it says so. */
async function heldRun(rg: Rig): Promise<FxflowRun> {
  const p = watch(
    spawnFxflowRun(rg.sandbox.url, 'test/runner/ping-pong-strategy.ts', ['--journal', rg.journalDir], {
      ...process.env,
      FXFLOW_TEST_HOLD_START: '1',
    }),
  );
  await until(
    () => p.err().includes(HOLDING) || p.proc.exitCode !== null,
    'the run to hold at its first moment',
    60_000,
  );
  expect(p.err()).toContain(HOLDING);
  return p;
}

describe("signals at the process's first moment (before any module of fxflow is loaded)", () => {
  it('SIGUSR2: handled (never exit 140), the halt journaled, the account flattened, 0 strategy orders, exit 0', async () => {
    r = await rig();
    const rg = r;
    const path = pricePath(400);
    let i = 0;
    const push = (): void => {
      const p = path[i++ % path.length]!;
      rg.sandbox.setTime(path[0]!.time + i * 1000);
      rg.sandbox.pushPrice({ ...p, time: path[0]!.time + i * 1000 });
    };
    push();
    // A position the kill switch has to close, opened before the run.
    await rg.rest.createOrder(rg.accountID, {
      type: 'MARKET',
      instrument: 'EUR_USD',
      units: '1000',
    } as never);
    const lastBefore = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    run = await heldRun(rg);
    run.proc.kill('SIGUSR2');
    // Prices keep coming while it starts and flattens (a run that traded would order on them).
    while (run.proc.exitCode === null && run.proc.signalCode === null && i < 350) {
      push();
      await new Promise((res) => setTimeout(res, 100));
    }
    await until(() => run!.proc.exitCode !== null || run!.proc.signalCode !== null, 'the run to end', 60_000);
    const txs = (await rg.rest.transactionsSinceId(rg.accountID, lastBefore)).transactions as unknown as Tx[];
    const strategy = txs.filter(
      (t) => t.type === 'MARKET_ORDER' && (t.clientExtensions?.id ?? '').startsWith('ping-pong-'),
    );
    const halt = Journal.read(rg.journalDir).halt;
    console.log(
      `[SIGUSR2 at the first moment] exit ${run.proc.exitCode} signal ${run.proc.signalCode}; strategy orders ${strategy.length}; open trades ${(await rg.rest.openTrades(rg.accountID)).length}; halt ${JSON.stringify(halt)}`,
    );
    expect(run.proc.signalCode).toBeNull();
    expect(run.proc.exitCode).toBe(0);
    expect(run.err()).toMatch(/KILL SWITCH ENGAGED \(SIGUSR2\) while starting/);
    expect(run.out()).toMatch(/0 positions, 0 pending entry orders/);
    expect(strategy).toEqual([]);
    expect(await rg.rest.openTrades(rg.accountID)).toEqual([]);
    expect(halt?.why).toBe('SIGUSR2');
  }, 180_000);

  it('SIGTERM: handled, the run stops once its start is done, exit 0, the journal not halted', async () => {
    r = await rig();
    const p = pricePath(1)[0]!;
    r.sandbox.setTime(p.time);
    r.sandbox.pushPrice(p);
    run = await heldRun(r);
    run.proc.kill('SIGTERM');
    await until(() => run!.proc.exitCode !== null || run!.proc.signalCode !== null, 'the run to end', 60_000);
    expect(run.proc.signalCode).toBeNull();
    expect(run.proc.exitCode).toBe(0);
    expect(run.err()).toMatch(/SIGTERM while starting: the run stops as soon as its start is done/);
    expect(Journal.read(r.journalDir).halt).toBeUndefined();
  }, 120_000);
});
