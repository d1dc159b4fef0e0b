import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../domain/time.ts';
import { openTicks } from './formats.ts';
import {
  fileSource,
  gzipMembers,
  readTickDayFile,
  tickDayFiles,
  TickWriter,
  TICK_HEADER,
  type ByteSource,
} from './tick-store.ts';

const text = fc
  .array(fc.string({ minLength: 0, maxLength: 40 }), { minLength: 1, maxLength: 8 })
  .map((lines) => `${lines.map((l) => l.replace(/\n/g, ' ')).join('\n')}\n`);

describe('gzip members', () => {
  it('any truncation point keeps exactly the members that end at or before it', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 6 }), fc.nat(), (chunks, cutSeed) => {
        const parts = chunks.map((c) => gzipSync(c));
        const whole = Buffer.concat(parts);
        const cut = cutSeed % (whole.length + 1);
        const { members, complete } = gzipMembers(whole.subarray(0, cut));
        // The ends of the members, in order: the complete ones are those ending at or before the cut.
        let end = 0;
        const kept: string[] = [];
        for (const [i, p] of parts.entries()) {
          if (end + p.length > cut) break;
          end += p.length;
          kept.push(chunks[i]!);
        }
        expect(complete).toBe(end);
        expect(members.map((m) => m.toString('utf8'))).toEqual(kept);
        // What is kept is what gunzip reads of the same bytes.
        if (end > 0) expect(gunzipSync(whole.subarray(0, end)).toString('utf8')).toBe(kept.join(''));
      }),
      { numRuns: 400 },
    );
  });

  it('a damaged byte ends the complete part at the member it falls in', () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (chunks, at, flip) => {
          const parts = chunks.map((c) => gzipSync(c));
          const whole = Buffer.concat(parts);
          const pos = at % whole.length;
          const bad = Buffer.from(whole);
          bad[pos] = bad[pos]! ^ flip;
          let end = 0;
          let k = 0;
          while (k < parts.length && end + parts[k]!.length <= pos) end += parts[k++]!.length;
          const { members, complete } = gzipMembers(bad);
          // Members before the damaged one are all kept. (A flip in gzip's OS or mtime bytes leaves
          // the member valid: then it, and what follows, may be kept too.)
          expect(complete).toBeGreaterThanOrEqual(end);
          expect(members.slice(0, k).map((m) => m.toString('utf8'))).toEqual(chunks.slice(0, k));
        },
      ),
      { numRuns: 300 },
    );
  });
});

const T0 = Date.UTC(2024, 0, 2, 21, 0);
const row = (k: number): { time: string; at: number; bid: string; ask: string; knownAt: number } => {
  const at = T0 + k * 137_000; // crosses midnight UTC after about 22 ticks
  const bid = (1.1 + (k % 17) / 10_000).toFixed(5);
  return { time: formatTime(at), at, bid, ask: (Number(bid) + 0.00012).toFixed(5), knownAt: at + 5 };
};

