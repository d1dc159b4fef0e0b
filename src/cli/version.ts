import { readFileSync } from 'node:fs';
import { PACKAGE_JSON } from '../domain/package-root.ts';

/** fxflow's version (package.json). */
// A module of its own: `fxflow run` reads it without importing main.ts, and `--version` without
// the configuration's parsers (src/app/config.ts).
export const VERSION: string = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string })
  .version;
