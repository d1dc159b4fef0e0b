import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * One catalog rule for every command (src/adapters/catalog/location.ts), tried as a user in a
 * project of their own: the working folder's data/catalog, --catalog, FXFLOW_CATALOG, a config
 * file's relative data.catalog, and the bundled sample in the user's cache when there is none.
 */

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const STRATEGY = join(ROOT, 'strategies/sma-cross.ts');
const work = mkdtempSync(join(tmpdir(), 'fxflow-catalog-'));
// The user's cache, seeded with the sample the test setup generated (as a first use would generate it).
const xdg = join(work, 'xdg');
mkdirSync(join(xdg, 'fxflow'), { recursive: true });
symlinkSync(join(ROOT, 'data/catalog'), join(xdg, 'fxflow', 'sample'), 'junction');

async function fxflow(
  cwd: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { FXFLOW_CATALOG: _c, ...base } = process.env;
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd,
      env: { ...base, XDG_CACHE_HOME: xdg, ...env },
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const BT = [
  'backtest',
  STRATEGY,
  '--instrument',
  'AUD_USD',
  '--granularity',
  'H1',
  '--from',
  '2024-01-01',
  '--to',
  '2024-02-01',
  '--no-save',
  '--no-typecheck',
  '--json',
];

/** A project folder holding AUD_USD_H1.csv (January 2024, the sample's EUR_USD candles under another name). */
function project(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(ROOT, 'data/catalog/EUR_USD/H1/2024-01.csv'), join(dir, 'AUD_USD_H1.csv'));
  return dir;
}

const sourceOf = (stdout: string): string => JSON.stringify((JSON.parse(stdout) as { data: unknown }).data);

describe('the catalog a command reads and writes', () => {
  it('data import writes ./data/catalog of the working folder, and backtest there reads it', async () => {
    const dir = project('p1');
    const imp = await fxflow(
      dir,
      {},
      'data',
      'import',
      'AUD_USD_H1.csv',
      '--instrument',
      'AUD_USD',
      '--granularity',
      'H1',
    );
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout).toContain(join(dir, 'data/catalog'));
    expect(existsSync(join(dir, 'data/catalog/AUD_USD/H1/2024-01.csv'))).toBe(true);
    const bt = await fxflow(dir, {}, ...BT);
    expect(bt.code, bt.stderr).toBe(0);
    expect(sourceOf(bt.stdout)).toContain(join(dir, 'data/catalog'));
    // The run folder's config.json names that catalog by its full path: --config of it reads it from anywhere.
    const saved = await fxflow(
      dir,
      {},
      ...BT.filter((x) => x !== '--no-save' && x !== '--json'),
      '--runs-dir',
      join(work, 'runs'),
    );
    expect(saved.code, saved.stderr).toBe(0);
    const runDir = /Run saved in (.+)\n/.exec(saved.stdout)![1]!;
    expect(
      (JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8')) as { data: { catalog: string } }).data
        .catalog,
    ).toBe(join(dir, 'data/catalog'));
    const again = await fxflow(work, {}, ...BT, '--config', join(runDir, 'config.json'));
    expect(again.code, again.stderr).toBe(0);
    expect(sourceOf(again.stdout)).toContain(join(dir, 'data/catalog'));
    const list = await fxflow(dir, {}, 'data', 'list');
    expect(list.stdout.split('\n')[0]).toBe(`Catalog ${join(dir, 'data/catalog')}`);
    expect(list.stdout).toMatch(/AUD_USD\s+H1/);
    // An instrument it lacks: the message names the catalog it looked in.
    const none = await fxflow(dir, {}, ...BT.map((a) => (a === 'AUD_USD' ? 'NZD_USD' : a)));
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain(`no NZD_USD H1 data in the catalog ${join(dir, 'data/catalog')}`);
  });

  it("--catalog, FXFLOW_CATALOG and a config file's relative data.catalog name the same folder from anywhere, the flag first", async () => {
    const dir = project('p2');
    const elsewhere = join(work, 'elsewhere');
    mkdirSync(elsewhere);
    const imp = await fxflow(
      dir,
      {},
      'data',
      'import',
      'AUD_USD_H1.csv',
      '--instrument',
      'AUD_USD',
      '--granularity',
      'H1',
      '--catalog',
      'mine',
    );
    expect(imp.code, imp.stderr).toBe(0);
    expect(existsSync(join(dir, 'mine/AUD_USD/H1'))).toBe(true);
    expect(existsSync(join(dir, 'data'))).toBe(false);
    const flag = await fxflow(dir, {}, ...BT, '--catalog', 'mine');
    expect(flag.code, flag.stderr).toBe(0);
    expect(sourceOf(flag.stdout)).toContain(join(dir, 'mine'));
    const env = await fxflow(elsewhere, { FXFLOW_CATALOG: join(dir, 'mine') }, ...BT);
    expect(env.code, env.stderr).toBe(0);
    expect(sourceOf(env.stdout)).toContain(join(dir, 'mine'));
    mkdirSync(join(dir, 'cfg'));
    writeFileSync(join(dir, 'cfg/run.json'), JSON.stringify({ data: { catalog: '../mine' } }));
    const cfg = await fxflow(elsewhere, {}, ...BT, '--config', join(dir, 'cfg/run.json'));
    expect(cfg.code, cfg.stderr).toBe(0);
    expect(sourceOf(cfg.stdout)).toContain(join(dir, 'mine'));
    // The flag over the variable: an empty catalog named by the flag is the one looked in.
    const over = await fxflow(
      elsewhere,
      { FXFLOW_CATALOG: join(dir, 'mine') },
      ...BT,
      '--catalog',
      join(work, 'empty'),
    );
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain(`the catalog ${join(work, 'empty')}`);
    const listed = await fxflow(elsewhere, { FXFLOW_CATALOG: join(dir, 'mine') }, 'data', 'list');
    expect(listed.stdout.split('\n')[0]).toBe(`Catalog ${join(dir, 'mine')}`);
  });

  it('with no data/catalog in the working folder, the default reads the bundled sample in the user cache', async () => {
    const dir = join(work, 'bare');
    mkdirSync(dir);
    const bt = await fxflow(
      dir,
      {},
      'backtest',
      STRATEGY,
      '--from',
      '2024-01-01',
      '--to',
      '2024-02-01',
      '--no-save',
      '--no-typecheck',
      '--json',
    );
    expect(bt.code, bt.stderr).toBe(0);
    expect(sourceOf(bt.stdout)).toContain(join(xdg, 'fxflow', 'sample'));
    expect(readdirSync(dir)).toEqual([]);
    const list = await fxflow(dir, {}, 'data', 'list');
    expect(list.stdout.split('\n')[0]).toContain(
      `Catalog ${join(xdg, 'fxflow', 'sample')} (the bundled synthetic sample`,
    );
    // A user cache with no sample yet: data list says so and generates nothing.
    const fresh = join(work, 'fresh-cache');
    const empty = await fxflow(dir, { XDG_CACHE_HOME: fresh }, 'data', 'list');
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toBe(
      `Catalog ${join(fresh, 'fxflow', 'sample')} (the bundled synthetic sample: ${join(dir, 'data/catalog')} holds nothing)\nThe bundled sample is not generated yet: \`fxflow data sample\` (or the first backtest on it) generates it there.\n`,
    );
    expect(existsSync(fresh)).toBe(false);
  });
});
