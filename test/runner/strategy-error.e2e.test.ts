import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineStrategy } from '../../src/strategy/api.ts';
import { pricePath, rig, startFxflowRun, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let r: Rig | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await r?.close();
  r = undefined;
});

describe('a live strategy that throws', () => {
  // rxjs rethrows what a subscriber throws from a timer: before the engine caught handler errors
  // itself, this was an uncaught exception (a crash, and a failure of this test run) instead of a
  // stopped run, and the ticks after it still reached the strategy.
  it('stops the run by itself, says which handler threw and when, and submits nothing more', async () => {
    r = await rig();
    let ticks = 0;
    const fragile = defineStrategy({
      name: 'fragile',
      params: {},
      subscribe: { ticks: ['EUR_USD'] },
      onTick(ctx) {
        ticks++;
        if (ticks === 1) return [ctx.market('EUR_USD', 1000)];
        if (ticks === 3) throw new RangeError('position sizing failed');
        return ticks > 3 ? [ctx.market('EUR_USD', 1000)] : undefined;
      },
    });
    const runner = r.runner({ strategy: fragile as never, name: 'fragile', params: {} });
    await runner.start();
    const path = pricePath(6);
    for (const p of path) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await new Promise((res) => setTimeout(res, 30));
    }
    // The run ends on its own (no stop from here).
    await Promise.race([
      runner.done,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the run did not stop')), 10_000)),
    ]);
    const res = await runner.stop('not this one');
    console.log(
      `[strategy error] run ended with reason: ${res.reason}; handler calls ${ticks}, intents ${res.intents}`,
    );
    expect(res.reason).toMatch(
      /^error: strategy 'fragile' threw in onTick at 2024-01-02T10:00:0\d\.\d{3}Z: position sizing failed$/,
    );
    expect(ticks).toBe(3);
    expect(res.intents).toBe(1);
    const { transactions } = await r.rest.transactionsSinceId(r.accountID, '0');
    expect(transactions.filter((t) => t.type === 'MARKET_ORDER')).toHaveLength(1);
  });

  it("`fxflow run` prints the report and exits 1 with the strategy's error", async () => {
    r = await rig();
    const file = join(r.journalDir, 'fragile-cli.ts');
    writeFileSync(
      file,
      `import { defineStrategy } from ${JSON.stringify(join(ROOT, 'src/strategy/api.ts'))};
let ticks = 0;
export default defineStrategy({
  name: 'fragile-cli',
  params: {},
  subscribe: { ticks: ['EUR_USD'] },
  onTick() {
    if (++ticks === 2) throw new Error('state went bad');
  },
});
`,
    );
    const run = await startFxflowRun(r.sandbox, file, [
      '--journal',
      join(r.journalDir, 'journal'),
      '--log-file',
      join(r.journalDir, 'run.log'),
    ]);
    child = run.proc;
    for (const p of pricePath(4)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await new Promise((res) => setTimeout(res, 50));
    }
    const code = await Promise.race([
      run.exited,
      new Promise<'hung'>((res) => setTimeout(() => res('hung'), 15_000)),
    ]);
    console.log(`[strategy error] fxflow run exited ${code}; stderr: ${run.err().trim()}`);
    expect(code).toBe(1);
    expect(run.out()).toMatch(
      /\(run: error: strategy 'fragile-cli' threw in onTick at [^)]+: state went bad\)/,
    );
    expect(run.err().trim()).toMatch(
      /^fxflow: the run stopped on an error, see the report above: strategy 'fragile-cli' threw in onTick at \S+: state went bad$/,
    );
  });
});
