import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineFile, RunFileError } from './line-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'fxflow-linefile-'));

describe('LineFile', () => {
  it('writes exactly the lines given, in order, whatever the chunk size (property, multi-byte text included)', () => {
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/\n/g, ' '))),
        fc.integer({ min: 1, max: 64 }),
        (lines, chunk) => {
          const path = join(dir, `p${n++}.txt`);
          const f = new LineFile(path, chunk);
          for (const l of lines) f.line(l);
          f.close();
          f.close(); // idempotent
          expect(readFileSync(path, 'utf8')).toBe(lines.map((l) => `${l}\n`).join(''));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('holds at most one chunk however many lines pass, long lines included (property)', () => {
    let n = 0;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 400 }),
        fc.integer({ min: 16, max: 256 }),
        (lengths, chunk) => {
          const path = join(dir, `b${n++}.txt`);
          const f = new LineFile(path, chunk);
          const lines = lengths.map((len, i) => String(i % 10).repeat(len));
          for (const l of lines) f.line(l);
          expect(f.peakBuffered).toBeLessThanOrEqual(chunk);
          f.close();
          expect(readFileSync(path, 'utf8')).toBe(lines.map((l) => `${l}\n`).join(''));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('has written every full chunk before close, so a run that stops early keeps what it had', () => {
    const path = join(dir, 'early.jsonl');
    const f = new LineFile(path, 100);
    for (let i = 0; i < 50; i++) f.line(JSON.stringify({ i }));
    const before = readFileSync(path, 'utf8');
    expect(before.length).toBeGreaterThanOrEqual(100);
    expect(before.endsWith('\n')).toBe(true);
    f.close();
    expect(
      readFileSync(path, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).i),
    ).toEqual([...Array(50).keys()]);
  });

  it('names the file and the cause when it cannot be opened', () => {
    const path = join(dir, 'missing-folder', 'transactions.jsonl');
    expect(() => new LineFile(path)).toThrow(RunFileError);
    expect(() => new LineFile(path)).toThrow(`cannot write ${path} (ENOENT)`);
  });

  it.skipIf(!existsSync('/dev/full'))('names the file when the disk is full (/dev/full)', () => {
    const f = new LineFile('/dev/full', 8);
    expect(() => f.line('0123456789')).toThrow(/cannot write \/dev\/full \(ENOSPC\).*--no-save/);
  });
});
