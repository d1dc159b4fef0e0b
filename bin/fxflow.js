#!/usr/bin/env node
// The fxflow command. TypeScript (the CLI and users' strategy modules) runs with no build step:
// tsx's loader is registered before the CLI is imported.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
