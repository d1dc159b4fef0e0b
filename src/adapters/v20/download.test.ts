import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../catalog/catalog.ts';
import type { Candle } from '../../domain/candle.ts';
import type { Granularity } from '../../domain/granularity.ts';
import { loadInstruments } from '../../domain/instrument.ts';
import { parseTime } from '../../domain/time.ts';
import { startSandbox, type Sandbox } from '../../sandbox/server.ts';
import { DownloadError, downloadCandles, toCandle } from './download.ts';
import { V20Http } from './http.ts';
import { V20Rest } from './rest.ts';

let sandbox: Sandbox;
let http: V20Http;
let rest: V20Rest;
beforeAll(async () => {
  sandbox = await startSandbox({ start: '2024-02-15T00:00:00Z' });
  http = new V20Http({ baseUrl: sandbox.url });
  rest = new V20Rest(http);
});
afterAll(async () => {
  await http.close();
  await sandbox.close();
});

const newCatalog = (): Catalog => new Catalog(mkdtempSync(join(tmpdir(), 'fxflow-download-')));
const t = (s: string): number => parseTime(s);

/** Everything the sandbox serves in [from, to), fetched directly with from/to windows (no count paging). */
async function direct(
  instrument: string,
  g: Granularity,
  from: number,
  to: number,
  windowMs: number,
): Promise<Candle[]> {
  const out: Candle[] = [];
  for (let a = from; a < to; a += windowMs) {
    const b = Math.min(to, a + windowMs);
    const r = await rest.candles(instrument, { price: 'BA', granularity: g, from: a, to: b });
    for (const c of r.candles) {
      const k = toCandle(c, instrument, g, 'BA');
      if (k.complete && k.time >= a && k.time < b) out.push(k);
    }
  }
  return out;
}

async function held(
  catalog: Catalog,
  instrument: string,
  g: Granularity,
  from: number,
  to: number,
): Promise<Candle[]> {
  const out: Candle[] = [];
  for await (const b of catalog.candles({ instrument, granularity: g, from, to })) out.push(...b);
  return out;
}

const row = (c: Candle): string =>
  [c.time, c.bo, c.bh, c.bl, c.bc, c.ao, c.ah, c.al, c.ac, c.volume].join(',');

