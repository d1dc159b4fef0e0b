#!/usr/bin/env node
// The fxflow command. It runs the compiled JavaScript in dist/ (built by `npm run build`, which
// `npm ci` and `npm pack` run as `prepare`), so fxflow's own TypeScript is not compiled on each run.
// In a clone, the build is used only when it was built from the sources as they are now
// (scripts/build-stamp.mjs); otherwise fxflow runs from src/ through tsx, as slow to start as
// before but never stale (a terminal is told why). FXFLOW_RUN_FROM=source forces the sources,
// FXFLOW_RUN_FROM=dist the build. An installed package has no src/: dist/ is all there is.
// Users' strategy modules are TypeScript either way: tsx loads them (src/app/load-strategy.ts).
// fxflow's V8 settings (src/cli/v8-tuning.ts) are applied before its own modules load.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

async function fromSource() {
  const forced = process.env.FXFLOW_RUN_FROM;
  if (forced === 'source' || forced === 'dist') return forced === 'source';
  if (!existsSync(`${root}src`)) return false;
  const { buildState } = await import('../scripts/build-stamp.mjs');
  const state = buildState(root);
  if (state.current) return false;
  if (process.stderr.isTTY) process.stderr.write(`fxflow: running from the TypeScript sources (${state.reason}); \`npm run build\` makes start-up fast again\n`);
  return true;
}

let cli;
if (await fromSource()) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = { v8: '../src/cli/v8-tuning.ts', main: '../src/cli/main.ts' };
} else {
  cli = { v8: '../dist/cli/v8-tuning.js', main: '../dist/cli/main.js' };
}
const { tuneV8 } = await import(cli.v8);
tuneV8();
const { main } = await import(cli.main);
process.exitCode = await main(process.argv.slice(2));
