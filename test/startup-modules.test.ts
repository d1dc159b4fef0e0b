import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { helpAsked } from '../src/cli/main.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'fxflow-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A module resolve hook, registered before fxflow starts, that appends every module it resolves
// under node_modules/bullmq or node_modules/ioredis to the file named by FXFLOW_TEST_MODULES.
const HOOK = join(dir, 'hook.mjs');
writeFileSync(
  HOOK,
  `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (/node_modules\\\\/(bullmq|ioredis)\\\\//.test(r.url)) appendFileSync(process.env.FXFLOW_TEST_MODULES, r.url + '\\\\n');
  return r;
}\`));
`,
);

let n = 0;
/** Runs fxflow from its sources with `args` and returns the BullMQ/ioredis modules it resolved. */
async function queueModulesLoadedBy(args: string[]): Promise<string[]> {
  const out = join(dir, `modules-${++n}.txt`);
  writeFileSync(out, '');
  await run(process.execPath, ['--import', HOOK, join(ROOT, 'bin/fxflow.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, FXFLOW_RUN_FROM: 'source', FXFLOW_TEST_MODULES: out },
  }).catch((e: unknown) => e);
  return readFileSync(out, 'utf8').split('\n').filter((l) => l !== '');
}

describe('start-up: BullMQ and ioredis load only for the Redis queue (issue 27, item 3)', () => {
  it('fxflow --version and optimize/walkforward --help load neither', async () => {
    expect(await queueModulesLoadedBy(['--version'])).toEqual([]);
    expect(await queueModulesLoadedBy(['optimize', '--help'])).toEqual([]);
    expect(await queueModulesLoadedBy(['walkforward', '--help'])).toEqual([]);
  }, 60_000);

  it('a worker (the queue itself) loads them: the hook sees what it is asked to', async () => {
    // Port 1 on loopback refuses at once: the worker reports it and exits.
    const loaded = await queueModulesLoadedBy(['worker', '--queue', 'redis://127.0.0.1:1/0']);
    expect(loaded.some((u) => u.includes('/bullmq/'))).toBe(true);
  }, 60_000);
});

describe('start-up: help text wrapped only when it is printed', () => {
  it('knows when help is asked for', () => {
    for (const a of [['--help'], ['backtest', '-h'], ['backtest', '-qh'], ['--help=true']]) expect(helpAsked(a), a.join(' ')).toBe(true);
    for (const a of [['backtest', 's.ts', '--data', 'x.csv'], ['--version'], ['-v'], ['backtest', '--no-save', '--hedging']]) expect(helpAsked(a), a.join(' ')).toBe(false);
  });

  it('--help and -h print help wrapped to the width (100 columns when not a terminal)', async () => {
    for (const flag of ['--help', '-h']) {
      const { stdout } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), 'backtest', flag], { cwd: ROOT, env: { ...process.env, FXFLOW_RUN_FROM: 'source' } });
      const lines = stdout.split('\n');
      expect(lines.length).toBeGreaterThan(20);
      expect(Math.max(...lines.map((l) => l.length)), flag).toBeLessThanOrEqual(100);
    }
  }, 60_000);
});
