import { createRequire } from 'node:module';
import { codeFile } from '../domain/package-root.ts';

const require = createRequire(import.meta.url);
const page = require(codeFile('report/page/human-time.cjs')) as {
  humanTime: (ms: number, zone?: string) => string;
  humanTimeTick: (ms: number, type: number, zone?: string) => string;
};

/**
 * An instant (epoch ms) as people read it, in an IANA zone (UTC when absent): the same function
 * the report pages run (page/human-time.cjs), so report.txt and report.html say a time alike.
 */
export const humanTime: (ms: number, zone?: string) => string = page.humanTime;

/**
 * A chart time-axis label (Lightweight Charts' TickMarkType: 0 year, 1 month, 2 day, 3 time, 4
 * with seconds) of an instant in a zone: the pages' own (page/human-time.cjs).
 */
export const humanTimeTick: (ms: number, type: number, zone?: string) => string = page.humanTimeTick;
