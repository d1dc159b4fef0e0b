import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readLines } from './lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'fxflow-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(path: string, chunk?: number): Promise<{ line: string; no: number }[]> {
  const out: { line: string; no: number }[] = [];
  for await (const { lines, first } of chunk === undefined ? readLines(path) : readLines(path, chunk)) {
    lines.forEach((line, i) => out.push({ line, no: first + i }));
  }
  return out;
}

describe('readLines', () => {
  it('gives every line once, in order, with its number, whatever the chunk size and line endings', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: fc.constantFrom('a', '1', ',', '.', 'é', '€', ' '), maxLength: 40 }), { maxLength: 60 }),
        fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 64 }),
        async (rows, crlf, endsWithNewline, chunk) => {
          const text = rows.map((r, i) => r + (crlf[i] ? '\r\n' : '\n')).join('');
          const body = endsWithNewline || text.length === 0 ? text : text.replace(/\r?\n$/, '');
          const path = join(dir, `p${n++}.txt`);
          writeFileSync(path, body);
          // The expected lines: what a whole-file split gives (no last empty line after a final newline).
          const expected = body.length === 0 ? [] : body.replace(/\r?\n$/, '').split('\n').map((l) => l.replace(/\r$/, ''));
          const got = await collect(path, chunk);
          expect(got.map((g) => g.line)).toEqual(expected);
          expect(got.map((g) => g.no)).toEqual(expected.map((_, i) => i + 1));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads a file of many default-sized chunks (64 KiB) without losing or splitting a row', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => `2024-01-01T00:${String(i % 60).padStart(2, '0')}:00Z,1.${String(10000 + i)},row ${i}`);
    const path = join(dir, 'big.csv');
    writeFileSync(path, `${rows.join('\r\n')}\r\n`);
    const got = await collect(path);
    expect(got.length).toBe(rows.length);
    expect(got.every((g, i) => g.line === rows[i] && g.no === i + 1)).toBe(true);
  });
});
