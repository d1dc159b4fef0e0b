import type { Candle } from '../../domain/candle.ts';
import { alignOpen, granularityMs, type Alignment, type Granularity } from '../../domain/granularity.ts';
import type { UnixMs } from '../../domain/time.ts';
import { aggregate } from './aggregate.ts';
import type { Catalog, WriteResult } from './catalog.ts';
import { DataError } from './errors.ts';

/**
 * The finest series the catalog holds for `instrument` that is finer than `target` and from which
 * `target` can be built: a granularity whose candles fit whole into the target's (M1, M5… for H1;
 * one that divides an hour for D, W, M). Undefined when there is none.
 */
export function resampleSource(
  catalog: Catalog,
  instrument: string,
  target: Granularity,
): Granularity | undefined {
  const order: Granularity[] = [
    'S5',
    'S10',
    'S15',
    'S30',
    'M1',
    'M2',
    'M4',
    'M5',
    'M10',
    'M15',
    'M30',
    'H1',
    'H2',
    'H3',
    'H4',
    'H6',
    'H8',
    'H12',
  ];
  // D, W and M start at an hour of the alignment zone: built from candles that divide an hour.
  const span = target === 'D' || target === 'W' || target === 'M' ? 3_600_000 : granularityMs(target);
  for (const g of order) {
    const ms = granularityMs(g);
    if (ms >= granularityMs(target) || span % ms !== 0) continue;
    if (catalog.has(instrument, g)) return g;
  }
  return undefined;
}

/**
 * Candles of `target` built from the finer `source` series in [from, to): the finer candles are
 * read from the open of the target candle holding `from`, so the first candle is whole, and a
 * candle is emitted only when its whole period lies before the source's last candle. When the
 * source itself starts inside the first target candle (more than a tenth of it in: a file that
 * begins at 10:30 for H1, on a Wednesday noon for D), that partial candle is left out. Per side:
 * first open, highest high, lowest low, last close; volumes add.
 */
export async function* resampled(
  catalog: Catalog,
  instrument: string,
  source: Granularity,
  target: Granularity,
  alignment: Alignment,
  period: { readonly from?: UnixMs; readonly to?: UnixMs } = {},
): AsyncIterable<readonly Candle[]> {
  const start = period.from !== undefined ? alignOpen(target, period.from, alignment) : undefined;
  const read = catalog.candles({
    instrument,
    granularity: source,
    ...(start !== undefined ? { from: start } : {}),
    ...(period.to !== undefined ? { to: period.to } : {}),
  } as Parameters<Catalog['candles']>[0]);
  // The first finer candle read: a target candle that opens well before it is partial (the source
  // starts inside it) and is left out rather than written as a whole one.
  let firstFine = Number.NaN;
  const fine = (async function* () {
    for await (const b of read) {
      if (firstFine !== firstFine && b.length > 0) firstFine = b[0]!.time;
      yield b;
    }
  })();
  let first = true;
  for await (const batch of aggregate(fine, target, alignment)) {
    const out: Candle[] = [];
    for (const c of batch) {
      if (first) {
        first = false;
        if (firstFine - c.time > (c.at - c.time) / 10) continue;
      }
      if (
        (period.from === undefined || c.time >= period.from) &&
        (period.to === undefined || c.at <= period.to)
      )
        out.push(c);
    }
    if (out.length > 0) yield out;
  }
}

/** `fxflow data resample`: builds `target` from `source` and writes it to the catalog with its provenance. */
export async function resampleSeries(
  catalog: Catalog,
  instrument: string,
  source: Granularity,
  target: Granularity,
  alignment: Alignment,
  replace: boolean,
): Promise<WriteResult> {
  if (granularityMs(source) >= granularityMs(target)) {
    throw new DataError(
      catalog.root,
      0,
      '--granularity',
      `${target} is not coarser than ${source}: resampling builds coarser candles from finer ones`,
    );
  }
  if (!catalog.has(instrument, source)) {
    throw new DataError(
      catalog.root,
      0,
      '--source',
      `the catalog holds no ${instrument} ${source} candles to build ${target} from: import them first (\`fxflow data import <file> --instrument ${instrument} --granularity ${source}\`)`,
    );
  }
  const held = catalog.meta(instrument, source);
  return catalog.write(instrument, target, resampled(catalog, instrument, source, target, alignment), {
    replace,
    meta: {
      synthetic: held?.synthetic ?? false,
      sides: held?.sides ?? 'unknown',
      sources: held?.sources ?? [],
      derivedFrom: { granularity: source, ...alignment },
    },
  });
}
