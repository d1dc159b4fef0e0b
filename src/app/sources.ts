import { resolve } from 'node:path';
import {
  Catalog,
  DataError,
  dataFiles,
  ensureSample,
  gateFiles,
  readClock,
  type CandleFormat,
  type SeriesMeta,
} from '../adapters/catalog/index.ts';
import { cacheDirFor, cachedCandles } from '../adapters/catalog/candle-cache.ts';
import { resampleSource, resampled } from '../adapters/catalog/resample.ts';
import { DEFAULT_ALIGNMENT, type Alignment, type Granularity } from '../domain/granularity.ts';
import type { InstrumentRegistry } from '../domain/instrument.ts';
import type { CandleSourceFactory, SeriesOrigin } from './backtest.ts';
import { configCatalog, sampleCatalogDir } from '../adapters/catalog/location.ts';
import type { BacktestConfig } from './config.ts';

/** A series' origin in a few words: sides, synthetic or real, sources, derivation. */
export function describeOrigin(meta: SeriesMeta | undefined): string {
  if (!meta) return 'origin unknown (imported before fxflow kept provenance: import it again to record it)';
  const kind = meta.synthetic ? 'SYNTHETIC' : 'real';
  const sides =
    meta.sides === 'bid/ask' ? 'bid/ask' : meta.sides === 'unknown' ? 'sides unknown' : `${meta.sides} only`;
  const from = meta.derivedFrom
    ? `resampled from ${meta.derivedFrom.granularity} (days at ${meta.derivedFrom.dailyAlignment}:00 ${meta.derivedFrom.alignmentTimezone})`
    : `${meta.sources.length} source${meta.sources.length === 1 ? '' : 's'}${meta.sources[0] ? ` (${[...new Set(meta.sources.map((s) => s.format))].join(', ')})` : ''}`;
  const crossed = meta.sources.reduce((n, s) => n + (s.crossedClamped ?? 0), 0);
  return `${kind}, ${sides}, ${from}${crossed > 0 ? `, ${crossed} crossed rows clamped` : ''}`;
}

/** The catalog as a backtest's candle source; the bundled synthetic sample is generated on first use. */
export async function dataCatalog(
  root: string,
  alignment: Alignment = DEFAULT_ALIGNMENT,
): Promise<{
  candles: CandleSourceFactory;
  available: (instrument: string, granularity: string) => boolean;
  origin: (instrument: string, granularity: Granularity) => SeriesOrigin;
}> {
  const sampleRoot = sampleCatalogDir();
  if (resolve(root) === sampleRoot) {
    const made = await ensureSample(sampleRoot);
    if (made)
      process.stderr.write(`Generated the bundled synthetic sample data in ${sampleRoot} (first use).\n`);
  }
  // Month files are decoded once into the catalog's cache (candle-cache.ts).
  const catalog = new Catalog(root, { cache: cacheDirFor(root) });
  // A series the catalog lacks is built from a finer one it holds (M1 → H1, D…), with OANDA's alignment.
  const finer = (i: string, g: Granularity): Granularity | undefined =>
    catalog.has(i, g) ? undefined : resampleSource(catalog, i, g);
  return {
    candles: (req) => {
      const src = finer(req.instrument, req.granularity);
      if (src !== undefined) {
        catalog.requireCoverage({ ...req, granularity: src }, req.granularity);
        return resampled(catalog, req.instrument, src, req.granularity, alignment, req);
      }
      catalog.requireCoverage(req); // a period the catalog does not hold is an error, not an empty report
      return catalog.candles(req);
    },
    available: (i, g) => catalog.has(i, g) || resampleSource(catalog, i, g as Granularity) !== undefined,
    origin: (i, g) => {
      const src = finer(i, g);
      const meta = catalog.meta(i, src ?? g);
      return {
        source: `${catalog.root} ${i} ${src ?? g}${src ? ` resampled to ${g} (days at ${alignment.dailyAlignment}:00 ${alignment.alignmentTimezone})` : ''}: ${describeOrigin(meta)}`,
        sides: meta?.sides ?? 'unknown',
        synthetic: meta?.synthetic ?? false,
      };
    },
  };
}

/** How a `--data` file is read: its format (default detected), its clock (`--timezone`) and a one-sided file's side (`--side`). */
export interface FileRead {
  readonly format?: string;
  readonly timezone?: string;
  readonly side?: 'bid' | 'ask' | 'mid';
}

/**
 * A single file or folder (`--data`) as the source of the run's series, decoded once into the
 * configured catalog's cache (candle-cache.ts) and read from there while the file is unchanged.
 * Every series read from it passes the gate `data import` applies (gate.ts): the files' names and
 * fields, the rows' spacing, prices and clock against the series asked for; a mismatch stops the
 * run with the import's refusal.
 */
export function fileSource(
  path: string,
  read: string | FileRead | undefined,
  config: BacktestConfig,
  instruments: InstrumentRegistry,
): CandleSourceFactory {
  const r: FileRead = typeof read === 'string' ? { format: read } : (read ?? {});
  const format = r.format as CandleFormat | undefined;
  const cache = cacheDirFor(configCatalog(config));
  const where = resolve(path);
  return (req) => {
    const inst = instruments.get(req.instrument);
    const o = {
      instrument: req.instrument,
      granularity: req.granularity,
      from: req.from,
      to: req.to,
      pipLocation: inst.pipLocation,
      ...(format ? { format } : {}),
      ...(r.timezone !== undefined ? { timezone: r.timezone } : {}),
      ...(r.side !== undefined ? { side: r.side } : {}),
      // One-sided rows need a spread model named by the user; 'mid' accepts zero knowingly.
      ...(config.data.spread === 'native'
        ? {
            oneSided:
              'a backtest on it needs a spread model: --spread fixed --spread-pips X, --spread hourly, or --spread mid to accept a zero spread knowingly',
          }
        : config.data.spread === 'hourly' && config.data.spreadPipsByHour
          ? { spread: { kind: 'hourly' as const, pips: config.data.spreadPipsByHour } }
          : config.data.spread === 'fixed'
            ? { spread: { kind: 'fixed' as const, pips: config.data.spreadPips } }
            : {}),
    };
    let files: string[];
    try {
      files = dataFiles(where);
    } catch {
      throw new DataError(where, 0, '', 'no such file or folder');
    }
    const ask = {
      instrument: req.instrument,
      granularity: req.granularity,
      instruments,
      read: readClock(files, format, r.timezone),
      fix: 'run' as const,
    };
    const { from: _f, to: _t, ...whole } = o;
    return gateFiles(files, where, ask, (f, all) => cachedCandles(f, all ? whole : o, cache));
  };
}
