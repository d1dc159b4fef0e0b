// Issue 24, item 2 (Why 2): a strategy that reverses is limited as a waiting strategy is. Real
// `fxflow run` processes against the sandbox, `--max-orders-per-minute 3 --max-daily-loss 0.3`, 30
// prices a second apart (price time): the reversing strategy (target - net, as the shipped
// sma-cross sends) used to pass every order as an exit (29 orders, 0 refusals). Now each order's
// opening part meets both limits, its reducing part still goes: at most 3 orders open exposure in
// the minute, and both strategies have refusals.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FxflowRun, pricePath, rig, type Rig, startFxflowRun } from './harness.ts';

let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await r?.close();
  r = undefined;
});

type Tx = {
  id: string;
  type: string;
  time: string;
  units?: string;
  tradeOpened?: { units: string };
  clientExtensions?: { id?: string };
};

async function limited(
  strategy: string,
  name: string,
): Promise<{ orders: number; opening: number; refusals: number; reduceOnly: number; out: string }> {
  r = await rig();
  const path = pricePath(31);
  r.sandbox.setTime(path[0]!.time);
  r.sandbox.pushPrice(path[0]!);
  run = await startFxflowRun(r.sandbox, strategy, [
    '--journal',
    r.journalDir,
    '--log-file',
    join(r.journalDir, 'run.log'),
    '--max-orders-per-minute',
    '3',
    '--max-daily-loss',
    '0.3',
    '--param',
    'every=2',
  ]);
  for (const p of path.slice(1)) {
    r.sandbox.setTime(p.time);
    r.sandbox.pushPrice(p);
    await new Promise((res) => setTimeout(res, 100));
  }
  run.proc.kill('SIGTERM');
  const code = await run.exited;
  expect(code).toBe(0);
  const out = run.out();
  const txs = (await r.rest.transactionsSinceId(r.accountID, '0')).transactions as unknown as Tx[];
  const mine = new Set(
    txs
      .filter((t) => t.type === 'MARKET_ORDER' && (t.clientExtensions?.id ?? '').startsWith(`${name}-`))
      .map((t) => t.id),
  );
  const fills = txs.filter(
    (t) => t.type === 'ORDER_FILL' && mine.has((t as { orderID?: string }).orderID ?? ''),
  );
  const reduceOnly = txs.filter(
    (t) => mine.has(t.id) && (t as { positionFill?: string }).positionFill === 'REDUCE_ONLY',
  ).length;
  const refusals = Number((out.match(/risk refusals (\d+)/) ?? [])[1]);
  const res = {
    orders: mine.size,
    opening: fills.filter((f) => f.tradeOpened !== undefined).length,
    refusals,
    reduceOnly,
    out,
  };
  await r.close();
  r = undefined;
  run = undefined;
  return res;
}

describe('limits on the opening part of every order', () => {
  it('a reversing strategy under --max-orders-per-minute 3 --max-daily-loss 0.3 is refused as a waiting strategy is', async () => {
    const reversing = await limited('test/runner/reversing-strategy.ts', 'reversing');
    const waiting = await limited('test/runner/ping-pong-strategy.ts', 'ping-pong');
    const line = (n: string, x: typeof reversing): string =>
      `${n}: ${x.orders} orders (${x.reduceOnly} reduce-only closes of a refused order), ${x.opening} fills opened exposure, ${x.refusals} refusals`;
    console.log(
      `[risk reversal] 30 s of price time: ${line('reversing', reversing)}; ${line('waiting (ping-pong)', waiting)}`,
    );
    // All 30 prices fall in one minute: at most 3 orders may open exposure.
    expect(reversing.opening).toBeLessThanOrEqual(3);
    expect(waiting.opening).toBeLessThanOrEqual(3);
    expect(reversing.refusals).toBeGreaterThan(0);
    expect(waiting.refusals).toBeGreaterThan(0);
  }, 120_000);
});
