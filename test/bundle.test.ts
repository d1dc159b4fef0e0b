import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript with no declarations (it runs before TypeScript can be loaded)
import { buildState } from '../scripts/build-stamp.mjs';

/**
 * The build's bundle (dist/bundle/, scripts/build.mjs) is what bin/fxflow.js runs
 * (test/build.test.ts proves which files a start loads): every command works from it, its sweep
 * threads start from its worker entry, the files fxflow ships (instruments, market calendar,
 * report page) are found from it, and a strategy's `import 'fxflow'` is the bundle itself, so the
 * strategy and the runtime share one copy of each class.
 */
const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/fxflow.js');
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'fxflow-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = (from: 'dist' | 'source'): NodeJS.ProcessEnv => ({
  ...process.env,
  FXFLOW_RUN_FROM: from,
  FXFLOW_DATA_CACHE: join(dir, 'cache'),
});

async function fxflow(
  from: 'dist' | 'source',
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: env(from),
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

beforeAll(async () => {
  // The build of the sources as they are (nothing to do when dist/ is current).
  if (!(buildState as (root: string) => { current: boolean })(ROOT).current)
    await run(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT });
}, 300_000);

describe('every command runs from the bundle', () => {
  it("each command and subcommand prints its help; the top help and three commands' the same bytes as from the sources", async () => {
    const commands = [
      [],
      ['backtest'],
      ['record'],
      ['init'],
      ['optimize'],
      ['walkforward'],
      ['worker'],
      ['data'],
      ['data', 'import'],
      ['data', 'download'],
      ['auth'],
      ['journal'],
      ['journal', 'clear-halt'],
      ['run'],
      ['replay'],
      ['sandbox'],
      ['report'],
      ['compare'],
    ];
    for (const c of commands) {
      const bundled = await fxflow('dist', ...c, '--help');
      expect(bundled.code, c.join(' ')).toBe(0);
      expect(bundled.stdout, c.join(' ')).toContain('fxflow');
      // From the sources too (slower to start: a few, each kind of command once).
      if (c.length === 0 || ['backtest', 'optimize', 'data import'].includes(c.join(' ')))
        expect(bundled, c.join(' ')).toEqual(await fxflow('source', ...c, '--help'));
    }
    // A usage mistake: yargs' messages (its locale files, found from the bundle).
    const mistake = await fxflow('dist', 'replay');
    expect(mistake.code).not.toBe(0);
    expect(mistake.stderr).toContain('Not enough non-option arguments: got 0, need at least 1');
  }, 240_000);

  it('backtest writes its run folder and report page; report rebuilds the page; compare pages two runs', async () => {
    const runs = join(dir, 'runs');
    const args = ['backtest', 'strategies/sma-cross.ts', '--from', '2024-01-02', '--to', '2024-02-01'];
    for (let i = 0; i < 2; i++) {
      const r = await fxflow('dist', ...args, '--runs-dir', runs);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/Trades \(closed\)\s+[1-9]/);
    }
    const folders = readdirSync(runs).map((f) => join(runs, f));
    expect(folders).toHaveLength(2);
    const page = readFileSync(join(folders[0]!, 'report.html'), 'utf8');
    // The page's own scripts (src/report/page/, copied to dist/) and the charts library, inlined.
    expect(page).toContain('LightweightCharts');
    const pageFiles = readdirSync(join(ROOT, 'src/report/page')).filter((f) => f.endsWith('.js'));
    expect(pageFiles.length).toBeGreaterThan(0);
    rmSync(join(folders[0]!, 'report.html'));
    expect((await fxflow('dist', 'report', folders[0]!)).code).toBe(0);
    expect(readFileSync(join(folders[0]!, 'report.html'), 'utf8')).toBe(page);
    const out = join(dir, 'compare.html');
    expect((await fxflow('dist', 'compare', ...folders, '--out', out)).code).toBe(0);
    expect(existsSync(out)).toBe(true);
  }, 120_000);

  it('optimize runs its trials on a worker thread started from the bundle, with the answers of the sources', async () => {
    const sweep = async (from: 'dist' | 'source', out: string): Promise<Record<string, unknown>> =>
      JSON.parse(
        (
          await fxflow(
            from,
            'optimize',
            'strategies/sma-cross.ts',
            '--param',
            'fast=4:16:4',
            '--param',
            'slow=20,30,40',
            '--from',
            '2024-01-01',
            '--to',
            '2024-04-01',
            '--workers',
            '2',
            '--out',
            out,
            '--json',
          )
        ).stdout,
      ) as Record<string, unknown>;
    const bundled = await sweep('dist', join(dir, 'sweep-dist'));
    const source = await sweep('source', join(dir, 'sweep-source'));
    expect(bundled.ran).toBe(12);
    expect(bundled.failed).toBe(0);
    for (const k of ['best', 'top', 'overfitting', 'trials']) expect(bundled[k], k).toEqual(source[k]);
    const files = (d: string): string[] =>
      ['trials.csv', 'trials.jsonl', 'returns.jsonl'].map((f) => readFileSync(join(dir, d, f), 'utf8'));
    expect(files('sweep-dist')).toEqual(files('sweep-source'));
  }, 180_000);
});

describe("a strategy's `import 'fxflow'` is the bundle that runs it", () => {
  it("one copy of each class: an error class the strategy imports is the library caller's, even beside another fxflow in its node_modules", async () => {
    // The strategy's folder holds a package named fxflow of its own (another copy, as an old install
    // or a vendored one would be): the running fxflow is given to the strategy all the same.
    const at = join(dir, 'strategy-project');
    mkdirSync(join(at, 'node_modules', 'fxflow'), { recursive: true });
    writeFileSync(join(at, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(
      join(at, 'node_modules', 'fxflow', 'package.json'),
      JSON.stringify({
        name: 'fxflow',
        type: 'module',
        exports: { '.': './index.js', './backtest': './index.js' },
      }),
    );
    writeFileSync(
      join(at, 'node_modules', 'fxflow', 'index.js'),
      'export class StrategyLoadError extends Error {}\nexport const defineStrategy = (s) => s;\n',
    );
    writeFileSync(
      join(at, 'strategy.ts'),
      `import { defineStrategy } from 'fxflow';
import { StrategyLoadError } from 'fxflow/backtest';
export default defineStrategy({
  params: {},
  subscribe: { candles: ['EUR_USD:H1'] },
  onCandle() {
    throw new StrategyLoadError('strategy.ts', 'thrown by the strategy');
  },
});
`,
    );
    // A plain Node script, as a library user writes it: 'fxflow/backtest' through the package's exports.
    const script = `import { backtest, StrategyLoadError } from ${JSON.stringify(join(ROOT, 'dist/bundle/library.js'))};
try {
  await backtest(${JSON.stringify(join(at, 'strategy.ts'))}, {}, undefined, { run: { from: '2024-01-02', to: '2024-01-03' } });
  console.log(JSON.stringify({ threw: false }));
} catch (e) {
  let x = e;
  while (x !== undefined && !(x instanceof StrategyLoadError) && x.cause !== undefined) x = x.cause;
  console.log(JSON.stringify({ threw: true, same: x instanceof StrategyLoadError, message: String(x?.message ?? e) }));
}`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: at,
      env: env('dist'),
    });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
      threw: true,
      same: true,
      message: 'strategy.ts: thrown by the strategy',
    });
  }, 120_000);
});
