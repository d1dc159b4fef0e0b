// `fxflow walkforward --out <folder>` into a folder that holds a finished walk-forward: the same one
// again has nothing to run (its result as saved, no file written); another one is refused with one
// line saying what differs and how to run it (its files would mix with the old: window folders of
// other periods, trials of another space).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const exec = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-wf-rerun-'));

async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const wf = (out: string, fast = '5,10', train = '2mo'): string[] => [
  'walkforward',
  'strategies/sma-cross.ts',
  '--param',
  `fast=${fast}`,
  '--param',
  'slow=20',
  '--train',
  train,
  '--test',
  '1mo',
  '--from',
  '2024-01-01',
  '--to',
  '2024-05-01',
  '--workers',
  '1',
  '--out',
  out,
];

/** Every file of a folder (recursively) with its bytes and modification time. */
function snapshot(dir: string): Record<string, { bytes: string; mtime: number }> {
  const out: Record<string, { bytes: string; mtime: number }> = {};
  for (const f of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const p = join(f.parentPath, f.name);
    out[p] = { bytes: readFileSync(p, 'latin1'), mtime: statSync(p).mtimeMs };
  }
  return out;
}

describe('walkforward into a folder holding a finished walk-forward', () => {
  it('the same walk-forward again: nothing to run, its saved result printed, no file written; another one: refused in one line naming what differs and the way out', async () => {
    const out = join(tmp, 'wf');
    const first = await fxflow(...wf(out));
    expect(first.code, first.stderr).toBe(0);
    const before = snapshot(out);
    expect(Object.keys(before)).toContain(join(out, 'walkforward.json'));

    const again = await fxflow(...wf(out));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(
        `^Nothing to run: ${out} holds this walk-forward, finished \\(the same strategy, data, settings and windows\\)`,
      ),
    );
    // The same table as the first run printed (its figures as saved).
    const table = (s: string): string => s.slice(s.indexOf('walkforward sma-cross:'), s.indexOf('Saved in'));
    expect(table(again.stdout)).toBe(table(first.stdout));
    expect(again.stdout).toContain(`Walk-forward page: ${join(out, 'walkforward.html')}`);
    expect(snapshot(out)).toEqual(before);

    // Other params and another training length into the same folder.
    const other = await fxflow(...wf(out, '5,10,15', '1mo'));
    expect(other.code).toBe(1);
    expect(other.stdout).toBe('');
    const lines = other.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^fxflow: ${out} holds a finished walk-forward with other settings \\(`),
    );
    expect(lines[0]).toContain('train "2mo" there, "1mo" now');
    expect(lines[0]).toContain('params {"swept":[{"name":"fast"');
    expect(lines[0]).toContain(
      `Give another --out folder (without --out, each walk-forward gets its own folder under runs/walkforward), or delete ${out} to run this one there`,
    );
    expect(snapshot(out)).toEqual(before);
  }, 180_000);
});
