import { mkdtempSync, mkdirSync, readdirSync, writeFileSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticBatches } from '../adapters/catalog/synthetic.ts';
import { catalogSourceHash, cachedSeries } from './series-cache.ts';
import { decodeSeries, hashSeries } from './shared-series.ts';

const FROM = Date.UTC(2024, 0, 1);
const TO = Date.UTC(2024, 1, 1);

describe('binary cache of decoded series', () => {
  it('the second read comes from the cache, with the same content; a cut file is decoded again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-cache-'));
    let decodes = 0;
    const decode = () => {
      decodes++;
      return decodeSeries(
        'EUR_USD',
        'M5',
        (async function* () {
          yield* syntheticBatches({ instrument: 'EUR_USD', granularity: 'M5', from: FROM, to: TO, seed: 3 });
        })(),
      );
    };
    const key = {
      instrument: 'EUR_USD',
      granularity: 'M5' as const,
      from: FROM,
      to: TO,
      sourceHash: 'abc123',
    };
    const a = await cachedSeries(dir, key, decode);
    const b = await cachedSeries(dir, key, decode);
    expect([a.hit, b.hit, decodes]).toEqual([false, true, 1]);
    expect(b.series.length).toBe(a.series.length);
    expect(a.series.length).toBeGreaterThan(5000);
    expect(hashSeries([b.series])).toBe(hashSeries([a.series]));
    expect(b.series.time.buffer).toBeInstanceOf(SharedArrayBuffer);
    // Another source hash: another file, decoded.
    await cachedSeries(dir, { ...key, sourceHash: 'def456' }, decode);
    expect(decodes).toBe(2);
    // A file cut short (a kill while writing it is prevented by the rename, but a disk can fill): decoded again.
    const file = readdirSync(dir).find((f) => f.includes('abc123'))!;
    truncateSync(join(dir, file), 100);
    const c = await cachedSeries(dir, key, decode);
    expect([c.hit, decodes]).toEqual([false, 3]);
    expect(hashSeries([c.series])).toBe(hashSeries([a.series]));
  });

  it('the source hash covers the month files of the period, and changes when one of them does', () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-catalog-'));
    const dir = join(root, 'EUR_USD', 'H1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '2024-01.csv'), 'a');
    writeFileSync(join(dir, '2024-02.csv'), 'b');
    writeFileSync(join(dir, '2024-03.csv'), 'c');
    const jan = catalogSourceHash(root, 'EUR_USD', 'H1', Date.UTC(2024, 0, 1), Date.UTC(2024, 1, 1));
    const janFeb = catalogSourceHash(root, 'EUR_USD', 'H1', Date.UTC(2024, 0, 1), Date.UTC(2024, 2, 1));
    expect(jan).not.toBe(janFeb);
    writeFileSync(join(dir, '2024-03.csv'), 'changed');
    expect(catalogSourceHash(root, 'EUR_USD', 'H1', Date.UTC(2024, 0, 1), Date.UTC(2024, 2, 1))).toBe(janFeb);
    writeFileSync(join(dir, '2024-02.csv'), 'changed');
    expect(catalogSourceHash(root, 'EUR_USD', 'H1', Date.UTC(2024, 0, 1), Date.UTC(2024, 2, 1))).not.toBe(
      janFeb,
    );
    expect(catalogSourceHash(root, 'GBP_USD', 'H1', 0, 1)).toBeUndefined();
  });
});
