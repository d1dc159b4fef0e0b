import { execFile } from 'node:child_process';
import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FinancingWriter } from '../src/adapters/catalog/financing-store.ts';
import { checkManifest } from '../src/adapters/catalog/recording-manifest.ts';
import { gzipMembers, tickDayFiles, TickWriter } from '../src/adapters/catalog/tick-store.ts';
import { formatTime } from '../src/domain/time.ts';

/**
 * `fxflow data check` on a catalog of recordings, as a real process: real day files and year files
 * written by the recorder's own writers, then damaged by cutting and flipping bytes; the repair
 * command it prints is run and the catalog checks whole again.
 */

const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
async function fxflow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'bin/fxflow.js'), ...args], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const cat = mkdtempSync(join(tmpdir(), 'fxflow-check-rec-'));
afterAll(() => rmSync(cat, { recursive: true, force: true }));

const T0 = Date.UTC(2024, 0, 2, 20); // Tuesday 20:00 UTC; ticks every 10 s for two days
const DAYS = [{ dayOfWeek: 'WEDNESDAY', daysCharged: 3 }];

describe('fxflow data check on recorded ticks and financing', () => {
  it('a whole recording checks clean; a torn tail, a damaged financing line and a stray instrument exit 1 naming file, byte and line; the printed repair makes it whole', async () => {
    checkManifest(
      cat,
      {
        environment: 'practice',
        accountID: '101-001-1-1',
        instruments: ['EUR_USD', 'GBP_USD'],
        currencies: [],
        kinds: ['prices', 'financing'],
      },
      false,
    );
    const w = TickWriter.open(cat, ['EUR_USD', 'GBP_USD']);
    for (let k = 0; k < 2 * 8640; k++) {
      const at = T0 + k * 10_000;
      for (const [name, base] of [
        ['EUR_USD', 1.1],
        ['GBP_USD', 1.27],
      ] as const) {
        const bid = (base + (k % 29) / 100_000).toFixed(5);
        w.add(name, {
          time: formatTime(at),
          at,
          bid,
          ask: (Number(bid) + 0.00012).toFixed(5),
          knownAt: at + 30,
        });
      }
      if (w.buffered >= 2000) w.flush();
    }
    w.flush();
    const f = FinancingWriter.open(cat);
    for (const day of ['2024-01-02', '2024-01-03', '2024-01-04']) {
      f.append(
        ['EUR_USD', 'GBP_USD'].map((instrument) => ({
          day,
          instrument,
          knownAt: Date.parse(`${day}T12:00:00Z`),
          longRate: '-0.0412',
          shortRate: '0.0100',
          financingDaysOfWeek: DAYS,
          marginRate: '0.0333',
        })),
      );
    }

    const clean = await fxflow('data', 'check', '--catalog', cat);
    expect(clean.stdout).toContain(
      'ticks EUR_USD: 17,280 ticks in 3 day files, 2024-01-02T20:00:00.000000000Z → 2024-01-04T19:59:50.000000000Z\n  every day file whole, rows in time order within their UTC day, bid <= ask\n',
    );
    expect(clean.stdout).toContain('ticks GBP_USD: 17,280 ticks in 3 day files');
    expect(clean.stdout).toContain(
      'financing: 6 records in 1 year file, 3 trading days 2024-01-02 → 2024-01-04  EUR_USD GBP_USD\n  every line a record, one per trading day and instrument\n',
    );
    expect(clean.stdout).toContain(
      'recording.json: account 101-001-1-1 (practice), instruments EUR_USD,GBP_USD, kinds financing,prices\n  matches the recordings on disk\n',
    );
    expect(clean.code).toBe(0);

    // kill -9 mid-flush: the newest EUR_USD day cut inside its last block.
    const files = tickDayFiles(cat, 'EUR_USD');
    const newest = files[files.length - 1]!.file;
    const size = statSync(newest).size;
    truncateSync(newest, size - 100);
    const complete = gzipMembers(readFileSync(newest)).complete;
    // A financing line damaged by a flipped byte (the opening brace).
    const year = join(cat, 'financing', '2024.jsonl');
    const text = readFileSync(year);
    const third = text.indexOf('\n', text.indexOf('\n') + 1) + 1;
    text[third] = text[third]! ^ 0x20;
    writeFileSync(year, text);
    // Ticks of an instrument the recording does not name.
    const jpy = TickWriter.open(cat, ['USD_JPY']);
    jpy.add('USD_JPY', { time: formatTime(T0), at: T0, bid: '141.100', ask: '141.112', knownAt: T0 + 5 });
    jpy.flush();

    const damaged = await fxflow('data', 'check', '--catalog', cat);
    expect(damaged.code).toBe(1);
    const torn = damaged.stdout.split('\n').find((l) => l.includes('TORN'))!;
    expect(torn).toBe(
      `  TORN ${newest}: bytes ${complete} to ${size - 100} are a gzip block cut short (a recording stopped mid-write, e.g. by kill -9); the ${torn.match(/the ([\d,]+) rows/)![1]} rows before byte ${complete} are whole. Repair: truncate -s ${complete} ${newest} (or start \`fxflow record … --prices\` on this catalog again: it cuts it on resume)`,
    );
    expect(damaged.stdout).toMatch(new RegExp(`  DAMAGED ${year}:3: not a JSON financing record`));
    expect(damaged.stdout).toContain(
      `  MISMATCH ${join(cat, 'recording.json')}: the catalog holds ticks of USD_JPY, which recording.json does not name (its instruments: EUR_USD, GBP_USD)`,
    );
    expect(damaged.stdout).not.toMatch(/NaN|undefined/);
    // Candle checks only: the recordings are not read.
    const candles = await fxflow('data', 'check', '--catalog', cat, '--granularity', 'M1');
    expect(candles.stdout).toBe(`No series M1 in ${cat}.\n`);

    // The repair printed, run as printed; the other two fixed by hand as the messages say.
    await run('sh', ['-c', torn.slice(torn.indexOf('Repair: ') + 8, torn.indexOf(' (or start'))]);
    text[third] = text[third]! ^ 0x20;
    writeFileSync(year, text);
    rmSync(join(cat, 'ticks', 'USD_JPY'), { recursive: true });
    const repaired = await fxflow('data', 'check', '--catalog', cat, '--instrument', 'EUR_USD');
    expect(repaired.stdout).not.toContain('GBP_USD:');
    expect(repaired.stdout).toContain('every day file whole');
    expect(repaired.code).toBe(0);
    expect(statSync(newest).size).toBe(complete);
  });

  it('a torn financing tail is listed with the byte to cut at', async () => {
    const year = join(cat, 'financing', '2024.jsonl');
    const before = statSync(year).size;
    appendFileSync(year, '{"day":"2024-01-05","instrument":"EUR_');
    const r = await fxflow('data', 'check', '--catalog', cat, '--instrument', 'EUR_USD');
    expect(r.stdout).toContain(
      `  TORN ${year}: bytes ${before} to ${before + 38} are a line without its line end (a recorder stopped mid-write): it is not a record. Repair: truncate -s ${before} ${year}`,
    );
    expect(r.code).toBe(1);
  });
});
