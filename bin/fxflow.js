#!/usr/bin/env node
// The fxflow command. TypeScript (the CLI and users' strategy modules) runs with no build step:
// tsx's loader is registered before the CLI is imported. fxflow's V8 settings (src/cli/v8-tuning.ts)
// are applied before its own modules load.
import { register } from 'tsx/esm/api';

register();
const { tuneV8 } = await import('../src/cli/v8-tuning.ts');
tuneV8();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
