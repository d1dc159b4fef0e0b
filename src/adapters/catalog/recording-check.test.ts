import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { formatTime } from '../../domain/time.ts';
import { FinancingWriter, type FinancingRecord } from './financing-store.ts';
import { checkFinancing, checkRecordingManifest, checkTickDay, checkTicks } from './recording-check.ts';
import { checkManifest, manifestFile } from './recording-manifest.ts';
import { gzipMembers, tickDayFiles, TickWriter, TICK_HEADER } from './tick-store.ts';

let roots: string[] = [];
const fresh = (): string => {
  const r = mkdtempSync(join(tmpdir(), 'fxflow-check-'));
  roots.push(r);
  return r;
};
afterEach(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
  roots = [];
});

const T0 = Date.UTC(2024, 0, 3, 22, 0);
/** Writes `flushes` blocks of ticks of EUR_USD, 5 min apart (two UTC days when there are enough). */
function record(root: string, flushes: readonly number[], instrument = 'EUR_USD'): void {
  const w = TickWriter.open(root, [instrument]);
  let k = w.last(instrument) === -Infinity ? 0 : Math.round((w.last(instrument) - T0) / 300_000) + 1;
  for (const n of flushes) {
    for (let i = 0; i < n; i++, k++) {
      const at = T0 + k * 300_000;
      const bid = (1.1 + (k % 13) / 10_000).toFixed(5);
      w.add(instrument, {
        time: formatTime(at),
        at,
        bid,
        ask: (Number(bid) + 0.0001).toFixed(5),
        knownAt: at + 9,
      });
    }
    w.flush();
  }
}

