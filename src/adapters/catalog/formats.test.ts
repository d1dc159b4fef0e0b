import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { DataError } from './errors.ts';
import { openCandles } from './formats.ts';
import { readLines } from './lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'fxflow-formats-'));
let n = 0;
const file = (text: string, name = `f${++n}.csv`): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
async function read(path: string, o: Partial<Parameters<typeof openCandles>[1]> = {}): Promise<Candle[]> {
  const out: Candle[] = [];
  for await (const b of openCandles(path, { instrument: 'EUR_USD', granularity: 'H1', ...o })) out.push(...b);
  return out;
}

describe('readLines', () => {
  it('yields the same lines whatever the chunk size (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.stringMatching(/^[a-z0-9,.;]{0,12}$/), { maxLength: 30 }), fc.integer({ min: 1, max: 17 }), fc.boolean(), async (lines, chunk, crlf) => {
        const text = lines.join(crlf ? '\r\n' : '\n');
        const p = file(text);
        const got: string[] = [];
        for await (const b of readLines(p, chunk)) got.push(...b.lines);
        // A final newline ends the last line; it does not start another.
        const expected = text === '' ? [] : text.split(/\r?\n/);
        if (text.endsWith('\n')) expected.pop();
        expect(got).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});

describe('generic CSV', () => {
  it('reads bid/ask rows with RFC 3339, epoch-ms or epoch-s times', async () => {
    const p = file(['time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume', '2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15,1.1002,1.2002,1.0002,1.1502,5', `${Date.UTC(2024, 0, 2, 11)},1.15,1.2,1.1,1.12,1.1502,1.2002,1.1002,1.1202,6`, `${Date.UTC(2024, 0, 2, 12) / 1000},1.12,1.2,1.1,1.13,1.1202,1.2002,1.1002,1.1302,7`].join('\n'));
    const c = await read(p);
    expect(c.map((x) => new Date(x.time).toISOString())).toEqual(['2024-01-02T10:00:00.000Z', '2024-01-02T11:00:00.000Z', '2024-01-02T12:00:00.000Z']);
    expect(c[0]!.at - c[0]!.time).toBe(3_600_000);
  });

  it('gives mid-only rows a spread (fixed pips)', async () => {
    const p = file(['time,o,h,l,c,volume', '2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15,5'].join('\n'));
    const [c] = await read(p, { spread: { kind: 'fixed', pips: 2 } });
    expect(c!.bo).toBeCloseTo(1.0999, 10);
    expect(c!.ao).toBeCloseTo(1.1001, 10);
  });

  it.each([
    ['time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume\n2024-01-02T10:00:00Z,1.1,x,1.0,1.15,1.1,1.2,1.0,1.15,5\n', ':2 (bid high): expected a number'],
    ['time,o,h,l,c\n2024-01-02T10:00:00Z,1.1,1.05,1.0,1.15\n', ':2 (mid): inconsistent OHLC'],
    ['time,o,h,l,c\n2024-01-02T11:00:00Z,1.1,1.2,1.0,1.15\n2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15\n', ':3 (time): time 2024-01-02T10:00:00.000Z is not after'],
    ['when,o,h,l,c\n', ':1 (format): cannot tell the format from "when,o,h,l,c": pass --format'],
    ['time,o,h,l,c\nnot-a-time,1,1,1,1\n', ':2 (time): cannot read the time'],
  ])('a bad file names the file, line and column: %#', async (text, message) => {
    const p = file(text);
    const e = await read(p).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DataError);
    expect((e as Error).message).toContain(`${p}${message}`);
  });
});

describe('OANDA candle JSON', () => {
  it('streams candles out of a response split at any byte (property)', async () => {
    const candles = Array.from({ length: 12 }, (_, i) => ({
      complete: i !== 11,
      volume: 10 + i,
      time: new Date(Date.UTC(2024, 0, 2, i)).toISOString().replace('.000Z', '.000000000Z'),
      bid: { o: '1.10000', h: '1.10100', l: '1.09900', c: '1.10050' },
      ask: { o: '1.10020', h: '1.10120', l: '1.09920', c: '1.10070' },
    }));
    const p = file(JSON.stringify({ instrument: 'EUR_USD', granularity: 'H1', candles }, null, 1), 'c.json');
    const c = await read(p);
    expect(c).toHaveLength(11); // the incomplete one is skipped
    expect(c[3]!.volume).toBe(13);
    expect(c[0]!.ac).toBe(1.1007);
  });
});
