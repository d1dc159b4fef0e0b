import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LINE_BYTES, maxLineBytes, readLines } from './lines.ts';

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
        fc.array(fc.string({ unit: fc.constantFrom('a', '1', ',', '.', 'é', '€', ' '), maxLength: 40 }), {
          maxLength: 60,
        }),
        fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 64 }),
        async (rows, crlf, endsWithNewline, chunk) => {
          const text = rows.map((r, i) => r + (crlf[i] ? '\r\n' : '\n')).join('');
          const body = endsWithNewline || text.length === 0 ? text : text.replace(/\r?\n$/, '');
          const path = join(dir, `p${n++}.txt`);
          writeFileSync(path, body);
          // The expected lines: what a whole-file split gives (no last empty line after a final newline).
          const expected =
            body.length === 0
              ? []
              : body
                  .replace(/\r?\n$/, '')
                  .split('\n')
                  .map((l) => l.replace(/\r$/, ''));
          const got = await collect(path, chunk);
          expect(got.map((g) => g.line)).toEqual(expected);
          expect(got.map((g) => g.no)).toEqual(expected.map((_, i) => i + 1));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads a file of many default-sized chunks (64 KiB) without losing or splitting a row', async () => {
    const rows = Array.from(
      { length: 20_000 },
      (_, i) => `2024-01-01T00:${String(i % 60).padStart(2, '0')}:00Z,1.${String(10000 + i)},row ${i}`,
    );
    const path = join(dir, 'big.csv');
    writeFileSync(path, `${rows.join('\r\n')}\r\n`);
    const got = await collect(path);
    expect(got.length).toBe(rows.length);
    expect(got.every((g, i) => g.line === rows[i] && g.no === i + 1)).toBe(true);
  });

  it('joins a line that spans many chunks as a plain split does, for any chunking (lines up to 40 times the chunk)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: fc.constantFrom('a', '9', ';', 'é', '€', '\r'), maxLength: 400 }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 10 }),
        async (rows, chunk) => {
          const body = rows.join('\n');
          const path = join(dir, `long${n++}.txt`);
          writeFileSync(path, body);
          const expected = body.split('\n').map((l) => l.replace(/\r$/, ''));
          if (body.endsWith('\n') || body.length === 0) expected.pop();
          const got = await collect(path, chunk);
          expect(got.map((g) => g.line)).toEqual(expected);
          expect(got.map((g) => g.no)).toEqual(expected.map((_, i) => i + 1));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses a line longer than the cap, for any chunking, naming the file, the line, the cap and FXFLOW_MAX_LINE_BYTES', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 65, max: 300 }),
        fc.integer({ min: 1, max: 200 }),
        fc.boolean(),
        async (before, extra, chunk, ended) => {
          const cap = 64;
          const path = join(dir, `cap${n++}.csv`);
          const good = Array.from({ length: before }, (_, i) => `row ${i}`);
          writeFileSync(path, `${good.join('\n')}\n${'x'.repeat(extra)}${ended ? '\nlast\n' : ''}`);
          const lines: string[] = [];
          const run = async (): Promise<void> => {
            for await (const b of readLines(path, chunk, cap)) lines.push(...b.lines);
          };
          await expect(run()).rejects.toThrow(`${path}:${before + 1}: this line is longer than 64 bytes`);
          expect(lines.every((l) => l.length <= cap)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a 64 MB line without a line end is refused as soon as the cap is read, as plain text and gzipped', async () => {
    // A good header and row, then 64 MB with no newline (issue 34): it used to take minutes (the
    // carried line was copied at every chunk); it is refused after the first MiB of it.
    const plain = join(dir, 'one-long-line.csv');
    const head = 'time,o,h,l,c,volume\n2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15,5\n';
    const mb = Buffer.alloc(1 << 20, 'a');
    const out = createWriteStream(plain);
    out.write(head);
    for (let i = 0; i < 64; i++) if (!out.write(mb)) await once(out, 'drain');
    out.end();
    await once(out, 'close');
    const expected = `${plain}:3: this line is longer than 1 MiB and has not ended: the file is not rows of text, or its rows are not separated by line ends. fxflow reads a line of at most 1 MiB; if the file's lines really are longer, raise the cap with FXFLOW_MAX_LINE_BYTES=<bytes> (e.g. FXFLOW_MAX_LINE_BYTES=4194304)`;
    await expect(collect(plain)).rejects.toThrow(expected);
    // The same line packed: 64 MiB unpack from 64 KiB; refused within the first MiB unpacked.
    const gz = join(dir, 'one-long-line.csv.gz');
    const zip = createGzip({ level: 1 });
    const file = createWriteStream(gz);
    zip.pipe(file);
    zip.write(head);
    for (let i = 0; i < 64; i++) if (!zip.write(mb)) await once(zip, 'drain');
    zip.end();
    await once(file, 'close');
    await expect(collect(gz)).rejects.toThrow(expected.replace(plain, gz));
  });

  it('FXFLOW_MAX_LINE_BYTES raises the cap; a value that is not a number of bytes is refused naming it', () => {
    const was = process.env.FXFLOW_MAX_LINE_BYTES;
    try {
      delete process.env.FXFLOW_MAX_LINE_BYTES;
      expect(maxLineBytes()).toBe(DEFAULT_MAX_LINE_BYTES);
      process.env.FXFLOW_MAX_LINE_BYTES = '4194304';
      expect(maxLineBytes()).toBe(4 << 20);
      process.env.FXFLOW_MAX_LINE_BYTES = '4M';
      expect(() => maxLineBytes()).toThrow(
        "FXFLOW_MAX_LINE_BYTES='4M' is not a number of bytes: give a whole number of at least 64",
      );
    } finally {
      if (was === undefined) delete process.env.FXFLOW_MAX_LINE_BYTES;
      else process.env.FXFLOW_MAX_LINE_BYTES = was;
    }
  });
});
