import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { DataError } from './errors.ts';
import { CatalogRowScanner, openCandles, parseFlexibleTime } from './formats.ts';
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
      fc.asyncProperty(
        fc.array(fc.stringMatching(/^[a-z0-9,.;]{0,12}$/), { maxLength: 30 }),
        fc.integer({ min: 1, max: 17 }),
        fc.boolean(),
        async (lines, chunk, crlf) => {
          const text = lines.join(crlf ? '\r\n' : '\n');
          const p = file(text);
          const got: string[] = [];
          for await (const b of readLines(p, chunk)) got.push(...b.lines);
          // A final newline ends the last line; it does not start another.
          const expected = text === '' ? [] : text.split(/\r?\n/);
          if (text.endsWith('\n')) expected.pop();
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('generic CSV', () => {
  it('reads bid/ask rows with RFC 3339, epoch-ms or epoch-s times', async () => {
    const p = file(
      [
        'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume',
        '2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15,1.1002,1.2002,1.0002,1.1502,5',
        `${Date.UTC(2024, 0, 2, 11)},1.15,1.2,1.1,1.12,1.1502,1.2002,1.1002,1.1202,6`,
        `${Date.UTC(2024, 0, 2, 12) / 1000},1.12,1.2,1.1,1.13,1.1202,1.2002,1.1002,1.1302,7`,
      ].join('\n'),
    );
    const c = await read(p);
    expect(c.map((x) => new Date(x.time).toISOString())).toEqual([
      '2024-01-02T10:00:00.000Z',
      '2024-01-02T11:00:00.000Z',
      '2024-01-02T12:00:00.000Z',
    ]);
    expect(c[0]!.at - c[0]!.time).toBe(3_600_000);
  });

  it('gives mid-only rows a spread (fixed pips)', async () => {
    const p = file(['time,o,h,l,c,volume', '2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15,5'].join('\n'));
    const [c] = await read(p, { spread: { kind: 'fixed', pips: 2 }, side: 'mid' });
    expect(c!.bo).toBeCloseTo(1.0999, 10);
    expect(c!.ao).toBeCloseTo(1.1001, 10);
  });

  it.each([
    [
      'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume\n2024-01-02T10:00:00Z,1.1,x,1.0,1.15,1.1,1.2,1.0,1.15,5\n',
      ':2 (bid high): expected a number',
    ],
    ['time,o,h,l,c\n2024-01-02T10:00:00Z,1.1,1.05,1.0,1.15\n', ':2 (mid): inconsistent OHLC'],
    [
      'time,o,h,l,c\n2024-01-02T11:00:00Z,1.1,1.2,1.0,1.15\n2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15\n',
      ':3 (time): time 2024-01-02T10:00:00.000Z is not after',
    ],
    ['when,o,h,l,c\n', ':1 (format): cannot tell the format from "when,o,h,l,c": pass --format'],
    ['time,o,h,l,c\nnot-a-time,1,1,1,1\n', ':2 (time): cannot read the time'],
  ])('a bad file names the file, line and column: %#', async (text, message) => {
    const p = file(text);
    const e = await read(p, { side: 'mid' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DataError);
    expect((e as Error).message).toContain(`${p}${message}`);
  });
});

describe('catalog row scanner (the fast path of generic two-sided CSV)', () => {
  /** What the general path reads from a row: split on commas, Number() per field, the flexible time parse. */
  const general = (row: string): number[] => {
    const f = row.split(',');
    return [
      parseFlexibleTime(f[0]!),
      ...f.slice(1, 9).map((x) => (x === '' ? Number.NaN : +x)),
      f[9] ? +f[9] : 0,
    ];
  };
  const price = fc.oneof(
    { arbitrary: fc.integer({ min: 0, max: 999_999 }).map((n) => (n / 1e5).toFixed(5)), weight: 10 },
    { arbitrary: fc.integer({ min: 0, max: 99_999_999 }).map((n) => (n / 1e3).toFixed(3)), weight: 10 },
    { arbitrary: fc.integer({ min: 0, max: 2000 }).map(String), weight: 5 },
    // Shortest round-trip texts of any double: long fractions and exponents, mostly refused.
    { arbitrary: fc.double({ min: 0, max: 1e6, noNaN: true }).map((x) => String(x)), weight: 1 },
  );
  const time = fc
    .integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2099, 11, 31) })
    .map((t) => `${new Date(Math.floor(t / 1000) * 1000).toISOString().slice(0, 19)}Z`);

  it('reads exactly what the general path reads, to the bit, whenever it takes a row (property)', () => {
    const scan = new CatalogRowScanner();
    let taken = 0;
    fc.assert(
      fc.property(
        time,
        fc.array(price, { minLength: 8, maxLength: 8 }),
        fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
        (t, prices, volume) => {
          const row = [t, ...prices, ...(volume !== undefined ? [String(volume)] : [])].join(',');
          if (!scan.row(row)) return; // an exponent or a long fraction: the general path reads it
          taken++;
          const want = general(row);
          expect([scan.time, ...scan.values]).toEqual(want);
          for (let i = 0; i < 8; i++) expect(Object.is(scan.values[i], want[i + 1])).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
    expect(taken).toBeGreaterThan(1500);
  });

  it('reads one-sided rows (time,o,h,l,c[,volume]) exactly as the general path does, to the bit (property)', () => {
    const scan = new CatalogRowScanner();
    let taken = 0;
    fc.assert(
      fc.property(
        time,
        fc.array(price, { minLength: 4, maxLength: 4 }),
        fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
        (t, prices, volume) => {
          const row = [t, ...prices, ...(volume !== undefined ? [String(volume)] : [])].join(',');
          if (!scan.row(row, 4)) return;
          taken++;
          const f = row.split(',');
          const want = [parseFlexibleTime(f[0]!), ...f.slice(1, 5).map((x) => +x), f[5] ? +f[5] : 0];
          const got = [
            scan.time,
            scan.values[0],
            scan.values[1],
            scan.values[2],
            scan.values[3],
            scan.values[8],
          ];
          for (let i = 0; i < 6; i++) expect(Object.is(got[i], want[i]), row).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
    expect(taken).toBeGreaterThan(1500);
  });

  it('gives the same candles for a one-sided file as the two-sided file of the same prices', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => {
      const o = (1.1 + ((i * 37) % 101) / 1e4).toFixed(5);
      return [
        new Date(Date.UTC(2024, 0, 2) + i * 60_000).toISOString().slice(0, 19) + 'Z',
        o,
        (+o + 0.0003).toFixed(5),
        (+o - 0.0002).toFixed(5),
        (+o + 0.0001).toFixed(5),
        String(i),
      ];
    });
    const one = file(['time,o,h,l,c,volume', ...rows.map((r) => r.join(','))].join('\n'));
    const two = file(
      [
        'time,bid_o,bid_h,bid_l,bid_c,ask_o,ask_h,ask_l,ask_c,volume',
        ...rows.map((r) => [r[0], ...r.slice(1, 5), ...r.slice(1, 5), r[5]].join(',')),
      ].join('\n'),
    );
    expect(await read(one, { granularity: 'M1', side: 'mid' })).toEqual(
      await read(two, { granularity: 'M1' }),
    );
  });

  it('refuses what it cannot read exactly, so the general path reads it or names the fault', () => {
    const scan = new CatalogRowScanner();
    const ok = '2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15,1.1002,1.2002,1.0002,1.1502,5';
    expect(scan.row(ok)).toBe(true);
    for (const bad of [
      ok.replace('1.2,', ' 1.2,'), // a space
      ok.replace('1.2,', '1.2e0,'), // an exponent
      ok.replace('1.2,', '1.2000000000000001,'), // more than 15 digits
      ok.replace('1.2,', '1.,'), // no digit after the point
      ok.replace('1.2,', ','), // an empty field
      ok.replace('1.2,', 'x,'),
      ok.replace('10:00:00Z', '24:00:00Z'),
      ok.replace('2024-01-02', '2024-02-30'),
      ok.replace('T10', ' 10'),
      `${ok},extra`,
      ok.slice(0, ok.lastIndexOf(',')) + ',', // an empty volume
      '2024-01-02T10:00:00Z,1.1,1.2,1.0',
    ])
      expect(scan.row(bad), bad).toBe(false);
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

describe('parseFlexibleTime: real instants only', () => {
  it('reads RFC 3339 (Z or an offset), pandas (`2012-02-01 00:00:00+00:00`, no offset = UTC) as Date.parse does (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2099, 11, 31) }),
        fc.integer({ min: -12, max: 14 }),
        (t0, off) => {
          const t = Math.floor(t0 / 1000) * 1000;
          const iso = new Date(t).toISOString().slice(0, 19);
          expect(parseFlexibleTime(`${iso}Z`)).toBe(t);
          expect(parseFlexibleTime(`${iso.replace('T', ' ')}+00:00`)).toBe(t);
          expect(parseFlexibleTime(iso.replace('T', ' '))).toBe(t);
          // A T time without an offset is a wall clock, read as UTC (the reader's --timezone converts it).
          expect(parseFlexibleTime(iso)).toBe(t);
          const sign = off < 0 ? '-' : '+';
          const zone = `${sign}${String(Math.abs(off)).padStart(2, '0')}:00`;
          expect(parseFlexibleTime(`${iso}${zone}`)).toBe(Date.parse(`${iso}${zone}`));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses impossible dates and times of day instead of rolling them over', () => {
    for (const s of [
      '2024-03-08T27:00:00Z',
      '2024-02-30T00:00:00Z',
      '2023-02-29 10:00:00+00:00',
      '2024-13-01T00:00:00Z',
      '2024-03-08T10:60:00Z',
      '2024-03-08T10:00:61Z',
      '2024-04-31T00:00:00.000000000Z',
    ]) {
      expect(parseFlexibleTime(s), s).toBeNaN();
    }
    expect(parseFlexibleTime('2024-02-29T23:59:59Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59));
  });
});

describe('--side: the side of a one-sided file (issue 25, item 4)', () => {
  const text = ['timestamp,open,high,low,close', '2024-01-02T10:00:00Z,1.1,1.2,1.0,1.15', ''].join('\n');

  it('a one-sided file that does not say its side is refused, naming --side (no guess)', async () => {
    const p = file(text);
    const e = await read(p).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DataError);
    expect((e as Error).message).toBe(
      `${p} (side): this file holds one price per bar and does not say whether it is the bid, the ask or the mid: pass --side bid, --side ask or --side mid (fxflow does not guess: a spread model is applied around the side named)`,
    );
  });

  it('the spread acts around the side named: bid kept, ask above; ask kept, bid below; mid centred', async () => {
    const p = file(text);
    const spread = { kind: 'fixed' as const, pips: 2 };
    const [b] = await read(p, { side: 'bid', spread });
    expect([b!.bo, b!.ao, b!.bc, b!.ac]).toEqual([1.1, 1.1002, 1.15, 1.1502]);
    const [a] = await read(p, { side: 'ask', spread });
    expect([a!.bo, a!.ao, a!.bc, a!.ac]).toEqual([1.0998, 1.1, 1.1498, 1.15]);
    const [m] = await read(p, { side: 'mid', spread });
    expect([m!.bo, m!.ao]).toEqual([1.0999, 1.1001]);
  });

  it('a file that says its side refuses another one', async () => {
    const p = file('20190102 170000;1.1;1.2;1.0;1.15;0\n', 'DAT_ASCII_EURUSD_M1_x.csv');
    await expect(read(p, { side: 'ask', granularity: 'M1' })).rejects.toThrow(
      /the file's prices are bid \(its format says so\), not ask: leave --side out or give --side bid/,
    );
  });
});

describe('OANDA candle JSON: an object past the line cap', () => {
  it('is refused naming the file, the line it starts on and FXFLOW_MAX_LINE_BYTES; under the cap it reads', async () => {
    const candle = (extra: string): string =>
      `{"time":"2024-01-08T10:00:00Z","complete":true,"volume":1,"note":"${extra}","mid":{"o":"1.10000","h":"1.10010","l":"1.09990","c":"1.10005"}}`;
    const path = file(
      `{"instrument":"EUR_USD","granularity":"H1","candles":[\n${candle('x'.repeat(200_000))}\n]}`,
      'big.json',
    );
    const was = process.env.FXFLOW_MAX_LINE_BYTES;
    try {
      process.env.FXFLOW_MAX_LINE_BYTES = String(64 << 10);
      await expect(read(path, { side: 'mid' })).rejects.toThrow(
        `${path}:2: this JSON object is longer than 64 KiB and has not ended`,
      );
      await expect(read(path, { side: 'mid' })).rejects.toThrow(
        'raise the cap with FXFLOW_MAX_LINE_BYTES=<bytes>',
      );
      process.env.FXFLOW_MAX_LINE_BYTES = String(1 << 20);
      expect(await read(path, { side: 'mid' })).toHaveLength(1);
    } finally {
      if (was === undefined) delete process.env.FXFLOW_MAX_LINE_BYTES;
      else process.env.FXFLOW_MAX_LINE_BYTES = was;
    }
  });
});
