import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepModel } from '../src/report/sweep-model.ts';

// sweep.html's "run it on its own" command, pasted into a shell as a user would: it must give the best trial's figures.
const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/fxflow.js');
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-sweep-command-'));

function sh(command: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(tmp, 'bin')}:${process.env.PATH}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((res) => child.on('close', (code) => res({ code, stdout, stderr })));
}

describe("sweep.html's command for the best trial", () => {
  it('keeps --config, --spread and every other flag: pasted into a shell, it reproduces the best trial exactly', async () => {
    // `fxflow` on the PATH is this checkout's.
    const { mkdirSync, chmodSync } = await import('node:fs');
    mkdirSync(join(tmp, 'bin'));
    writeFileSync(
      join(tmp, 'bin/fxflow'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
    );
    chmodSync(join(tmp, 'bin/fxflow'), 0o755);
    const config = join(tmp, 'my config.json');
    writeFileSync(
      config,
      JSON.stringify({ account: { initialBalance: 25000 }, costs: { financing: false } }),
    );
    const out = join(tmp, 'sweep');
    const sweep = await sh(
      `fxflow optimize strategies/sma-cross.ts --param fast=5,10 --param slow=20,40 --param units=3000 --from 2024-01-01 --to 2024-04-01 --config '${config}' --spread fixed --spread-pips 2.5 --path worst --workers 1 --out '${out}' --json`,
    );
    expect(sweep.stderr).toBe('');
    expect(sweep.code).toBe(0);
    const best = (
      JSON.parse(sweep.stdout) as {
        best: { metrics: { netPL: number; trades: number; spreadCost: number; initialBalance: number } };
      }
    ).best;
    const command = sweepModel(out).bestCommand!;
    expect(command).toMatch(/^fxflow backtest \S+sma-cross\.ts --config \S+config\.json /);
    const alone = await sh(`${command} --json --no-save`);
    expect(alone.code).toBe(0);
    const s = (JSON.parse(alone.stdout) as { summary: typeof best.metrics }).summary;
    expect(s.initialBalance).toBe(25000);
    expect({ netPL: s.netPL, trades: s.trades, spreadCost: s.spreadCost }).toEqual({
      netPL: best.metrics.netPL,
      trades: best.metrics.trades,
      spreadCost: best.metrics.spreadCost,
    });
  }, 120_000);

  it("the out-of-sample record of a walk-forward names its data source (the catalog's account of the series, not 'unknown')", async () => {
    const out = join(tmp, 'wf');
    const r = await sh(
      `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} walkforward strategies/sma-cross.ts --param fast=5,10 --param slow=20 --train 2mo --test 1mo --from 2024-01-01 --to 2024-05-01 --workers 1 --out '${out}'`,
    );
    expect(r.code).toBe(0);
    const { readFileSync } = await import('node:fs');
    const wf = JSON.parse(readFileSync(join(out, 'walkforward.json'), 'utf8')) as {
      windows: { outOfSample: { data: { series: { source: string; sides: string }[] } } }[];
    };
    for (const w of wf.windows) {
      const s = w.outOfSample.data.series[0]!;
      expect(s.source).toContain(join(ROOT, 'data/catalog'));
      expect(s.sides).not.toBe('unknown');
    }
  }, 120_000);
});
