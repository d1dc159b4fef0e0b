import { cpSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../src/runner/order-path/journal.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import { pricePath, rig, settle, waitTicks, type Rig } from './harness.ts';

// The pricing stream's first message after a (re)connect repeats the latest price. After a restart
// the runner must not hand it to the restored strategy state a second time: the journal's strategy
// snapshot records the last price per instrument that state has seen.

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

type PingPongState = { ticks: number; orders: number; fills: number; last: number; again: number };

const path = pricePath(80);

/** Waits until the runner's pricing stream has delivered `n` lines (the first is the latest price again). */
async function delivered(runner: Runner, n: number): Promise<void> {
  const t0 = Date.now();
  while (runner.pricingStats.delivered < n) {
    if (Date.now() - t0 > 10_000)
      throw new Error(`pricing stream delivered ${runner.pricingStats.delivered} of ${n} lines`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** Pushes path[from..to) and waits until the runner has handled each; returns its tick count. */
async function push(rg: Rig, runner: Runner, from: number, to: number): Promise<number> {
  for (let i = from; i < to; i++) {
    rg.sandbox.setTime(path[i]!.time);
    rg.sandbox.pushPrice(path[i]!);
    await waitTicks(runner, runner.ticks + 1);
  }
  return runner.ticks;
}

describe('the latest price again after a restart', () => {
  for (const broker of ['v20', 'sim'] as const) {
    it(`--broker ${broker}: a stop and a restart: the stream's first price (the last one the strategy saw) is not delivered again; ticks == prices`, async () => {
      r = await rig();
      const first = r.runner({ broker });
      await first.start();
      await delivered(first, 1); // the sandbox's opening price
      await push(r, first, 0, 10);
      const pricesFirst = first.ticks;
      const s1 = first.state as PingPongState;
      await first.stop('restart');

      const second = r.runner({ broker });
      await second.start();
      await delivered(second, 1); // path[9] again: handled (or dropped) synchronously
      const afterRepeat = second.ticks;
      const restored = second.state as PingPongState;
      await push(r, second, 10, 15);
      const res = await second.stop('end');
      const s2 = second.state as PingPongState;
      console.log(
        `[repeat price, ${broker}] first run ${pricesFirst} prices (state ticks ${s1.ticks}); restart: the repeated price made ${afterRepeat} ticks; 5 more prices: state ticks ${s2.ticks} over ${pricesFirst + 5} prices, seen again ${s2.again}; recovered ${JSON.stringify(res.recovered)}`,
      );
      expect(s1.ticks).toBe(pricesFirst);
      expect(afterRepeat).toBe(0);
      expect(restored).toEqual(s1);
      expect(s2.ticks).toBe(pricesFirst + 5);
      expect(s2.again).toBe(0);
      expect(s2.last).toBe(path[14]!.time);
      // The stop's snapshot holds the last price, for the next restart.
      expect(Journal.read(r.journalDir).state?.prices).toEqual({ EUR_USD: path[14]!.time });
    });
  }

  it('--broker v20: a crash right after a journal rebase (its snapshot is the latest): the repeated price is not delivered again', async () => {
    r = await rig();
    const first = r.runner({ rebaseEvery: 4 });
    await first.start();
    await delivered(first, 1);
    const crashDir = mkdtempSync(join(tmpdir(), 'fxflow-crash-'));
    let baseline = (first.journal.contents().baseline as { lastTransactionID: string }).lastTransactionID;
    let at = -1;
    for (let i = 0; i < 60 && at < 0; i++) {
      await push(r, first, i, i + 1);
      await settle(r, first);
      await new Promise((res) => setTimeout(res, 60)); // a rebase under way finishes
      const b = (first.journal.contents().baseline as { lastTransactionID: string }).lastTransactionID;
      // Rebased after this price, and nothing journaled since (the rebase compacts: the log is empty):
      // the rebase's strategy snapshot is what a crash now restarts from. Copy the journal as a crash leaves it.
      if (b !== baseline && statSync(join(first.journal.dir, 'journal.log')).size === 0) {
        cpSync(first.journal.dir, crashDir, { recursive: true });
        at = i;
      }
      baseline = b;
    }
    const crashed = first.state as PingPongState;
    await first.stop('first');
    expect(at).toBeGreaterThanOrEqual(0);

    const second = r.runner({ journalDir: crashDir });
    await second.start();
    await delivered(second, 1); // path[at] again
    const afterRepeat = second.ticks;
    const restored = second.state as PingPongState;
    await push(r, second, at + 1, at + 4);
    await settle(r, second);
    const s2 = second.state as PingPongState;
    await second.stop('end');
    console.log(
      `[repeat price, rebase] crash copy after price ${at} (rebased to ${baseline}); restart: the repeated price made ${afterRepeat} ticks; state ${JSON.stringify(restored)} -> ${JSON.stringify(s2)}`,
    );
    expect(afterRepeat).toBe(0);
    expect(restored).toEqual(crashed);
    expect(s2.ticks).toBe(crashed.ticks + 3);
    expect(s2.again).toBe(0);
  });
});
