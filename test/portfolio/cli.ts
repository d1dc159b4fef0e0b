// What the portfolio tests run: `fxflow` as a whole process from the repository, and a backtest into
// a runs folder of its own whose summary.json they read.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';

export const ROOT = resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);

/** `fxflow <args>` from the repository's root (its bin), output kept. */
export const fxflow = (...args: string[]) =>
  exec(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], { cwd: ROOT, maxBuffer: 64 << 20 });

/** `fxflow backtest <args>` into a fresh runs folder: its summary, its run folder and what it printed. */
export async function backtestRun<S>(
  args: readonly string[],
  prefix = 'fxflow-portfolio-',
): Promise<{ summary: S; dir: string; stdout: string }> {
  const runs = mkdtempSync(join(tmpdir(), prefix));
  const r = await fxflow('backtest', ...args, '--no-typecheck', '--runs-dir', runs);
  const dirs = readdirSync(runs);
  expect(dirs).toHaveLength(1);
  const dir = join(runs, dirs[0]!);
  return {
    summary: JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).summary as S,
    dir,
    stdout: r.stdout,
  };
}
