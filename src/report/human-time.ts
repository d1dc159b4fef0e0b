import { createRequire } from 'node:module';
import { codeFile } from '../domain/package-root.ts';

const require = createRequire(import.meta.url);

/**
 * An instant (epoch ms) as people read it, in an IANA zone (UTC when absent): the same function
 * the report pages run (page/human-time.cjs), so report.txt and report.html say a time alike.
 */
export const humanTime: (ms: number, zone?: string) => string = (
  require(codeFile('report/page/human-time.cjs')) as { humanTime: (ms: number, zone?: string) => string }
).humanTime;