describe('TickWriter', () => {
  it('a recording cut anywhere resumes with every complete block kept, nothing twice, and reads as ticks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.integer({ min: 1, max: 12 }),
        async (flushes, cutSeed, more) => {
          const root = mkdtempSync(join(tmpdir(), 'fxflow-ticks-'));
          try {
            const w = TickWriter.open(root, ['EUR_USD']);
            let k = 0;
            for (const n of flushes) {
              for (let i = 0; i < n; i++) expect(w.add('EUR_USD', row(k++))).toBe(true);
              w.flush();
            }
            // kill -9 mid-write: the newest file cut at any byte.
            const files = tickDayFiles(root, 'EUR_USD');
            const newest = files[files.length - 1]!.file;
            const size = statSync(newest).size;
            // A cut at 0 (one in eight) leaves the newest day empty: the last tick is then in the day before.
            const cut = cutSeed % 8 === 0 ? 0 : cutSeed % (size + 1);
            truncateSync(newest, cut);
            const { complete } = gzipMembers(readFileSync(newest));
            const w2 = TickWriter.open(root, ['EUR_USD']);
            expect(statSync(newest).size).toBe(complete);
            expect(w2.repaired.length).toBe(cut > complete ? 1 : 0);
            const kept: number[] = [];
            for await (const b of openTicks(join(root, 'ticks', 'EUR_USD'), { instrument: 'EUR_USD' }))
              for (const t of b) kept.push(t.at);
            // Kept: a prefix of what was written, of whole blocks, and the last time is where the writer resumes.
            expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => row(i).at));
            expect(w2.last('EUR_USD')).toBe(kept.length > 0 ? kept[kept.length - 1] : -Infinity);
            // The stream resumes: the last kept tick again (a snapshot) is not added; newer ones are.
            if (kept.length > 0) expect(w2.add('EUR_USD', row(kept.length - 1))).toBe(false);
            for (let i = 0; i < more; i++) w2.add('EUR_USD', row(k + i));
            w2.flush();
            const after: number[] = [];
            for await (const b of openTicks(root, { instrument: 'EUR_USD' }))
              for (const t of b) after.push(t.at);
            expect(after).toEqual([...kept, ...Array.from({ length: more }, (_, i) => row(k + i).at)]);
            for (const f of tickDayFiles(root, 'EUR_USD'))
              expect(gunzipSync(readFileSync(f.file)).toString('utf8').startsWith(`${TICK_HEADER}\n`)).toBe(
                true,
              );
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a damaged row or a torn tail stops a reader with the file, the line or the byte', () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-ticks-'));
    try {
      const file = join(root, '2024-01-02.csv.gz');
      writeFileSync(
        file,
        Buffer.concat([
          gzipSync(`${TICK_HEADER}\n2024-01-02T10:00:00.000000000Z,1.1,1.1002,1\n`),
          gzipSync('2024-01-02T10:00:01Z,1.1,x,2\n'),
        ]),
      );
      expect(() => [...readTickDayFile(file, { instrument: 'EUR_USD' })]).toThrow(
        /2024-01-02\.csv\.gz:3 \(ask\): expected a positive price, found "x"/,
      );
      const good = gzipSync(`${TICK_HEADER}\n2024-01-02T10:00:00Z,1.1,1.1002,1\n`);
      writeFileSync(
        file,
        Buffer.concat([good, gzipSync('2024-01-02T10:00:01Z,1.1,1.1003,2\n').subarray(0, 15)]),
      );
      expect(() => [...readTickDayFile(file, { instrument: 'EUR_USD' })]).toThrow(
        new RegExp(
          `cut short or damaged at byte ${good.length} of ${good.length + 15}.*truncate the file to ${good.length} bytes`,
        ),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** A real file as a ByteSource that records what the reader asks of it: its buffer's size and the bytes read. */
function countingSource(file: string): {
  source: ByteSource;
  peakBuffer: () => number;
  bytesRead: () => number;
  size: number;
} {
  const real = fileSource(file);
  let peak = 0;
  let read = 0;
  return {
    size: real.size,
    source: {
      size: real.size,
      read(into, offset, length, position) {
        peak = Math.max(peak, into.length);
        const n = real.read(into, offset, length, position);
        read += n;
        return n;
      },
      close: () => real.close(),
    },
    peakBuffer: () => peak,
    bytesRead: () => read,
  };
}

/** Writes a day file with TickWriter, one flush (one gzip member) per entry of `members`; returns it and each member's size in bytes. */
function recordDay(
  root: string,
  members: readonly number[],
): { file: string; memberBytes: number[]; times: number[] } {
  const w = TickWriter.open(root, ['EUR_USD']);
  const day0 = Date.UTC(2024, 0, 3);
  const memberBytes: number[] = [];
  const times: number[] = [];
  let k = 0;
  let size = 0;
  for (const n of members) {
    for (let i = 0; i < n; i++, k++) {
      const at = day0 + k * 7; // 7 ms apart: 12 million fit in the day
      const bid = (1.1 + (k % 31) / 100_000).toFixed(5);
      w.add('EUR_USD', {
        time: formatTime(at),
        at,
        bid,
        ask: (Number(bid) + 0.00011).toFixed(5),
        knownAt: at + 3,
      });
      times.push(at);
    }
    w.flush();
    const file = tickDayFiles(root, 'EUR_USD')[0]!.file;
    const now = statSync(file).size;
    memberBytes.push(now - size);
    size = now;
  }
  return { file: tickDayFiles(root, 'EUR_USD')[0]!.file, memberBytes, times };
}

describe('reading a day file holds one member, never the file', () => {
  it('batches never exceed 4,096 rows nor span members, each byte is read once, and the buffer is bounded by the window and the largest member (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 30 }),
        fc.option(fc.integer({ min: 4097, max: 9000 }), { nil: undefined }),
        fc.nat(),
        fc.constantFrom(512, 4096, 65_536),
        (small, big, where, window) => {
          const members = [...small];
          if (big !== undefined) members.splice(where % (members.length + 1), 0, big);
          const root = mkdtempSync(join(tmpdir(), 'fxflow-ticks-'));
          try {
            const { file, memberBytes, times } = recordDay(root, members);
            // Which member each row is in, to see that no batch spans two.
            const memberOf: number[] = members.flatMap((n, m) => Array.from({ length: n }, () => m));
            const c = countingSource(file);
            const got: number[] = [];
            for (const batch of readTickDayFile(file, { instrument: 'EUR_USD', source: c.source, window })) {
              expect(batch.length).toBeLessThanOrEqual(4096);
              const first = memberOf[got.length]!;
              for (const t of batch) {
                expect(memberOf[got.length]).toBe(first);
                got.push(t.at);
              }
            }
            expect(got).toEqual(times);
            expect(c.bytesRead()).toBe(c.size);
            expect(c.peakBuffer()).toBeLessThanOrEqual(Math.max(2 * window, 2 * Math.max(...memberBytes)));
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('a file a hundred times longer is read with the same buffer and batches', () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-ticks-'));
    const root2 = mkdtempSync(join(tmpdir(), 'fxflow-ticks-'));
    try {
      const peaks = [root, root2].map((r, i) => {
        const { file } = recordDay(
          r,
          Array.from({ length: i === 0 ? 4 : 400 }, () => 1000),
        );
        const c = countingSource(file);
        let largest = 0;
        let rows = 0;
        for (const b of readTickDayFile(file, { instrument: 'EUR_USD', source: c.source, window: 16_384 })) {
          largest = Math.max(largest, b.length);
          rows += b.length;
        }
        return { buffer: c.peakBuffer(), largest, rows, size: c.size };
      });
      expect(peaks.map((p) => p.rows)).toEqual([4000, 400_000]);
      expect(peaks[1]!.largest).toBe(peaks[0]!.largest);
      expect(peaks[1]!.buffer).toBe(peaks[0]!.buffer);
      // The long file is several MB; the reader held 32 KiB of it at a time.
      expect(peaks[1]!.buffer).toBe(32_768);
      expect(peaks[1]!.size).toBeGreaterThan(100 * peaks[1]!.buffer);
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(root2, { recursive: true, force: true });
    }
  });
});
