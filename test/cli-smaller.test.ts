import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseDate } from '../src/app/config.ts';
import { backtest } from '../src/app/library.ts';
import { sandboxOptions } from '../src/cli/sandbox.ts';
import { ProgressBar } from '../src/cli/progress.ts';
import { parseUserTime } from '../src/domain/time.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/** The smaller items of issue 35: where report.html is, times without seconds, gtdTime strings, walkforward's help, report --open, one progress bar. */

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'fxflow-smaller-'));

async function fxflow(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

let savedRun = '';

describe('fxflow backtest says where its report is', () => {
  it('prints the path of report.html after "Run saved in"', async () => {
    const r = await fxflow([
      'backtest',
      'strategies/sma-cross.ts',
      '--from',
      '2024-01-01',
      '--to',
      '2024-02-01',
      '--runs-dir',
      join(tmp, 'runs'),
      '--no-typecheck',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const dir = /Run saved in (.+)\n/.exec(r.stdout)?.[1];
    expect(dir).toBeDefined();
    savedRun = dir!;
    expect(r.stdout).toContain(
      `Report: ${join(dir!, 'report.html')} (open it in a browser, or: fxflow report ${dir} --open)\n`,
    );
    expect(existsSync(join(dir!, 'report.html'))).toBe(true);
  });
});

describe('times without seconds', () => {
  it('"2024-01-02T00:00Z" and every minute-precision RFC 3339 time read as the same time with ":00" seconds', () => {
    expect(parseUserTime('2024-01-02T00:00Z')).toBe(Date.UTC(2024, 0, 2));
    expect(parseDate('2024-01-02T17:30+01:00')).toBe(Date.UTC(2024, 0, 2, 16, 30));
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1970, 0, 1) / 60_000, max: Date.UTC(2199, 11, 31) / 60_000 }),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        (minute, offset) => {
          const local = new Date(minute * 60_000 + offset * 60_000).toISOString().slice(0, 16);
          const zone =
            offset === 0
              ? 'Z'
              : `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
          expect(parseUserTime(`${local}${zone}`)).toBe(minute * 60_000);
          expect(parseUserTime(`${local}:00${zone}`)).toBe(minute * 60_000);
        },
      ),
    );
    expect(Number.isNaN(parseUserTime('2024-01-02T25:00Z'))).toBe(true);
    expect(Number.isNaN(parseUserTime('2024-01-02T00Z'))).toBe(true);
  });

  it('--from takes one, and so does the sandbox --start of docs/sandbox.md', () => {
    expect(loadConfig(undefined, { run: { from: '2024-01-02T00:00Z' } }).run.from).toBe('2024-01-02T00:00Z');
    expect(() => loadConfig(undefined, { run: { from: '2024-01-02T00:61Z' } })).toThrow(
      /--from \(run\.from\) has minute 61/,
    );
    expect(
      sandboxOptions({ port: 0, start: '2024-01-02T00:00Z' } as Parameters<typeof sandboxOptions>[0]).start,
    ).toBe(Date.UTC(2024, 0, 2));
  });
});

describe('gtdTime as a string', () => {
  const strategy = (gtd: string) =>
    defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:H1'] },
      init: () => ({ sent: false }),
      onCandle(ctx, s) {
        if (s.sent) return;
        // Far below the market: it can only expire.
        return {
          state: { sent: true },
          intents: [ctx.limit('EUR_USD', 1000, ctx.candle!.bc * 0.5, { gtdTime: gtd })],
        };
      },
    });
  const period = { run: { from: '2024-01-02', to: '2024-01-05' } };

  it('an RFC 3339 string is the expiry: the order is GTD at that time and expires then, with no reject', async () => {
    const r = await backtest(strategy('2024-01-03T12:00Z'), {}, join(ROOT, 'data/catalog'), period);
    const order = r.transactions.find((t) => t.type === 'LIMIT_ORDER') as unknown as
      { timeInForce: string; gtdTime: string } | undefined;
    expect(order).toMatchObject({ timeInForce: 'GTD' });
    expect(Date.parse(order!.gtdTime)).toBe(Date.UTC(2024, 0, 3, 12));
    const cancel = r.transactions.find((t) => t.type === 'ORDER_CANCEL') as unknown as
      { reason: string; time: string } | undefined;
    expect(cancel?.reason).toBe('TIME_IN_FORCE_EXPIRED');
    expect(Date.parse(cancel!.time)).toBe(Date.UTC(2024, 0, 3, 12));
    expect(r.transactions.filter((t) => t.type.endsWith('_REJECT'))).toEqual([]);
  });

  it('a string that is not a time stops the run at once, naming gtdTime and the forms it takes', async () => {
    await expect(backtest(strategy('tomorrow noon'), {}, join(ROOT, 'data/catalog'), period)).rejects.toThrow(
      /gtdTime must be a time in ms .* or an RFC 3339 string like "2024-03-01T17:00:00Z", got "tomorrow noon"/,
    );
  });
});

describe('walkforward --help', () => {
  it('shows the required --train and --test first', async () => {
    const r = await fxflow(['walkforward', '--help']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const train = lines.findIndex((l) => /^\s+--train\s.*\[required\]/.test(l));
    const test = lines.findIndex((l) => /^\s+--test\s.*\[required\]/.test(l));
    expect(train).toBeGreaterThan(0);
    expect(train).toBeLessThan(10);
    expect(test).toBe(train + 1);
  });
});

describe.skipIf(process.platform !== 'linux')('report --open', () => {
  /** A folder holding an `xdg-open` that records its argument and exits with `code`. */
  function opener(name: string, code: number): string {
    const bin = join(tmp, name);
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'xdg-open'),
      `#!/bin/sh\nprintf '%s' "$1" > "${join(bin, 'opened')}"\n${code === 0 ? '' : `echo "xdg-open: no method available for opening '$1'" >&2\n`}exit ${code}\n`,
    );
    chmodSync(join(bin, 'xdg-open'), 0o755);
    return bin;
  }

  it("says when the browser could not be opened (exit 1, the opener's reason), and opens the page when it can", async () => {
    expect(savedRun).not.toBe('');
    const failing = opener('failing', 3);
    const bad = await fxflow(['report', savedRun, '--open'], { PATH: `${failing}:${process.env.PATH}` });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`Report written to ${join(savedRun, 'report.html')}`);
    expect(bad.stderr).toBe(
      `fxflow: could not open the page in a browser: xdg-open exited 3: xdg-open: no method available for opening '${join(savedRun, 'report.html')}'. Open ${join(savedRun, 'report.html')} yourself\n`,
    );
    const working = opener('working', 0);
    const good = await fxflow(['report', savedRun, '--open'], { PATH: `${working}:${process.env.PATH}` });
    expect(good.code, good.stderr).toBe(0);
    expect(readFileSync(join(working, 'opened'), 'utf8')).toBe(join(savedRun, 'report.html'));
    const none = await fxflow(['report', savedRun, '--open'], { PATH: join(tmp, 'no-such-bin') });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'could not open the page in a browser: xdg-open is not installed (no desktop opener)',
    );
  });
});