describe('data check: recorded ticks', () => {
  it('a day file cut at any byte is whole exactly when the cut falls between blocks, and a torn one names the byte a resumed recorder cuts at (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (flushes, cutSeed) => {
          const root = fresh();
          record(root, flushes);
          const files = tickDayFiles(root, 'EUR_USD');
          const { file, day } = files[files.length - 1]!;
          const size = statSync(file).size;
          const cut = cutSeed % (size + 1);
          truncateSync(file, cut);
          const { complete } = gzipMembers(readFileSync(file));
          const r = checkTickDay(file, day, true);
          if (complete === cut) expect(r.problems).toEqual([]);
          else {
            expect(r.problems).toHaveLength(1);
            expect(r.problems[0]).toContain(
              `TORN ${file}: bytes ${complete} to ${cut} are a gzip block cut short`,
            );
            expect(r.problems[0]).toContain(
              `Repair: truncate -s ${complete} ${file} (or start \`fxflow record … --prices\``,
            );
            // What the check counts is what the recorder keeps when it resumes (it cuts at the same byte).
            const rows = r.rows;
            TickWriter.open(root, ['EUR_USD']);
            expect(statSync(file).size).toBe(complete);
            const again = checkTickDay(file, day, true);
            expect(again.problems).toEqual([]);
            expect(again.rows).toBe(rows);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a flipped byte in a block with whole blocks after it is damage, not a tail to cut', () => {
    const root = fresh();
    record(root, [5, 5, 5]);
    const { file, day } = tickDayFiles(root, 'EUR_USD')[0]!;
    const buf = readFileSync(file);
    // The end of the first block, then a byte inside the second block's deflate data.
    let end = 0;
    for (let p = 1; p <= buf.length; p++)
      if (gzipMembers(buf.subarray(0, p)).members.length === 1) {
        end = p;
        break;
      }
    const bad = Buffer.from(buf);
    bad[end + 14] = bad[end + 14]! ^ 0x55;
    writeFileSync(file, bad);
    const r = checkTickDay(file, day, false);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatch(
      new RegExp(
        `^DAMAGED .*2024-01-03\\.csv\\.gz: the gzip block at byte ${end} is damaged and 1 whole block follows it from byte \\d+: a backtest stops at byte ${end}\\. Cutting the file there would lose the blocks after it`,
      ),
    );
    expect(r.problems[0]).not.toContain('truncate');
  });

  it("rows that do not parse, go back in time, leave the file's UTC day or cross are each named with the file and line", () => {
    const root = fresh();
    const dir = join(root, 'ticks', 'EUR_USD');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '2024-01-03.csv.gz');
    const day = '2024-01-03';
    const write = (...blocks: string[]): void =>
      writeFileSync(file, Buffer.concat(blocks.map((b) => gzipSync(b))));
    const ok = `${TICK_HEADER}\n2024-01-03T10:00:00.000000001Z,1.1,1.1002,1\n2024-01-03T10:00:00.000000002Z,1.1,1.1002,2\n`;
    write(ok);
    expect(checkTickDay(file, day, true).problems).toEqual([]);
    write(ok, '2024-01-03T10:00:01Z,1.1,x,3\n');
    expect(checkTickDay(file, day, true).problems).toEqual([
      `DAMAGED ${file}:4 (ask): expected a positive price, found "x"`,
    ]);
    // The same ms and the same digits below it: not after the row before.
    write(ok, '2024-01-03T10:00:00.000000002Z,1.1,1.1002,3\n');
    expect(checkTickDay(file, day, true).problems[0]).toBe(
      `DAMAGED ${file}:4 (time): 2024-01-03T10:00:00.000000002Z does not come after the row before's 2024-01-03T10:00:00.000000002Z: a recorded day is in time order; was a line moved or another file appended?`,
    );
    write(ok, '2024-01-04T00:00:00Z,1.1,1.1002,3\n');
    expect(checkTickDay(file, day, true).problems[0]).toMatch(
      /:4 \(time\): 2024-01-04T00:00:00Z is not in the file's UTC day 2024-01-03/,
    );
    write(
      ok,
      '2024-01-03T11:00:00Z,1.2,1.1,3\n2024-01-03T12:00:00Z,1.1,1.1,4\n2024-01-03T13:00:00Z,1.3,1.2,5\n',
    );
    const crossed = checkTickDay(file, day, true);
    expect(crossed.problems).toEqual([
      `CROSSED ${file}:4: 2 rows have their bid above the ask (the first at line 4); a backtest raises such an ask to the bid`,
    ]);
    expect(crossed.rows).toBe(5);
    write(ok, '2024-01-03T11:00:00Z,1.1,1.1002,3');
    expect(checkTickDay(file, day, true).problems).toEqual([
      `DAMAGED ${file}:4: the last row has no line end: the file was not written by fxflow record (each block ends with a whole row)`,
    ]);
  });

  it('checkTicks adds up each instrument and only the newest day offers the recorder as the repair', () => {
    const root = fresh();
    record(root, [10, 10, 10]);
    record(root, [4], 'GBP_USD');
    const [eur, gbp] = checkTicks(root);
    expect(eur).toMatchObject({
      instrument: 'EUR_USD',
      days: 2,
      rows: 30,
      first: T0,
      last: T0 + 29 * 300_000,
      problems: [],
    });
    expect(gbp).toMatchObject({ instrument: 'GBP_USD', days: 1, rows: 4 });
    expect(checkTicks(root, 'GBP_USD').map((t) => t.instrument)).toEqual(['GBP_USD']);
    const older = tickDayFiles(root, 'EUR_USD')[0]!.file;
    appendFileSync(older, gzipSync('2024-01-03T23:59:59Z,1.1,1.1002,1\n').subarray(0, 20));
    const torn = checkTicks(root, 'EUR_USD')[0]!.problems;
    expect(torn).toHaveLength(1);
    expect(torn[0]).toMatch(/^TORN .*2024-01-03\.csv\.gz: .*Repair: truncate -s \d+ \S+$/);
  });
});

const DAYS = [{ dayOfWeek: 'WEDNESDAY', daysCharged: 3 }];
const rec = (day: string, instrument = 'EUR_USD'): FinancingRecord => ({
  day,
  instrument,
  knownAt: Date.parse(`${day}T12:00:00Z`),
  longRate: '-0.0412',
  shortRate: '0.0100',
  financingDaysOfWeek: DAYS,
  marginRate: '0.0333',
});

