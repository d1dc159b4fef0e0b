// Issue 33, item 5: unknown fills are found. The runner (in process) trades ping-pong against the
// sandbox over real HTTP; a second client places an order on the same account from outside, under
// the client ID of the runner's own first order (what a request arriving after its resend looks like)
// or under none (an order the runner never placed). The runner notices the fill from the transaction
// stream: it logs it at error level, shows it on the status page, counts it in the run's report, and
// acts by the policy (--on-unknown-fill: halt by default, close, keep).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { RunnerStatus } from '../../src/report/runner-status.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import type { UnknownFillPolicy } from '../../src/runner/order-path/unknown-fills.ts';
import { UNKNOWN_FILL_EXIT } from '../../src/runner/order-path/unknown-fills.ts';
import {
  accountTransactions,
  type FxflowRun,
  pricePath,
  rig,
  type Rig,
  startFxflowRun,
  until,
} from './harness.ts';

let r: Rig | undefined;
let runner: Runner | undefined;
let proc: FxflowRun | undefined;
afterEach(async () => {
  proc?.proc.kill('SIGKILL');
  proc = undefined;
  await runner?.stop('test end').catch(() => undefined);
  await r?.close();
  [r, runner] = [undefined, undefined];
});

const cid = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;

/** A running ping-pong runner with `policy`, after its first order filled; its log lines kept. */
async function afterFirstFill(
  policy: UnknownFillPolicy | undefined,
): Promise<{ first: string; start: string; lines: () => { level: number; msg: string }[]; said: string[] }> {
  r = await rig();
  const start = (await r.rest.summary(r.accountID)).lastTransactionID;
  const file = join(r.journalDir, 'run.log');
  const said: string[] = [];
  runner = r.runner({
    log: pino(pino.destination({ dest: file, sync: true })),
    flattenRetryBaseMs: 20,
    say: (l) => said.push(l),
    ...(policy !== undefined ? { onUnknownFill: policy } : {}),
  });
  await runner.start();
  const path = pricePath(200);
  const fills = async (): Promise<Transaction[]> =>
    (await accountTransactions(r!, start)).filter((t) => t.type === 'ORDER_FILL');
  for (let i = 0; (await fills()).length === 0; i++) {
    if (i >= path.length) throw new Error('the strategy placed no order');
    r.sandbox.setTime(path[i]!.time);
    r.sandbox.pushPrice(path[i]!);
    const seen = runner.ticks;
    await until(() => runner!.ticks > seen, 'the runner to handle the price');
  }
  const order = (await accountTransactions(r, start)).find((t) => t.type === 'MARKET_ORDER')!;
  await until(() => runner!.portfolio.ledger.trades.size === 1, 'the runner to see its fill');
  const lines = (): { level: number; msg: string }[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string });
  return { first: cid(order)!, start, lines, said };
}

/** Places a market order from outside the run (a second client over HTTP), under `clientID` if given. */
async function outsideOrder(clientID: string | undefined): Promise<void> {
  await r!.rest.createOrder(r!.accountID, {
    type: 'MARKET',
    instrument: 'EUR_USD',
    units: '1000',
    ...(clientID !== undefined ? { clientExtensions: { id: clientID } } : {}),
  } as never);
}

describe('unknown fills', () => {
  it("a second order under the run's client ID, from outside: noticed, logged at error, on the status page and in the report; the default policy halts and flattens", async () => {
    const { first, start, lines, said } = await afterFirstFill(undefined);
    const status = new RunnerStatus(() => runner!, {
      strategy: 'ping-pong',
      mode: 'sandbox',
      accountID: r!.accountID,
    });
    await outsideOrder(first);
    await until(() => runner!.unknownFills.length === 1, 'the runner to notice the unknown fill');
    expect(runner!.unknownFills[0]).toMatchObject({
      clientID: first,
      why: 'duplicate',
      instrument: 'EUR_USD',
      units: '1000',
    });
    expect(status.snapshot().unknownFills).toEqual([
      expect.objectContaining({ clientID: first, why: 'duplicate' }),
    ]);
    const error = lines().find((l) => l.msg.startsWith('UNKNOWN FILL'));
    expect(error?.level).toBe(50);
    expect(said.some((l) => l.includes('UNKNOWN FILL') && l.includes('--on-unknown-fill halt'))).toBe(true);
    // The policy: the kill switch engaged, the account flattened.
    const result = await runner!.stop('test');
    expect(result.reason).toMatch(/^kill switch \(unknown fill: /);
    expect(result.account?.ok).toBe(true);
    expect((await r!.rest.openTrades(r!.accountID)).length).toBe(0);
    expect(result.unknownFills).toHaveLength(1);
    expect(result.report).toContain('UNKNOWN FILLS: 1 (--on-unknown-fill halt)');
    expect(
      (await accountTransactions(r!, start)).filter((t) => t.type === 'MARKET_ORDER' && cid(t) === first),
    ).toHaveLength(2);
  });

  it(`fxflow run halted by an unknown fill exits ${UNKNOWN_FILL_EXIT} though the account ends flat, saying why`, async () => {
    r = await rig();
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    proc = await startFxflowRun(r.sandbox, 'test/runner/ping-pong-strategy.ts', [
      '--journal',
      r.journalDir,
      '--flatten-timeout',
      '60',
    ]);
    const run = proc;
    // ping-pong decides on every third price: its first order.
    for (const p of pricePath(3)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
    }
    await until(
      async () => (await accountTransactions(r!, start)).some((t) => t.type === 'ORDER_FILL'),
      "the strategy's first fill",
    );
    await outsideOrder(undefined);
    const code = await run.exited;
    expect(code).toBe(UNKNOWN_FILL_EXIT);
    expect(run.out()).toContain('0 positions, 0 pending entry orders');
    expect(run.err()).toContain('UNKNOWN FILL');
    expect(run.err()).toContain(`the run halted itself on an UNKNOWN FILL (order`);
    expect((await r.rest.openTrades(r.accountID)).length).toBe(0);
  }, 180_000);

  it('--on-unknown-fill close: an order the run never placed is closed, the run trades on; keep: only reported', async () => {
    const { lines } = await afterFirstFill('close');
    await outsideOrder(undefined);
    await until(() => runner!.unknownFills.length === 1, 'the runner to notice the unknown fill');
    const u = runner!.unknownFills[0]!;
    expect(u).toMatchObject({ clientID: undefined, why: 'never placed' });
    await until(
      async () => (await r!.rest.openTrades(r!.accountID)).every((t) => t.id !== u.tradeOpened),
      'the trade of the unknown fill to be closed',
    );
    expect((await r!.rest.openTrades(r!.accountID)).length).toBe(1); // the strategy's own trade stays
    expect(runner!.risk?.halted).toBe(false);
    expect(lines().some((l) => l.level === 50 && l.msg.includes('an order the runner never placed'))).toBe(
      true,
    );
    const result = await runner!.stop('test');
    expect(result.reason).toBe('test');
    await runner!.stop();
    await r!.close();
    [r, runner] = [undefined, undefined];

    await afterFirstFill('keep');
    await outsideOrder(undefined);
    await until(() => runner!.unknownFills.length === 1, 'the runner to notice the unknown fill');
    const kept = await runner!.stop('test');
    expect(kept.reason).toBe('test');
    expect(kept.report).toContain('UNKNOWN FILLS: 1 (--on-unknown-fill keep)');
    expect((await r!.rest.openTrades(r!.accountID)).length).toBe(2);
  });
});
