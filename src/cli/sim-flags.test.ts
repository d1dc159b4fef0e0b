import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { overrides, type OptimizeArgs } from './optimize.ts';
import { SIM_FLAGS, simFlagOverrides } from './sim-flags.ts';

/**
 * Issue 25, item 8: one set of data, fill and cost flags, defined once (sim-flags.ts) and accepted
 * alike by every command that runs the simulator on historical data.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const help = async (...args: string[]): Promise<string> =>
  (
    await promisify(execFile)(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args, '--help'], {
      cwd: ROOT,
    })
  ).stdout;

describe('the simulator flags', () => {
  it('backtest, optimize and walkforward list every data, fill and cost flag; replay and run the fill and cost flags', async () => {
    for (const cmd of ['backtest', 'optimize', 'walkforward']) {
      const text = await help(cmd);
      for (const flag of Object.keys(SIM_FLAGS))
        expect(text, `${cmd} --${flag}`).toMatch(new RegExp(`--${flag}\\b`));
    }
    // replay and run --broker sim: the fill and cost flags their simulators use (prices are the run's own).
    for (const cmd of ['replay', 'run']) {
      const text = await help(cmd);
      for (const flag of ['market-hours', 'slippage', 'latency', 'commission'])
        expect(text, `${cmd} --${flag}`).toMatch(new RegExp(`--${flag}\\b`));
    }
  });

  it('optimize and walkforward read them into the config as backtest does: --no-market-hours, --path exact, --slippage, --financing-history', () => {
    const a = {
      strategy: 's.ts',
      search: 'grid',
      seed: 1,
      objective: 'sharpe',
      batch: 1,
      lag: 2,
      top: 10,
      marketHours: false,
      path: 'exact',
      slippage: 'fixed:0.5',
      commission: 'oanda-core',
      financingHistory: 'data/catalog',
      spread: 'fixed',
      spreadPips: 1.2,
    } as OptimizeArgs;
    const o = overrides(a);
    expect(o.fill).toEqual({ marketHours: false, path: 'exact', slippage: 'fixed:0.5' });
    expect(o.costs).toEqual({ commission: 'oanda-core', financingHistory: resolve('data/catalog') });
    expect(o.data).toEqual({ spread: 'fixed', spreadPips: 1.2 });
    expect(simFlagOverrides({ marketHours: false }).fill).toEqual({ marketHours: false });
  });
});
