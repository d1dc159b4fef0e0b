#!/usr/bin/env node
// The fxflow command. It runs the build's bundle, dist/bundle/ (built by `npm run build`, which
// `npm ci` and `npm pack` run as `prepare`: one entry for the command line, whose commands' code
// are chunks loaded when the command runs), so fxflow's own TypeScript is not compiled on each run.
// In a clone, the build is used only when it was built from the sources as they are now
// (scripts/build-stamp.mjs); otherwise fxflow runs from src/ through tsx, as slow to start as
// before but never stale (a terminal is told why). FXFLOW_RUN_FROM=source forces the sources,
// FXFLOW_RUN_FROM=dist the build. An installed package has no src/: the build is all there is.
// Users' strategy modules are TypeScript either way: tsx loads them (src/app/load-strategy.ts).
// fxflow's V8 settings (src/cli/v8-tuning.ts) are applied before its own modules load.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

// `fxflow --version` (or -v) alone needs package.json and nothing else: printed here, as the
// command line prints it (src/cli/version.ts), without loading the command line.
if (process.argv.length === 3 && (process.argv[2] === '--version' || process.argv[2] === '-v')) {
  process.stdout.write(`${JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version}\n`, () =>
    process.exit(0),
  );
  await new Promise(() => {}); // until it is written
}

// `fxflow run`: the operator's signals are recorded from the process's first moment, before any of
// fxflow's modules load (Node's default for SIGUSR2 would end the process, exit 140, nothing
// flattened; SIGINT's and SIGTERM's without a word). The run's start handlers (`StartSignals`,
// src/runner/kill-switch.ts) take them over and act on what was received meanwhile. Other commands
// install nothing. FXFLOW_TEST_HOLD_START=1 (tests only) holds here until the first signal, so a
// test can deliver one at this moment for certain.
if (process.argv[2] === 'run') {
  const received = [];
  let wake;
  const record = (sig) => {
    received.push(sig);
    wake?.();
  };
  const sigs = ['SIGINT', 'SIGTERM', 'SIGUSR2'];
  for (const sig of sigs) process.on(sig, record);
  globalThis[Symbol.for('fxflow.early-signals')] = {
    received,
    release: () => sigs.forEach((sig) => process.off(sig, record)),
  };
  if (process.env.FXFLOW_TEST_HOLD_START === '1') {
    process.stderr.write('fxflow: signals recorded; holding until one arrives (FXFLOW_TEST_HOLD_START)\n');
    const alive = setInterval(() => undefined, 60_000); // a pending promise alone would not keep the process up
    await new Promise((res) => (wake = res));
    clearInterval(alive);
    wake = undefined;
  }
}

async function fromSource() {
  const forced = process.env.FXFLOW_RUN_FROM;
  if (forced === 'source' || forced === 'dist') return forced === 'source';
  if (!existsSync(`${root}src`)) return false;
  const { buildState } = await import('../scripts/build-stamp.mjs');
  const state = buildState(root);
  if (state.current) return false;
  if (process.stderr.isTTY)
    process.stderr.write(
      `fxflow: running from the TypeScript sources (${state.reason}); \`npm run build\` makes start-up fast again\n`,
    );
  return true;
}

let cli;
if (await fromSource()) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = { v8: '../src/cli/v8-tuning.ts', main: '../src/cli/main.ts' };
} else {
  cli = { v8: '../dist/bundle/v8-tuning.js', main: '../dist/bundle/cli.js' };
}
const { tuneV8 } = await import(cli.v8);
tuneV8();
const { main } = await import(cli.main);
process.exitCode = await main(process.argv.slice(2));
