import fc from 'fast-check';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PackedColumn, page, writePage } from './html.ts';

describe('writePage', () => {
  it('writes byte for byte the page that page() builds, whatever the data (its JSON written a member at a time)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-page-'));
    const file = join(dir, 'p.html');
    const data = fc.oneof(
      fc.jsonValue(),
      // Long arrays and strings that cross the 64 KiB writes, and text a script element must not end on.
      fc.record({
        xs: fc.array(fc.double({ noNaN: true }), { maxLength: 20_000 }),
        s: fc.string({ maxLength: 70_000 }),
        tag: fc.constant('</script><!-- \u2028'),
        nested: fc.dictionary(fc.string(), fc.array(fc.jsonValue(), { maxLength: 5 })),
      }),
    );
    fc.assert(
      fc.property(data, fc.integer({ min: 0, max: 5 }), fc.boolean(), (d, depth, charts) => {
        const o = { title: 'a <test> & "page"', data: d, scripts: ['report.js'], charts };
        const bytes = writePage(file, o, depth);
        const want = page(o);
        const got = readFileSync(file, 'utf8');
        expect(got).toBe(want);
        expect(bytes).toBe(Buffer.byteLength(want));
      }),
      { numRuns: 60 },
    );
  });

  it('writes a packed column as the array JSON.stringify writes for it (NaN and the infinities as null), at any depth', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fxflow-page-')), 'p.html');
    const column = fc.array(fc.double(), { maxLength: 12_000 }).map((xs) => PackedColumn.of(xs));
    fc.assert(
      fc.property(
        fc.record({
          packed: fc.record({ trades: fc.dictionary(fc.string({ maxLength: 4 }), column, { maxKeys: 3 }) }),
          top: column,
        }),
        fc.integer({ min: 0, max: 4 }),
        (d, depth) => {
          const o = { title: 'columns', data: d, scripts: ['report.js'] };
          writePage(file, o, depth);
          const got = readFileSync(file, 'utf8');
          expect(got).toBe(page(o));
          // The data block holds plain arrays: the page reads them back as the numbers, nulls for NaN.
          const back = JSON.parse(/id="fxflow-data">([\s\S]*?)<\/script>/.exec(got)![1]!) as {
            top: (number | null)[];
          };
          expect(back.top).toEqual(
            Array.from(d.top, (x) => (Number.isFinite(x) ? (Object.is(x, -0) ? 0 : x) : null)),
          );
          expect(back.top).toHaveLength(d.top.length);
        },
      ),
      { numRuns: 40 },
    );
  });
});
