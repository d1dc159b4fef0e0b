import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript with no declarations (it runs before TypeScript can be loaded)
import { buildState, stampOf, STAMP } from '../scripts/build-stamp.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
type State = { current: boolean; reason?: string };
const state = buildState as (root: string) => State;

/** A package root with sources and a build stamped from them (what scripts/build.mjs leaves). */
function stampedRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'fxflow-build-'));
  mkdirSync(join(root, 'src/cli'), { recursive: true });
  mkdirSync(join(root, 'src/research/fixtures'), { recursive: true });
  mkdirSync(join(root, 'dist/bundle'), { recursive: true });
  writeFileSync(join(root, 'tsconfig.json'), '{}\n');
  writeFileSync(join(root, 'tsconfig.build.json'), '{}\n');
  // Each entry prints where it runs from; the real bin/fxflow.js and scripts/ pick one.
  writeFileSync(join(root, 'src/cli/v8-tuning.ts'), 'export const tuneV8 = (): void => {};\n');
  writeFileSync(
    join(root, 'src/cli/main.ts'),
    "export async function main(): Promise<number> { console.log('from src/'); return 0; }\n",
  );
  writeFileSync(join(root, 'src/cli/main.test.ts'), '// a test: not an input of the build\n');
  writeFileSync(join(root, 'src/research/fixtures/f.ts'), '// a test fixture: not an input\n');
  writeFileSync(join(root, 'dist/bundle/v8-tuning.js'), 'export const tuneV8 = () => {};\n');
  writeFileSync(
    join(root, 'dist/bundle/cli.js'),
    "export async function main() { console.log('from dist/'); return 0; }\n",
  );
  writeFileSync(join(root, 'dist', STAMP), JSON.stringify(stampOf(root)));
  cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'scripts'), join(root, 'scripts'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'fxflow', type: 'module' }));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'junction');
  return root;
}

async function fxflowAt(root: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout, stderr } = await run(process.execPath, [join(root, 'bin/fxflow.js')], {
    env: { ...process.env, FXFLOW_RUN_FROM: '', ...env },
  });
  expect(stderr).toBe('');
  return stdout.trim();
}

describe('the build stamp: a build is used only when it was built from the sources as they are', () => {
  it('is current after the build; an edit, a new file or a removed file makes it stale, naming the file', () => {
    const root = stampedRoot();
    expect(state(root)).toEqual({ current: true });
    // Saved again with the same bytes (a checkout, an editor): a newer time alone is not a change.
    const main = join(root, 'src/cli/main.ts');
    utimesSync(main, new Date(), new Date(Date.now() + 60_000));
    expect(state(root)).toEqual({ current: true });
    // Tests and fixtures are not part of the build.
    writeFileSync(join(root, 'src/cli/main.test.ts'), '// edited\n');
    writeFileSync(join(root, 'src/research/fixtures/g.ts'), '// new\n');
    expect(state(root)).toEqual({ current: true });
    // The same size, other bytes: found by the hash.
    const text = readFileSync(main, 'utf8');
    writeFileSync(main, text.replace('from src/', 'FROM SRC/'));
    expect(state(root)).toEqual({ current: false, reason: 'src/cli/main.ts changed since the build' });
    writeFileSync(main, text);
    expect(state(root).current).toBe(true);
    writeFileSync(join(root, 'src/cli/new.ts'), 'export {};\n');
    expect(state(root)).toEqual({ current: false, reason: 'src/cli/new.ts is newer than the build' });
    rmSync(join(root, 'src/cli/new.ts'));
    rmSync(join(root, 'src/cli/v8-tuning.ts'));
    expect(state(root)).toEqual({
      current: false,
      reason: 'src/cli/v8-tuning.ts was removed since the build',
    });
    writeFileSync(join(root, 'tsconfig.build.json'), '{ "compilerOptions": {} }\n');
    rmSync(join(root, 'dist', STAMP));
    expect(state(root)).toEqual({ current: false, reason: 'there is no build in dist/' });
  });

  it('bin/fxflow.js runs dist/ when it is current, the sources when it is stale or missing, and dist/ alone in an installed package', async () => {
    const root = stampedRoot();
    expect(await fxflowAt(root)).toBe('from dist/');
    writeFileSync(
      join(root, 'src/cli/main.ts'),
      "export async function main(): Promise<number> { console.log('from src/, edited'); return 0; }\n",
    );
    expect(await fxflowAt(root)).toBe('from src/, edited');
    // Forced either way (the bench compares the two).
    expect(await fxflowAt(root, { FXFLOW_RUN_FROM: 'dist' })).toBe('from dist/');
    expect(await fxflowAt(root, { FXFLOW_RUN_FROM: 'source' })).toBe('from src/, edited');
    rmSync(join(root, 'dist'), { recursive: true });
    expect(await fxflowAt(root)).toBe('from src/, edited');
    // An installed package: no src/, no stamp to check.
    const installed = stampedRoot();
    rmSync(join(installed, 'src'), { recursive: true });
    rmSync(join(installed, 'dist', STAMP));
    expect(await fxflowAt(installed)).toBe('from dist/');
  }, 60_000);
});