describe('the progress bar', () => {
  /** A terminal-like stream that keeps what is written. */
  function terminal(): { stream: NodeJS.WriteStream; text: () => string } {
    const chunks: string[] = [];
    const w = new Writable({
      write(chunk, _enc, cb) {
        chunks.push(String(chunk));
        cb();
      },
    });
    return {
      stream: Object.assign(w, { isTTY: true }) as unknown as NodeJS.WriteStream,
      text: () => chunks.join(''),
    };
  }

  it("one class draws the backtest's events and a sweep's own detail: label, bar, percent, detail; nothing before its delay; cleared when done", () => {
    const t = terminal();
    const bar = new ProgressBar('optimize', t.stream, { delayMs: 0, everyMs: 1e9 });
    bar.show(0.5, '5/10  1.00 trials/s  ETA 5s', true);
    bar.show(0.6, 'not due', false);
    bar.show(1, '10/10  1.00 trials/s  ETA 0s', true);
    bar.done();
    expect(t.text()).toBe(
      `\roptimize [${'#'.repeat(15)}${'.'.repeat(15)}]  50.0%  5/10  1.00 trials/s  ETA 5s\x1b[K\roptimize [${'#'.repeat(30)}] 100.0%  10/10  1.00 trials/s  ETA 0s\x1b[K\r\x1b[K`,
    );
    const quiet = terminal();
    const slow = new ProgressBar('backtest', quiet.stream, { delayMs: 1e9 });
    slow.update(0.5, 1000);
    slow.done();
    expect(quiet.text()).toBe('');
  });
});