describe('historical download against the sandbox', () => {
  it('pages of 5000, interrupted after one page and resumed, gives exactly what the sandbox serves (across a month end)', async () => {
    const catalog = newCatalog();
    const from = t('2024-01-29T00:00:00Z');
    const to = t('2024-02-08T00:00:00Z');
    const ctl = new AbortController();
    const seen: number[] = [];
    let err: unknown;
    try {
      await downloadCandles({
        rest,
        catalog,
        instrument: 'EUR_USD',
        granularity: 'M1',
        from,
        to,
        signal: ctl.signal,
        onPage: (p) => {
          seen.push(p.written);
          if (p.pages === 1) ctl.abort();
        },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DownloadError);
    expect((err as DownloadError).code).toBe('DOWNLOAD_INTERRUPTED');
    expect((err as Error).message).toMatch(/run the same command again to resume/);
    expect(seen).toEqual([5000]);
    // What the interruption left: one page, in a partial month file.
    const partial = await held(catalog, 'EUR_USD', 'M1', from, to);
    expect(partial).toHaveLength(5000);
    expect(readdirSync(join(catalog.root, 'EUR_USD', 'M1')).sort()).toEqual(['2024-01.csv', '2024-02.csv']);

    const requests = http.stats.requests;
    const r = await downloadCandles({ rest, catalog, instrument: 'EUR_USD', granularity: 'M1', from, to });
    expect(r.resumed).toBe(true);
    expect(r.start).toBe(partial[partial.length - 1]!.time + 60_000);
    expect(r.pages).toBeGreaterThanOrEqual(2);
    expect(http.stats.requests - requests).toBe(r.pages);

    const got = await held(catalog, 'EUR_USD', 'M1', from, to);
    const want = await direct('EUR_USD', 'M1', from, to, 3 * 86400_000);
    expect(want.length).toBeGreaterThan(10_000); // several pages' worth
    expect(got.length).toBe(want.length);
    expect(got.map(row)).toEqual(want.map(row));
    expect(r.written + 5000).toBe(want.length);
    // Strictly increasing: no duplicate at any page boundary.
    for (let i = 1; i < got.length; i++) expect(got[i]!.time).toBeGreaterThan(got[i - 1]!.time);

    // Running it again finds nothing left to fetch before the end and writes no duplicate.
    const again = await downloadCandles({
      rest,
      catalog,
      instrument: 'EUR_USD',
      granularity: 'M1',
      from,
      to,
    });
    expect(again.resumed).toBe(true);
    expect((await held(catalog, 'EUR_USD', 'M1', from, to)).map(row)).toEqual(want.map(row));
    const jan = readFileSync(join(catalog.root, 'EUR_USD', 'M1', '2024-01.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(new Set(jan).size).toBe(jan.length);
  });

  it('page boundaries: tiny pages give the same candles, with no duplicate and no hole', async () => {
    const catalog = newCatalog();
    const from = t('2024-01-05T18:00:00Z'); // spans a weekend
    const to = t('2024-01-08T06:00:00Z');
    const r = await downloadCandles({
      rest,
      catalog,
      instrument: 'EUR_USD',
      granularity: 'M5',
      from,
      to,
      pageSize: 7,
    });
    const want = await direct('EUR_USD', 'M5', from, to, 86400_000);
    expect(r.pages).toBeGreaterThanOrEqual(Math.floor(want.length / 7));
    expect((await held(catalog, 'EUR_USD', 'M5', from, to)).map(row)).toEqual(want.map(row));
  });

  it('writes only complete candles: stops at the present, and carries on after it later', async () => {
    const catalog = newCatalog();
    const from = t('2024-02-14T00:00:00Z');
    const to = t('2024-02-16T00:00:00Z');
    // The sandbox clock is at 2024-02-15T00:00 + 12 min 30 s: the M5 candle of 00:10 is not complete.
    sandbox.setTime(t('2024-02-15T00:12:30Z'));
    const r = await downloadCandles({ rest, catalog, instrument: 'EUR_USD', granularity: 'M5', from, to });
    expect(r.reachedPresent).toBe(true);
    expect(r.last).toBe(t('2024-02-15T00:05:00Z'));
    const first = await held(catalog, 'EUR_USD', 'M5', from, to);
    expect(first.every((c) => c.time + 300_000 <= t('2024-02-15T00:12:30Z'))).toBe(true);

    sandbox.setTime(t('2024-02-15T06:00:00Z'));
    const r2 = await downloadCandles({ rest, catalog, instrument: 'EUR_USD', granularity: 'M5', from, to });
    expect(r2.start).toBe(t('2024-02-15T00:10:00Z'));
    const got = await held(catalog, 'EUR_USD', 'M5', from, to);
    const want = await direct('EUR_USD', 'M5', from, to, 86400_000);
    expect(got.map(row)).toEqual(want.map(row));
    expect(got[got.length - 1]!.time).toBe(t('2024-02-15T05:55:00Z'));
    sandbox.setTime(t('2024-02-15T00:00:00Z'));
  });

  it("passes the gate data import applies: the sandbox's answers go through unchanged", async () => {
    const catalog = newCatalog();
    const from = t('2024-01-05T18:00:00Z'); // spans a weekend: the clock check sees a weekly open
    const to = t('2024-01-09T06:00:00Z');
    await downloadCandles({
      rest,
      catalog,
      instrument: 'EUR_USD',
      granularity: 'M5',
      from,
      to,
      pageSize: 500,
      instruments: loadInstruments(),
    });
    const want = await direct('EUR_USD', 'M5', from, to, 86400_000);
    expect((await held(catalog, 'EUR_USD', 'M5', from, to)).map(row)).toEqual(want.map(row));
  });

  it('an answer that says it holds another instrument, or rows of another granularity, is refused as data import refuses them; nothing is written', async () => {
    // A server in front of the sandbox that answers wrongly: relabels the instrument, or serves M5 rows as M1.
    const lie = (kind: 'instrument' | 'spacing') =>
      createServer((req, res) => {
        const url = kind === 'spacing' ? req.url!.replace('granularity=M1', 'granularity=M5') : req.url!;
        void fetch(`${sandbox.url}${url}`).then(async (r) => {
          const body = (await r.json()) as { instrument: string; granularity: string };
          if (kind === 'instrument') body.instrument = 'GBP_USD';
          else body.granularity = 'M1';
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        });
      });
    for (const [kind, message] of [
      [
        'instrument',
        'OANDA v20 /instruments/EUR_USD/candles (instrument): the file says it holds GBP_USD, not EUR_USD: import it with --instrument GBP_USD',
      ],
      [
        'spacing',
        'OANDA v20 /instruments/EUR_USD/candles (granularity): its rows are mostly 5 minutes apart',
      ],
    ] as const) {
      const server = lie(kind);
      await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
      const h = new V20Http({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      const catalog = newCatalog();
      try {
        await expect(
          downloadCandles({
            rest: new V20Rest(h),
            catalog,
            instrument: 'EUR_USD',
            granularity: 'M1',
            from: t('2024-01-03T00:00:00Z'),
            to: t('2024-01-10T00:00:00Z'),
            instruments: loadInstruments(),
          }),
        ).rejects.toThrow(message);
        expect(existsSync(join(catalog.root, 'EUR_USD'))).toBe(false);
      } finally {
        await h.close();
        await new Promise((ok) => server.close(ok));
      }
    }
  });

  it('--price M writes mid prices on both sides', async () => {
    const catalog = newCatalog();
    const from = t('2024-01-03T00:00:00Z');
    const to = t('2024-01-03T06:00:00Z');
    await downloadCandles({ rest, catalog, instrument: 'EUR_USD', granularity: 'M5', price: 'M', from, to });
    const got = await held(catalog, 'EUR_USD', 'M5', from, to);
    const r = await rest.candles('EUR_USD', { price: 'M', granularity: 'M5', from, to });
    const want = r.candles.filter((c) => parseTime(c.time) < to);
    expect(got).toHaveLength(want.length);
    for (let i = 0; i < got.length; i++) {
      expect([got[i]!.bo, got[i]!.bh, got[i]!.bl, got[i]!.bc]).toEqual([
        got[i]!.ao,
        got[i]!.ah,
        got[i]!.al,
        got[i]!.ac,
      ]);
      expect(got[i]!.bc).toBe(Number(want[i]!.mid!.c));
    }
  });

  it('fxflow data download (the command) fills the catalog and resumes on the second run', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const root = join(import.meta.dirname, '../../..');
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-download-cli-'));
    const args = [
      join(root, 'bin/fxflow.js'),
      'data',
      'download',
      '--env',
      'sandbox',
      '--url',
      sandbox.url,
      '--instrument',
      'EUR_USD',
      '--granularity',
      'H1',
      '--price',
      'BA',
      '--from',
      '2024-01-02',
      '--catalog',
      dir,
    ];
    const env = { ...process.env, FXFLOW_TOKEN: '', HOME: dir };
    const first = await promisify(execFile)(process.execPath, [...args, '--to', '2024-01-09'], {
      cwd: root,
      env,
    });
    expect(first.stdout).toMatch(/candles written in 1 requests/);
    const second = await promisify(execFile)(process.execPath, [...args, '--to', '2024-01-16'], {
      cwd: root,
      env,
    });
    expect(second.stdout).toMatch(/^Resumed at 2024-01-0\d/);
    const got = await held(
      new Catalog(dir),
      'EUR_USD',
      'H1',
      t('2024-01-02T00:00:00Z'),
      t('2024-01-16T00:00:00Z'),
    );
    const want = await direct(
      'EUR_USD',
      'H1',
      t('2024-01-02T00:00:00Z'),
      t('2024-01-16T00:00:00Z'),
      14 * 86400_000,
    );
    expect(got.map(row)).toEqual(want.map(row));
  });

  it('refuses a bad range or page size before any request', async () => {
    const catalog = newCatalog();
    const n = http.stats.requests;
    await expect(
      downloadCandles({
        rest,
        catalog,
        instrument: 'EUR_USD',
        granularity: 'M1',
        from: t('2024-01-02T00:00:00Z'),
        to: t('2024-01-01T00:00:00Z'),
      }),
    ).rejects.toThrow(/--to .* must be after --from/);
    await expect(
      downloadCandles({
        rest,
        catalog,
        instrument: 'EUR_USD',
        granularity: 'M1',
        from: 0,
        to: 1,
        pageSize: 5001,
      }),
    ).rejects.toThrow(/page size 5001 must be an integer from 1 to 5000/);
    expect(http.stats.requests).toBe(n);
  });
});
