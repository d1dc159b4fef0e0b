import fc from 'fast-check';
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { readTrailer, restamp } from './cache-file.ts';
import { cacheFileOf, cacheState, cachedCandles, cacheStats, listCache } from './candle-cache.ts';
import { DataError } from './errors.ts';
import { openCandles, type ReadOptions } from './formats.ts';

const root = mkdtempSync(join(tmpdir(), 'fxflow-cache-'));
let n = 0;
const fresh = (): { dir: string; file: string } => {
  const d = join(root, `t${++n}`);
  return { dir: join(d, 'cache'), file: join(d, 'data.csv') };
};

async function all(it: AsyncIterable<readonly Candle[]>): Promise<Candle[]> {
  const out: Candle[] = [];
  for await (const b of it) out.push(...b);
  return out;
}

/** A generic CSV of `rows` M1 candles from a seed: one-sided or bid/ask, prices of 5 decimals. */
function csv(rows: number, seed: number, twoSided: boolean): string {
  const lines = [
    twoSided ? 'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume' : 'time,o,h,l,c,volume',
  ];
  let p = 110_000 + (seed % 1000);
  let x = seed >>> 0 || 1;
  const rnd = (): number => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 1000) / 1000;
  for (let i = 0; i < rows; i++) {
    const o = p;
    const c = o + Math.round((rnd() - 0.5) * 40);
    const h = Math.max(o, c) + Math.round(rnd() * 10);
    const l = Math.min(o, c) - Math.round(rnd() * 10);
    p = c;
    const t = `${new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString().slice(0, 19)}Z`;
    const f = (v: number): string => (v / 1e5).toFixed(5);
    const side = [f(o), f(h), f(l), f(c)];
    lines.push(
      [
        t,
        ...side,
        ...(twoSided ? [f(o + 2), f(h + 2), f(l + 2), f(c + 2)] : []),
        String(Math.floor(rnd() * 100)),
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

const write = (path: string, text: string): string => {
  const d = resolve(path, '..');
  if (!existsSync(d)) mkdirSync(d, { recursive: true });
  writeFileSync(path, text);
  return path;
};

const opts = (o: Partial<ReadOptions> = {}): ReadOptions => ({
  instrument: 'EUR_USD',
  granularity: 'M1',
  format: 'generic',
  side: 'bid',
  ...o,
});

describe('decoded-candle cache', () => {
  it('gives the very candles the source gives, built or read, for any file, options and period (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.boolean(),
        fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
        fc.option(fc.tuple(fc.integer({ min: -10, max: 3100 }), fc.integer({ min: 0, max: 3100 })), {
          nil: undefined,
        }),
        async (rows, seed, twoSided, pips, period) => {
          const { dir, file } = fresh();
          write(file, csv(rows, seed, twoSided));
          const o = opts({
            ...(pips !== undefined ? { spread: { kind: 'fixed' as const, pips } } : {}),
            ...(period
              ? {
                  from: Date.UTC(2024, 0, 1) + period[0] * 60_000,
                  to: Date.UTC(2024, 0, 1) + (period[0] + period[1]) * 60_000,
                }
              : {}),
          });
          const want = await all(openCandles(file, o));
          const builds = cacheStats.builds;
          expect(await all(cachedCandles(file, o, dir))).toEqual(want); // built on the way
          expect(cacheStats.builds).toBe(builds + 1);
          const hits = cacheStats.hits;
          expect(await all(cachedCandles(file, o, dir))).toEqual(want); // from the cache
          expect(cacheStats.hits).toBe(hits + 1);
          expect(cacheStats.builds).toBe(builds + 1);
          // Another period of the same file reads the same cache.
          const other = {
            ...o,
            from: Date.UTC(2024, 0, 1) + 500 * 60_000,
            to: Date.UTC(2024, 0, 1) + 1700 * 60_000,
          };
          expect(await all(cachedCandles(file, other, dir))).toEqual(await all(openCandles(file, other)));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keys the cache on every option that changes the decode (spread, instrument, granularity, format)', async () => {
    const { dir, file } = fresh();
    write(file, csv(200, 7, false));
    const a = opts({ spread: { kind: 'fixed', pips: 1 } });
    const b = opts({ spread: { kind: 'fixed', pips: 2 } });
    expect(cacheFileOf(dir, file, a)).not.toBe(cacheFileOf(dir, file, b));
    expect(cacheFileOf(dir, file, a)).not.toBe(cacheFileOf(dir, file, { ...a, instrument: 'GBP_USD' }));
    expect(cacheFileOf(dir, file, a)).not.toBe(cacheFileOf(dir, file, { ...a, granularity: 'M5' }));
    expect(cacheFileOf(dir, file, a)).not.toBe(cacheFileOf(dir, file, { ...a, format: undefined }));
    // The period and the notices do not change what the file decodes to.
    expect(cacheFileOf(dir, file, a)).toBe(cacheFileOf(dir, file, { ...a, from: 5, to: 10 }));
    await all(cachedCandles(file, a, dir));
    expect(await all(cachedCandles(file, b, dir))).toEqual(await all(openCandles(file, b)));
    // A one-sided file refused without a spread model is refused from the cache's side too.
    const refuse = opts({ oneSided: 'name a spread model' });
    const e = await all(cachedCandles(file, refuse, dir)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DataError);
    expect((e as Error).message).toContain('name a spread model');
    expect(existsSync(cacheFileOf(dir, file, refuse))).toBe(false);
  });

  it('rebuilds when the source is edited keeping its size, even with its mtime put back', async () => {
    const { dir, file } = fresh();
    const text = csv(2000, 11, true);
    write(file, text);
    const o = opts();
    await all(cachedCandles(file, o, dir));
    const cache = cacheFileOf(dir, file, o);
    // As if built long ago: the stamp alone (size, mtime, ctime, inode) decides, no hash.
    const { trailer, fd } = readTrailer(cache);
    closeSync(fd);
    restamp(cache, { ...trailer, hashedAt: trailer.hashedAt + 60_000 });
    const s0 = cacheState(cache, file, o);
    expect(s0.kind === 'fresh' && !s0.hashed).toBe(true);
    if (s0.kind === 'fresh') closeSync(s0.fd);
    // One digit changed in the middle of the file (a volume): same size; mtime restored as `touch -d` would.
    const before = statSync(file);
    const at = text.indexOf('\n', text.length >> 1) - 1; // the last digit of a row's volume
    const digit = text[at]!;
    expect(digit).toMatch(/\d/);
    const edited = text.slice(0, at) + (digit === '9' ? '8' : String(+digit + 1)) + text.slice(at + 1);
    writeFileSync(file, edited);
    utimesSync(file, before.atime, before.mtime);
    expect(statSync(file).size).toBe(before.size);
    // (Node sets times to the microsecond, so the mtime is back to within 1 ms; the ctime moved on, which no user can undo.)
    expect(Math.abs(statSync(file).mtimeMs - before.mtimeMs)).toBeLessThan(1);
    expect(String(statSync(file, { bigint: true }).ctimeNs)).not.toBe(trailer.ctimeNs);
    const s1 = cacheState(cache, file, o);
    expect(s1.kind).toBe('stale');
    const rebuilds = cacheStats.rebuilds;
    const got = await all(cachedCandles(file, o, dir));
    expect(cacheStats.rebuilds).toBe(rebuilds + 1);
    expect(got).toEqual(await all(openCandles(file, o)));
    expect(got).not.toEqual(await all(openCandles(write(join(dir, '..', 'orig.csv'), text), o)));
  });

  it('checks the bytes of a source changed within the stamp margin of its hash (racy) and keeps the cache when they are the same', async () => {
    const { dir, file } = fresh();
    const text = csv(500, 3, false);
    write(file, text);
    const o = opts({ spread: { kind: 'fixed', pips: 1 } });
    await all(cachedCandles(file, o, dir));
    const cache = cacheFileOf(dir, file, o);
    // Just written: its change is within the margin, so its bytes are hashed, and they match.
    const s = cacheState(cache, file, o);
    expect(s.kind).toBe('fresh');
    if (s.kind === 'fresh') {
      expect(s.hashed).toBe(true);
      closeSync(s.fd);
    }
    // Rewritten with the same bytes (a new mtime and ctime): hashed, the same: still used.
    writeFileSync(file, text);
    const hits = cacheStats.hits;
    expect(await all(cachedCandles(file, o, dir))).toEqual(await all(openCandles(file, o)));
    expect(cacheStats.hits).toBe(hits + 1);
  });

  it('never takes a cut-short cache file as valid: any cut is rebuilt (property)', async () => {
    const { dir, file } = fresh();
    write(file, csv(2500, 5, true));
    const o = opts();
    const want = await all(openCandles(file, o));
    await all(cachedCandles(file, o, dir));
    const cache = cacheFileOf(dir, file, o);
    const size = statSync(cache).size;
    const whole = readFileSync(cache);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: size - 1 }), async (cut) => {
        writeFileSync(cache, whole);
        truncateSync(cache, cut);
        expect(cacheState(cache, file, o).kind).toBe('damaged');
        expect(await all(cachedCandles(file, o, dir))).toEqual(want);
        expect(statSync(cache).size).toBe(size); // rebuilt whole
      }),
      { numRuns: 25 },
    );
  });

  it.each([
    ['two-sided blocks', 0.8],
    ['one-sided blocks', undefined],
  ])(
    'never hands out a candle of a flipped bit: a damaged trailer or block is rebuilt, the run gets the source candles (property, %s)',
    async (_, pips) => {
      const { dir, file } = fresh();
      write(file, csv(3000, 9, false));
      const o = opts(pips !== undefined ? { spread: { kind: 'fixed', pips } } : {});
      const want = await all(openCandles(file, o));
      await all(cachedCandles(file, o, dir));
      const cache = cacheFileOf(dir, file, o);
      const whole = readFileSync(cache);
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: whole.length - 1 }),
          fc.integer({ min: 0, max: 7 }),
          async (byte, bit) => {
            const flipped = Buffer.from(whole);
            flipped[byte] = flipped[byte]! ^ (1 << bit);
            writeFileSync(cache, flipped);
            const damaged = cacheStats.damagedBlocks + cacheStats.rebuilds;
            expect(await all(cachedCandles(file, o, dir))).toEqual(want);
            // Either found up front (the trailer) or at its block; a flip in unused trailer text is harmless only if the trailer still checks.
            expect(cacheStats.damagedBlocks + cacheStats.rebuilds).toBe(damaged + 1);
            expect(
              readFileSync(cache).equals(whole) || listCache(dir, true).every((c) => c.state === 'fresh'),
            ).toBe(true);
          },
        ),
        { numRuns: 40 },
      );
    },
  );

  it('a build cut by kill -9 leaves no cache that is taken as valid', async () => {
    const { dir, file } = fresh();
    write(file, csv(60_000, 21, true));
    const o = opts();
    // A real process reads the file through the cache, says when it is halfway, and is killed there.
    const script = `
      import { cachedCandles } from ${JSON.stringify(resolve(import.meta.dirname, 'candle-cache.ts'))};
      let n = 0;
      for await (const b of cachedCandles(${JSON.stringify(file)}, ${JSON.stringify(o)}, ${JSON.stringify(dir)})) {
        n += b.length;
        if (n > 30000) { process.stdout.write('halfway\\n'); await new Promise(() => {}); }
      }`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((res, rej) => {
      child.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('halfway')) res();
      });
      child.on('exit', (code) => rej(new Error(`the child ended before halfway (${code})`)));
    });
    const ended = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await ended;
    const left = readdirSync(dir);
    expect(left.some((f) => f.endsWith('.tmp'))).toBe(true); // its half-written file
    expect(left.some((f) => f.endsWith('.fxc'))).toBe(false);
    expect(cacheState(cacheFileOf(dir, file, o), file, o).kind).toBe('missing');
    const builds = cacheStats.builds;
    expect(await all(cachedCandles(file, o, dir))).toEqual(await all(openCandles(file, o)));
    expect(cacheStats.builds).toBe(builds + 1);
    expect(listCache(dir, true).map((c) => c.state)).toEqual(['fresh']);
  }, 60_000);

  it('a file with a bad row reads as the reader reads it, whatever the period: the same candles or the same error, and no cache (property)', async () => {
    const outcome = (it: AsyncIterable<readonly Candle[]>): Promise<unknown> =>
      all(it).then(
        (c) => c,
        (e: Error) => `${e.name}: ${e.message}`,
      );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 1999 }),
        fc.constantFrom('ohlc', 'number', 'one-sided'),
        fc.integer({ min: -100, max: 2100 }),
        fc.integer({ min: 0, max: 800 }),
        async (bad, kind, start, len) => {
          const { dir, file } = fresh();
          const lines = csv(2000, 17, true).split('\n');
          const f = lines[bad + 1]!.split(',');
          if (kind === 'ohlc')
            f[2] = '0.5'; // bid high below the low
          else if (kind === 'number') f[3] = 'x';
          write(
            file,
            kind === 'one-sided'
              ? csv(2000, 17, false)
              : [...lines.slice(0, bad + 1), f.join(','), ...lines.slice(bad + 2)].join('\n'),
          );
          const o = opts({
            from: Date.UTC(2024, 0, 1) + start * 60_000,
            to: Date.UTC(2024, 0, 1) + (start + len) * 60_000,
            ...(kind === 'one-sided' ? { oneSided: 'give a spread model' } : {}),
          });
          expect(await outcome(cachedCandles(file, o, dir))).toEqual(await outcome(openCandles(file, o)));
          expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a source that fails to decode leaves no cache and the error of the source', async () => {
    const { dir, file } = fresh();
    write(file, csv(100, 1, true).replace(/\n(2024-01-01T00:50:00Z,)[^,]+,/, '\n$1x,'));
    const e = await all(cachedCandles(file, opts(), dir)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DataError);
    expect((e as Error).message).toContain(`${file}:52 (bid open): expected a number`);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });
});