describe('data check: recorded financing and recording.json', () => {
  it('lines parse, sit in their year, are recorded once; a torn last line is listed with the byte to cut at', async () => {
    const root = fresh();
    FinancingWriter.open(root).append([
      rec('2023-12-29'),
      rec('2024-01-02'),
      rec('2024-01-02', 'GBP_USD'),
      rec('2024-01-03'),
    ]);
    const clean = (await checkFinancing(root))!;
    expect(clean).toMatchObject({
      files: 2,
      records: 4,
      days: 3,
      first: '2023-12-29',
      last: '2024-01-03',
      instruments: ['EUR_USD', 'GBP_USD'],
      problems: [],
    });
    expect((await checkFinancing(root, 'GBP_USD'))!).toMatchObject({
      records: 1,
      instruments: ['GBP_USD'],
      held: ['EUR_USD', 'GBP_USD'],
    });
    const y2024 = join(root, 'financing', '2024.jsonl');
    const y2023 = join(root, 'financing', '2023.jsonl');
    const good = readFileSync(y2024, 'utf8');
    const second = good.split('\n')[1]!;
    appendFileSync(
      y2024,
      `${second}\n{"day": "2024-01-04", "instrument"\n${JSON.stringify(rec('2023-12-28'))}\n`,
    );
    const size = statSync(y2024).size;
    appendFileSync(y2024, '{"day":"2024-01-05","instr');
    const r = (await checkFinancing(root))!;
    expect(r.problems).toEqual([
      `DAMAGED ${y2024}:4: GBP_USD on 2024-01-02 is recorded twice (first at 2024.jsonl:2): remove one of the lines`,
      expect.stringMatching(new RegExp(`^DAMAGED ${y2024}:5: not a JSON financing record`)),
      `DAMAGED ${y2024}:6 (day): 2023-12-28 is not in 2024: a record goes to the file of its day's year (2023.jsonl); move the line there`,
      `TORN ${y2024}: bytes ${size} to ${size + 26} are a line without its line end (a recorder stopped mid-write): it is not a record. Repair: truncate -s ${size} ${y2024} (or start \`fxflow record … --financing\` on this catalog again: it cuts it on resume and reads the day's rates again while the day lasts)`,
    ]);
    expect(r.records).toBe(4 + 1); // the stray 2023 line is still a record of its day
    // A line without its line end in an older year is damage.
    appendFileSync(y2023, '{"day"');
    expect((await checkFinancing(root))!.problems).toContain(
      `DAMAGED ${y2023}: the last line has no line end in a year file that is not the newest: remove the part after byte ${statSync(y2023).size - 6} (truncate -s ${statSync(y2023).size - 6} ${y2023})`,
    );
  });

  it('recording.json must be there, valid, name every instrument on disk and have what it names', () => {
    const root = fresh();
    expect(checkRecordingManifest(root, { ticks: [], financing: [] })).toBeUndefined();
    expect(checkRecordingManifest(root, { ticks: ['EUR_USD'], financing: [] })!.problems[0]).toMatch(
      /^MISSING .*recording\.json: the catalog holds recorded ticks but no recording\.json/,
    );
    checkManifest(
      root,
      {
        environment: 'practice',
        accountID: '101-1',
        instruments: ['EUR_USD', 'GBP_USD'],
        currencies: [],
        kinds: ['prices', 'financing'],
      },
      false,
    );
    expect(
      checkRecordingManifest(root, { ticks: ['EUR_USD', 'GBP_USD'], financing: ['EUR_USD', 'GBP_USD'] })!
        .problems,
    ).toEqual([]);
    const file = manifestFile(root);
    expect(
      checkRecordingManifest(root, { ticks: ['EUR_USD', 'USD_JPY'], financing: ['EUR_USD', 'GBP_USD'] })!
        .problems,
    ).toEqual([
      `MISMATCH ${file}: the catalog holds ticks of USD_JPY, which recording.json does not name (its instruments: EUR_USD, GBP_USD): were they copied in from another recording? Move them to their own catalog`,
      `MISMATCH ${file}: recording.json says prices of EUR_USD, GBP_USD are recorded, but there are no ticks of GBP_USD on disk: were they removed?`,
    ]);
    // Instruments of an earlier manifest (kept under "previous" by --allow-mismatch) are named too.
    checkManifest(
      root,
      {
        environment: 'practice',
        accountID: '101-1',
        instruments: ['USD_JPY'],
        currencies: [],
        kinds: ['prices'],
      },
      true,
    );
    expect(
      checkRecordingManifest(root, { ticks: ['EUR_USD', 'GBP_USD', 'USD_JPY'], financing: ['EUR_USD'] })!
        .problems,
    ).toEqual([]);
    writeFileSync(file, '{"environment": "practice",');
    expect(checkRecordingManifest(root, { ticks: ['EUR_USD'], financing: [] })!.problems[0]).toMatch(
      /^DAMAGED .*recording\.json: is not valid JSON/,
    );
    writeFileSync(
      file,
      JSON.stringify({
        environment: 'practice',
        accountID: null,
        instruments: ['EUR_USD'],
        currencies: [],
        kinds: ['calendar'],
      }),
    );
    expect(checkRecordingManifest(root, { ticks: ['EUR_USD'], financing: [] })!.problems).toEqual([
      `MISMATCH ${file}: the catalog holds ticks but recording.json's kinds (calendar) do not include "prices"`,
    ]);
  });
});
