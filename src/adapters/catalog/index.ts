export { Catalog, CATALOG_HEADER, catalogRow, type CatalogEntry } from './catalog.ts';
export { DataError } from './errors.ts';
export { detectFormat, newNotices, openCandles, openTicks, type CandleFormat, type ReadNotices, type ReadOptions, type SpreadModel } from './formats.ts';
export { Aggregator, aggregate, aggregateBatches } from './aggregate.ts';
export { ensureSample, SAMPLE } from './sample.ts';
export { syntheticBatches, syntheticCandles, syntheticM1Batches, type SyntheticSpec } from './synthetic.ts';
