import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { detectFormat, openCandles } from './formats.ts';

/**
 * Issue 25, item 5: the formats people export, read directly and detected: Dukascopy CSV,
 * MetaTrader 4/5 history exports (with and without a header), semicolon-separated files with
 * decimal commas, and any of them gzipped or in a zip of one file. Each a round trip of generated
 * candles: written in the format, read back to the same times and prices.
 */
const dir = mkdtempSync(join(tmpdir(), 'fxflow-exports-'));
let n = 0;

/** A zip of one file, as a zip tool writes it (local header, deflated data, central directory). */
function zipOf(name: string, data: Buffer): Buffer {
  const packed = deflateRawSync(data);
  const nameBytes = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(crc32(data), 14);
  local.writeUInt32LE(packed.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(nameBytes.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc32(data), 16);
  central.writeUInt32LE(packed.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(nameBytes.length, 28);
  central.writeUInt32LE(0, 42);
  const dirOffset = local.length + nameBytes.length + packed.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + nameBytes.length, 12);
  end.writeUInt32LE(dirOffset, 16);
  return Buffer.concat([local, nameBytes, packed, central, nameBytes, end]);
}

const pad = (x: number, w = 2): string => String(x).padStart(w, '0');
const parts = (t: number) => {
  const d = new Date(t);
  return {
    y: d.getUTCFullYear(),
    mo: pad(d.getUTCMonth() + 1),
    d: pad(d.getUTCDate()),
    h: pad(d.getUTCHours()),
    mi: pad(d.getUTCMinutes()),
  };
};

type Writer = { name: string; format: string; write: (c: readonly Candle[]) => string };
const comma = (x: number): string => String(x).replace('.', ',');
const WRITERS: Writer[] = [
  {
    name: 'Dukascopy CSV',
    format: 'dukascopy',
    write: (cs) =>
      [
        'Gmt time,Open,High,Low,Close,Volume',
        ...cs.map((c) => {
          const p = parts(c.time);
          return `${p.d}.${p.mo}.${p.y} ${p.h}:${p.mi}:00.000,${c.bo},${c.bh},${c.bl},${c.bc},${c.volume}`;
        }),
      ].join('\n'),
  },
  {
    name: 'Dukascopy, semicolons and decimal commas',
    format: 'dukascopy',
    write: (cs) =>
      [
        'Gmt time;Open;High;Low;Close;Volume',
        ...cs.map((c) => {
          const p = parts(c.time);
          return `${p.d}.${p.mo}.${p.y} ${p.h}:${p.mi}:00.000;${comma(c.bo)};${comma(c.bh)};${comma(c.bl)};${comma(c.bc)};${c.volume}`;
        }),
      ].join('\r\n'),
  },
  {
    name: 'MetaTrader 4 export (no header)',
    format: 'metatrader',
    write: (cs) =>
      cs
        .map((c) => {
          const p = parts(c.time);
          return `${p.y}.${p.mo}.${p.d},${p.h}:${p.mi},${c.bo},${c.bh},${c.bl},${c.bc},${c.volume}`;
        })
        .join('\n'),
  },
  {
    name: 'MetaTrader 5 export (tabs, header, seconds)',
    format: 'metatrader',
    write: (cs) =>
      [
        '<DATE>\t<TIME>\t<OPEN>\t<HIGH>\t<LOW>\t<CLOSE>\t<TICKVOL>\t<VOL>\t<SPREAD>',
        ...cs.map((c) => {
          const p = parts(c.time);
          return `${p.y}.${p.mo}.${p.d}\t${p.h}:${p.mi}:00\t${c.bo}\t${c.bh}\t${c.bl}\t${c.bc}\t${c.volume}\t0\t3`;
        }),
      ].join('\n'),
  },
  {
    name: 'MetaTrader with a header, semicolons',
    format: 'metatrader',
    write: (cs) =>
      [
        'Date;Time;Open;High;Low;Close;Volume',
        ...cs.map((c) => {
          const p = parts(c.time);
          return `${p.y}.${p.mo}.${p.d};${p.h}:${p.mi};${comma(c.bo)};${comma(c.bh)};${comma(c.bl)};${comma(c.bc)};${c.volume}`;
        }),
      ].join('\n'),
  },
  {
    name: 'generic, semicolons and decimal commas',
    format: 'generic',
    write: (cs) =>
      [
        'time;o;h;l;c;volume',
        ...cs.map(
          (c) =>
            `${new Date(c.time).toISOString().slice(0, 19)}Z;${comma(c.bo)};${comma(c.bh)};${comma(c.bl)};${comma(c.bc)};${c.volume}`,
        ),
      ].join('\n'),
  },
];

/** Consecutive M1 bid candles with gaps, five decimals, OHLC consistent. */
const candlesArb = fc
  .array(
    fc.record({
      gap: fc.integer({ min: 1, max: 90 }),
      o: fc.integer({ min: 100_000, max: 150_000 }),
      up: fc.integer({ min: 0, max: 200 }),
      down: fc.integer({ min: 0, max: 200 }),
      c: fc.integer({ min: 0, max: 1000 }),
      v: fc.integer({ min: 0, max: 500 }),
    }),
    { minLength: 1, maxLength: 60 },
  )
  .chain((rows) =>
    fc.integer({ min: Date.UTC(2015, 0, 1) / 60_000, max: Date.UTC(2030, 0, 1) / 60_000 }).map((start) => {
      let t = start * 60_000;
      return rows.map((r) => {
        t += r.gap * 60_000;
        const lo = r.o - r.down;
        const hi = r.o + r.up;
        const close = lo + (r.c % (hi - lo + 1));
        const x = (v: number): number => v / 1e5;
        return { time: t, bo: x(r.o), bh: x(hi), bl: x(lo), bc: x(close), volume: r.v } as Candle;
      });
    }),
  );

async function readBack(path: string, format?: string): Promise<Candle[]> {
  const out: Candle[] = [];
  for await (const b of openCandles(path, {
    instrument: 'EUR_USD',
    granularity: 'M1',
    side: 'bid',
    ...(format ? { format: format as never } : {}),
  }))
    out.push(...b);
  return out;
}

describe('formats people export: a round trip of generated candles, plain, gzip and zip', () => {
  for (const w of WRITERS) {
    it(`${w.name}: detected, read back to the same times and bid prices`, async () => {
      await fc.assert(
        fc.asyncProperty(candlesArb, fc.constantFrom('plain', 'gzip', 'zip'), async (candles, packing) => {
          const text = Buffer.from(`${w.write(candles)}\n`);
          const path = join(
            dir,
            `eurusd-${++n}.csv${packing === 'gzip' ? '.gz' : packing === 'zip' ? '.zip' : ''}`,
          );
          writeFileSync(
            path,
            packing === 'gzip' ? gzipSync(text) : packing === 'zip' ? zipOf('EURUSD.csv', text) : text,
          );
          expect(detectFormat(path)).toBe(w.format);
          const got = await readBack(path);
          expect(got.map((c) => [c.time, c.bo, c.bh, c.bl, c.bc, c.volume])).toEqual(
            candles.map((c) => [c.time, c.bo, c.bh, c.bl, c.bc, c.volume]),
          );
          // One-sided: the ask is the bid until a spread model is named.
          for (const c of got) expect(c.ac).toBe(c.bc);
        }),
        { numRuns: 30 },
      );
    });
  }

  it('a zip of several files is refused naming them; --format overrides detection; a bad time names the line', async () => {
    // A zip of two entries, built from two one-entry zips.
    const two = join(dir, 'two.zip');
    const first = zipOf('a.csv', Buffer.from('1'));
    const second = zipOf('b.csv', Buffer.from('2'));
    // Local parts of both, then both central records, then an end record counting two.
    const localOf = (z: Buffer): Buffer => z.subarray(0, z.readUInt32LE(z.length - 22 + 16));
    const centralOf = (z: Buffer): Buffer => z.subarray(z.readUInt32LE(z.length - 22 + 16), z.length - 22);
    const secondCentral = Buffer.from(centralOf(second));
    secondCentral.writeUInt32LE(localOf(first).length, 42);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(2, 8);
    end.writeUInt16LE(2, 10);
    end.writeUInt32LE(centralOf(first).length + secondCentral.length, 12);
    end.writeUInt32LE(localOf(first).length + localOf(second).length, 16);
    writeFileSync(
      two,
      Buffer.concat([localOf(first), localOf(second), centralOf(first), secondCentral, end]),
    );
    await expect(readBack(two, 'generic')).rejects.toThrow(
      /the zip holds 2 files \(a\.csv, b\.csv\): fxflow reads a zip of one file/,
    );
    const mt = join(dir, 'mt-bad.csv');
    writeFileSync(mt, '2024.01.02,10:00,1.1,1.2,1.0,1.15,5\n2024.02.30,10:01,1.1,1.2,1.0,1.15,5\n');
    await expect(readBack(mt)).rejects.toThrow(`${mt}:2 (time): cannot read the time in "2024.02.30,10:01`);
    const duka = join(dir, 'duka.csv');
    writeFileSync(duka, '02.01.2024 10:00:00.000,1.1,1.2,1.0,1.15,5\n');
    expect(detectFormat(duka)).toBe('dukascopy');
    await expect(readBack(duka, 'metatrader')).rejects.toThrow(
      /cannot read the time .* expected "yyyy\.mm\.dd,HH:MM,open,high,low,close,volume" \(MetaTrader\)/,
    );
  });

  it('a one-sided export without --side is refused naming it', async () => {
    const p = join(dir, 'mt-noside.csv');
    writeFileSync(p, '2024.01.02,10:00,1.1,1.2,1.0,1.15,5\n');
    const out: Candle[] = [];
    await expect(
      (async () => {
        for await (const b of openCandles(p, { instrument: 'EUR_USD', granularity: 'M1' })) out.push(...b);
      })(),
    ).rejects.toThrow(/does not say whether it is the bid, the ask or the mid: pass --side bid/);
  });
});
