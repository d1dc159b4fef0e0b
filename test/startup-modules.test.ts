import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { helpAsked } from '../src/cli/main.ts';
import { tenCandles } from './bench/startup.ts';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'fxflow-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A module resolve hook, registered before fxflow starts, that appends every module it resolves
// (file: URLs: fxflow's own and its packages') to the file named by FXFLOW_TEST_MODULES. It sees
// import and import(), not require(): a CommonJS package shows as its entry point alone.
const HOOK = join(dir, 'hook.mjs');
writeFileSync(
  HOOK,
  `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.startsWith('file:')) appendFileSync(process.env.FXFLOW_TEST_MODULES, r.url + '\\\\n');
  return r;
}\`));
`,
);

let n = 0;
/** Runs fxflow from its sources with `args` and returns every module it resolved (file: URLs). */
async function modulesLoadedBy(args: string[]): Promise<string[]> {
  const out = join(dir, `modules-${++n}.txt`);
  writeFileSync(out, '');
  await run(process.execPath, ['--import', HOOK, join(ROOT, 'bin/fxflow.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, FXFLOW_RUN_FROM: 'source', FXFLOW_TEST_MODULES: out },
  }).catch((e: unknown) => e);
  return [
    ...new Set(
      readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ),
  ];
}

/** The BullMQ and ioredis modules that fxflow `args` resolved. */
const queueModulesLoadedBy = async (args: string[]): Promise<string[]> =>
  (await modulesLoadedBy(args)).filter((u) => /node_modules\/(bullmq|ioredis)\//.test(u));

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

/** `url` as a path under the repository (src/cli/main.ts, node_modules/rxjs/...), or undefined outside it. */
const inRepo = (url: string): string | undefined =>
  url.startsWith(`file://${ROOT}/`) ? url.slice(`file://${ROOT}/`.length) : undefined;

// What only other commands need: a backtest or `--version` loading one of these is start-up time
// spent for nothing (each was measured: docs/performance.md, "Stop 31").
const NOT_FOR_A_BACKTEST = [
  /^node_modules\/undici\//, // the v20 HTTP client (run, record, auth, data download)
  /^node_modules\/(bullmq|ioredis)\//, // the Redis queue
  /^node_modules\/rxjs\/dist\/cjs\/index\.js$/, // all of rxjs: the simulator needs Observable alone
  /^node_modules\/technicalindicators\//, // required by the first ctx.indicator of its kinds
  /^src\/(sandbox|runner|research)\//, // the sandbox server, the live runner, the sweeps
  /^src\/adapters\/v20\/(http|rest|execution|stream|oauth)\.ts$/, // the live broker
  /^src\/cli\/(run|sandbox|record|replay|optimize|walkforward|worker|data|auth|report|init|download)\.ts$/, // other commands
];

describe('start-up: each command loads its own modules (issue 27, item 3)', () => {
  it('fxflow --version loads none of fxflow; the top help no command, no engine, no pino, no rxjs', async () => {
    // bin/fxflow.js answers `--version` alone from package.json.
    const version = (await modulesLoadedBy(['--version'])).map(inRepo).filter((p) => p !== undefined);
    expect(version.filter((p) => p.startsWith('src/') || p.startsWith('node_modules/'))).toEqual([]);
    const loaded = (await modulesLoadedBy(['--help'])).map(inRepo).filter((p) => p !== undefined);
    expect(loaded.filter((p) => p.startsWith('src/')).sort()).toEqual([
      'src/cli/errors.ts',
      'src/cli/main.ts',
      'src/cli/v8-tuning.ts',
      'src/cli/version.ts',
      'src/domain/package-root.ts',
    ]);
    expect(loaded.filter((p) => /^node_modules\/(pino|rxjs|luxon|decimal\.js)\//.test(p))).toEqual([]);
    // The hook sees what it is asked to: yargs itself is loaded.
    expect(loaded.some((p) => p.startsWith('node_modules/yargs/'))).toBe(true);
  }, 60_000);

  it('a 10-candle backtest with its run folder loads the backtest and none of what only other commands need', async () => {
    const data = tenCandles(dir);
    const loaded = (
      await modulesLoadedBy([
        'backtest',
        'strategies/sma-cross.ts',
        '--data',
        data,
        '--instrument',
        'EUR_USD',
        '--granularity',
        'H1',
        '--from',
        '2024-03-04',
        '--to',
        '2024-03-05',
        '--runs-dir',
        join(dir, 'runs'),
      ])
    )
      .map(inRepo)
      .filter((p) => p !== undefined);
    // It ran (its run folder holds the report page) and the hook saw the backtest's own modules.
    const [runDir] = readdirSync(join(dir, 'runs'));
    expect(existsSync(join(dir, 'runs', runDir!, 'report.html'))).toBe(true);
    for (const p of [
      'src/cli/backtest.ts',
      'src/app/backtest.ts',
      'src/adapters/sim/broker.ts',
      'node_modules/rxjs/dist/cjs/internal/Observable.js',
    ])
      expect(loaded, p).toContain(p);
    expect(loaded.filter((p) => NOT_FOR_A_BACKTEST.some((r) => r.test(p)))).toEqual([]);
  }, 60_000);
});

describe('start-up: help text wrapped only when it is printed', () => {
  it('knows when help is asked for', () => {
    for (const a of [['--help'], ['backtest', '-h'], ['backtest', '-qh'], ['--help=true']])
      expect(helpAsked(a), a.join(' ')).toBe(true);
    for (const a of [
      ['backtest', 's.ts', '--data', 'x.csv'],
      ['--version'],
      ['-v'],
      ['backtest', '--no-save', '--hedging'],
    ])
      expect(helpAsked(a), a.join(' ')).toBe(false);
  });

  it('--help and -h print help wrapped to the width (100 columns when not a terminal)', async () => {
    for (const flag of ['--help', '-h']) {
      const { stdout } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), 'backtest', flag], {
        cwd: ROOT,
        env: { ...process.env, FXFLOW_RUN_FROM: 'source' },
      });
      const lines = stdout.split('\n');
      expect(lines.length).toBeGreaterThan(20);
      expect(Math.max(...lines.map((l) => l.length)), flag).toBeLessThanOrEqual(100);
    }
  }, 60_000);
});
