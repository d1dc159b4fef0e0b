import { readFileSync } from 'node:fs';

/** fxflow's version (package.json). */
// version.ts sits two folders below the package root both as src/cli/version.ts and as
// dist/cli/version.js (as ROOT in src/app/config.ts, which is not imported here: it loads the
// configuration's parsers). A module of its own: `fxflow run` reads it without importing main.ts.
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