/**
 * What a process of the real CLI loads, recorded by hooks preloaded with NODE_OPTIONS: every module
 * URL resolved (ESM, tsx's loader and fxflow's own files among them) and every CommonJS request
 * with the file it resolved to (TypeScript's compiler is required).
 */
const TRACE_HOOKS = `import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(log, 'esm ' + r.url + '\\n');
  return r;
}
`;
const TRACE = `import Module, { register } from 'node:module';
import { appendFileSync } from 'node:fs';
const log = process.env.FXFLOW_TRACE_LOG;
register(${JSON.stringify('./hooks.mjs')}, import.meta.url, { data: { log } });
const load = Module._load;
Module._load = function (request, parent, ...rest) {
  const exports = load.call(this, request, parent, ...rest);
  let file = '';
  try {
    file = ' ' + Module._resolveFilename(request, parent);
  } catch {}
  appendFileSync(log, 'cjs ' + request + file + '\\n');
  return exports;
};
`;

/** Runs the real CLI with the trace preloaded; returns what it loaded (one line each). */
async function traced(dir: string, env: Record<string, string>, ...args: string[]): Promise<string[]> {
  writeFileSync(join(dir, 'hooks.mjs'), TRACE_HOOKS);
  writeFileSync(join(dir, 'trace.mjs'), TRACE);
  const log = join(dir, `trace-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(log, '');
  const all = {
    ...process.env,
    FXFLOW_RUN_FROM: '',
    ...env,
    FXFLOW_TRACE_LOG: log,
    NODE_OPTIONS: `--import=${pathToFileURL(join(dir, 'trace.mjs')).href}`,
  };
  await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
    cwd: dir,
    env: all,
    maxBuffer: 64 << 20,
  });
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

async function currentBuild(): Promise<void> {
  // The build of the sources as they are (`npm run build`: nothing to do when dist/ is current; it
  // replaces dist/ by renames, and a stale dist/ is never run meanwhile).
  if (!state(ROOT).current) await run(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT });
  expect(state(ROOT)).toEqual({ current: true });
}

describe("a strategy's `import 'fxflow'` reaches the fxflow that runs it", () => {
  it('from the sources: src/, in an ES-module folder and in a CommonJS one; from the build: dist/', async () => {
    await currentBuild();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-which-'));
    const strategy =
      "import { defineStrategy } from 'fxflow';\nexport default defineStrategy({ params: {}, subscribe: { candles: ['EUR_USD:H1'] }, onCandle() {} });\n";
    mkdirSync(join(dir, 'esm'));
    writeFileSync(join(dir, 'esm/package.json'), '{ "type": "module" }\n');
    writeFileSync(join(dir, 'esm/s.ts'), strategy);
    // No package.json: tsx compiles the file to CommonJS, and its import becomes a require().
    mkdirSync(join(dir, 'cjs'));
    writeFileSync(join(dir, 'cjs/s.ts'), strategy);
    // What `fxflow` resolved to: an ES module's URL, or the file a require() resolved to.
    const entry = (lines: string[]): string[] =>
      // (A strategy compiled to the cache requires fxflow by its path, where tsx's required it by name.)
      lines
        .flatMap((l) =>
          l.startsWith('esm file:')
            ? [fileURLToPath(l.slice(4).replace(/\?.*$/, ''))]
            : l.startsWith('cjs ')
              ? [(l.split(' ')[2] ?? '').replace(/\?.*$/, '')]
              : [],
        )
        // (dist/index.js: the unbundled build of before, a second copy of fxflow beside the bundle.)
        .filter((f) =>
          [
            join(ROOT, 'src/index.ts'),
            join(ROOT, 'dist/bundle/index.js'),
            join(ROOT, 'dist/index.js'),
          ].includes(f),
        );
    for (const kind of ['esm', 'cjs']) {
      for (const [from, want] of [
        ['source', 'src/index.ts'],
        ['dist', 'dist/bundle/index.js'],
      ] as const) {
        const lines = await traced(
          dir,
          { FXFLOW_RUN_FROM: from, FXFLOW_DATA_CACHE: join(dir, 'cache') },
          'backtest',
          `${kind}/s.ts`,
          '--no-save',
          '--to',
          '2024-01-10',
          '--no-typecheck',
        );
        const got = [...new Set(entry(lines))];
        expect(got, `${kind} from ${from}`).toEqual([join(ROOT, want)]);
      }
    }
  }, 240_000);
});

describe('start-up paid once', () => {
  it("a current build runs no TypeScript of fxflow's; a strategy is compiled (esbuild) and type-checked (TypeScript) on its first run only, and no later run loads tsx, esbuild or TypeScript", async () => {
    await currentBuild();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-trace-'));
    // A strategy no earlier run has type-checked (its text is unique), and 10 candles of data.
    const strategy = join(dir, 'strategy.ts');
    writeFileSync(
      strategy,
      `import { defineStrategy } from 'fxflow';\n// ${dir}\nexport default defineStrategy({ params: {}, subscribe: { candles: ['EUR_USD:H1'] }, onCandle() {} });\n`,
    );
    const t0 = Date.parse('2024-03-04T10:00:00Z');
    const rows = Array.from(
      { length: 10 },
      (_, i) =>
        `${new Date(t0 + i * 3_600_000).toISOString()},1.1,1.1010,1.0990,1.1005,1.1001,1.1011,1.0991,1.1006,10`,
    );
    const data = join(dir, 'EUR_USD_H1.csv');
    writeFileSync(
      data,
      ['time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume', ...rows, ''].join('\n'),
    );
    const env = { FXFLOW_DATA_CACHE: join(dir, 'cache') };
    const fxflowTs = (lines: string[]): string[] =>
      lines.filter((l) => l.startsWith(`esm ${pathToFileURL(ROOT).href}/src/`));
    const tsx = (lines: string[]): boolean => lines.some((l) => l.includes('/node_modules/tsx/'));
    const esbuild = (lines: string[]): boolean => lines.some((l) => l.includes('/node_modules/esbuild/'));
    const compiler = (lines: string[]): boolean =>
      lines.some((l) => l === 'cjs typescript' || l.startsWith('cjs typescript '));

    // `--version` alone is answered by bin/fxflow.js from package.json: nothing of fxflow's loads.
    const versionOnly = await traced(dir, env, '--version');
    expect(versionOnly.filter((l) => l.includes('/dist/') || l.includes('/src/'))).toEqual([]);
    const version = await traced(dir, env, '--help');
    // What runs is the bundle (the top help: the command line, no command): its command-line entry
    // and some of the chunks it shares, nothing else of dist/.
    const inDist = (lines: string[]): string[] => [
      ...new Set(lines.filter((l) => l.includes('/dist/')).map((l) => l.replace(/^.*\/dist\//, 'dist/'))),
    ];
    expect(inDist(version).filter((f) => !f.startsWith('dist/bundle/chunk-'))).toEqual([
      'dist/bundle/v8-tuning.js',
      'dist/bundle/cli.js',
    ]);
    expect(inDist(version).length).toBeLessThan(10);
    expect(fxflowTs(version)).toEqual([]);
    expect([tsx(version), esbuild(version), compiler(version)]).toEqual([false, false, false]);

    const backtest = [
      'backtest',
      strategy,
      '--data',
      data,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'H1',
      '--no-save',
      '--no-market-hours',
    ];
    const first = await traced(dir, env, ...backtest);
    expect(fxflowTs(first)).toEqual([]);
    expect([tsx(first), esbuild(first), compiler(first)]).toEqual([false, true, true]);
    const second = await traced(dir, env, ...backtest);
    expect(fxflowTs(second)).toEqual([]);
    expect([tsx(second), esbuild(second), compiler(second)]).toEqual([false, false, false]);
    // What it ran is the cache's plain JavaScript.
    expect(
      second.filter((l) => l.startsWith(`esm ${pathToFileURL(join(dir, 'cache', 'strategies')).href}/`)),
    ).toHaveLength(1);
  }, 240_000);

  // The strategy cache (src/app/strategy-cache.ts): a strategy outside the repository, in an
  // ES-module folder and a CommonJS one, importing fxflow, technicalindicators, a package of its own
  // and a local helper, from the build: its second run loads no tsx and no compiler, and reaches the
  // very fxflow and technicalindicators files the first run did (those of the running fxflow).
  it('outside the repository, ES module and CommonJS: the same run, the same modules, without tsx on the second run', async () => {
    await currentBuild();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-outside-cache-'));
    const env = { FXFLOW_DATA_CACHE: join(dir, 'cache') };
    const strategy = `import { defineStrategy } from 'fxflow';
import { SMA } from 'technicalindicators';
import { units } from 'local-sizing';
import { scale } from './lib/scale.ts';

export default defineStrategy({
  params: {},
  subscribe: { candles: ['EUR_USD:H1'] },
  init: () => ({ done: false }),
  onCandle(ctx, s) {
    if (s.done) return;
    const ref = SMA.calculate({ period: 3, values: [...ctx.closes(3)] }).at(-1);
    if (ref === undefined) return;
    return { state: { done: true }, intents: [ctx.market('EUR_USD', units() * scale)] };
  },
});
`;
    const modules = (lines: string[]): string[] =>
      [
        ...new Set(
          lines.flatMap((l) =>
            l.startsWith('esm file:')
              ? [fileURLToPath(l.slice(4).replace(/\?.*$/, ''))]
              : l.startsWith('cjs /')
                ? [l.split(' ')[1]!]
                : [],
          ),
        ),
      ]
        .filter(
          (f) =>
            f.startsWith(join(ROOT, 'dist/')) ||
            f.startsWith(join(ROOT, 'node_modules/technicalindicators/')),
        )
        .sort();
    for (const kind of ['commonjs', 'module']) {
      const at = join(dir, kind);
      mkdirSync(join(at, 'node_modules', 'local-sizing'), { recursive: true });
      mkdirSync(join(at, 'lib'));
      if (kind === 'module') writeFileSync(join(at, 'package.json'), '{ "type": "module" }\n');
      writeFileSync(
        join(at, 'node_modules', 'local-sizing', 'package.json'),
        '{ "name": "local-sizing", "main": "index.js" }\n',
      );
      writeFileSync(join(at, 'node_modules', 'local-sizing', 'index.js'), 'exports.units = () => 2500;\n');
      writeFileSync(join(at, 'lib', 'scale.ts'), 'export const scale: number = 2;\n');
      writeFileSync(join(at, 'mine.ts'), strategy);
      const args = [
        'backtest',
        join(at, 'mine.ts'),
        '--json',
        '--no-save',
        '--from',
        '2024-01-02',
        '--to',
        '2024-02-01',
        '--no-typecheck',
      ]; // New Year's Day is closed
      const units = async (): Promise<string | undefined> =>
        (
          JSON.parse(
            (
              await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
                cwd: at,
                env: { ...process.env, ...env },
                maxBuffer: 64 << 20,
              })
            ).stdout,
          ) as { transactions: { type: string; units?: string }[] }
        ).transactions.find((t) => t.type === 'ORDER_FILL')?.units;
      expect(await units(), kind).toBe('5000');
      const first = await traced(at, env, ...args);
      const second = await traced(at, env, ...args);
      expect(
        second.some((l) => l.includes('/node_modules/tsx/') || l.includes('/node_modules/esbuild/')),
        kind,
      ).toBe(false);
      expect(modules(second), kind).toEqual(modules(first));
      expect(
        modules(second).filter((f) => !f.startsWith(join(ROOT, 'dist/bundle/chunk-'))),
        kind,
      ).toEqual([
        join(ROOT, 'dist/bundle/cli.js'),
        join(ROOT, 'dist/bundle/index.js'),
        join(ROOT, 'dist/bundle/v8-tuning.js'),
        join(ROOT, 'dist/report/page/human-time.cjs'),
        join(ROOT, 'node_modules/technicalindicators/dist/index.js'),
      ]);
      // An edit to the helper is run at once.
      writeFileSync(join(at, 'lib', 'scale.ts'), 'export const scale: number = 3;\n');
      expect(await units(), kind).toBe('7500');
      // Each load of a strategy by the build evaluates it afresh, as tsx's tsImport did (a
      // module-level counter starts again), in either format.
      writeFileSync(
        join(at, 'count.ts'),
        "import { defineStrategy } from 'fxflow';\nlet loads = 0;\nloads++;\nexport default defineStrategy({ params: { loads }, subscribe: { candles: ['EUR_USD:H1'] } });\n",
      );
      const script = `import { backtest } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist/bundle/library.js')).href)};
const period = { run: { from: '2024-01-02', to: '2024-01-03' } };
const a = await backtest(${JSON.stringify(join(at, 'count.ts'))}, {}, undefined, period);
const b = await backtest(${JSON.stringify(join(at, 'count.ts'))}, {}, undefined, period);
console.log(JSON.stringify([a.params.loads, b.params.loads]));`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        cwd: at,
        env: { ...process.env, ...env },
      });
      expect(JSON.parse(stdout.trim().split('\n').pop()!), kind).toEqual([1, 1]);
    }
  }, 240_000);
});
