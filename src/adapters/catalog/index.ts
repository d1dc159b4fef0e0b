export {
  Catalog,
  CATALOG_HEADER,
  catalogRow,
  describeHoles,
  type CatalogEntry,
  type Conflict,
  type SeriesMeta,
  type SeriesSource,
  type WriteResult,
} from './catalog.ts';
export { CoverageTracker, formatHole, openMarketMs, type Hole } from './coverage.ts';
export {
  PLAUSIBLE,
  checkNames,
  checkedCandles,
  dataFiles,
  fieldsOf,
  granularityInName,
  instrumentsInName,
} from './import-checks.ts';
export {
  gateFileNames,
  gateFiles,
  gateRows,
  gateSeries,
  gateStated,
  gateTicks,
  priceGate,
  readClock,
  type GateAsk,
  type TickAsk,
} from './gate.ts';
export { DataError } from './errors.ts';
export {
  detectFormat,
  newNotices,
  openBidAsk,
  openCandles,
  openTicks,
  sidesOf,
  type Sides,
  type CandleFormat,
  type ReadNotices,
  type ReadOptions,
  type SpreadModel,
} from './formats.ts';
export { Aggregator, aggregate, aggregateBatches } from './aggregate.ts';
export { ensureSample, SAMPLE } from './sample.ts';
export { syntheticBatches, syntheticCandles, syntheticM1Batches, type SyntheticSpec } from './synthetic.ts';
export {
  ClockWatch,
  clockProblem,
  describeClosed,
  describeStretches,
  CLOSED_BARS_ALLOWED,
  type ClockReport,
  type ClockStretch,
} from './clock-check.ts';
export { parseClock, formatOffset, offsetFlag, ClockSpecError, type FileClock } from './file-clock.ts';
export { describePacking, headText, openBytes, packingOf, type Packing } from './compressed.ts';
