import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { ROOT } from '../app/config.ts';

/** `fxflow init` cannot scaffold into this folder: names it and why. */
export class InitError extends Error {
  readonly code = 'INIT' as const;
  constructor(
    readonly dir: string,
    message: string,
  ) {
    super(`${dir}: ${message}`);
    this.name = 'InitError';
  }
}

const STRATEGY = `import { defineStrategy } from 'fxflow';

/**
 * RSI reversion: buys when RSI(period) falls below \`low\`, sells when it rises above \`high\`, with a
 * stop loss and a take profit in pips. Run it with \`npx fxflow backtest strategy.ts\`.
 */
export default defineStrategy({
  params: { instrument: 'EUR_USD', granularity: 'H1', period: 14, low: 30, high: 70, units: 10_000, stopPips: 30, takePips: 60 },
  subscribe: (p) => ({ candles: [\`\${p.instrument}:\${p.granularity}\`] }),
  init: () => ({ trades: 0 }),
  onCandle(ctx, s) {
    const p = ctx.params;
    const rsi = ctx.indicator('RSI', { period: p.period });
    if (rsi === undefined || ctx.position(p.instrument).net !== 0) return;
    const side = rsi < p.low ? 1 : rsi > p.high ? -1 : 0;
    if (side === 0) return;
    const order = ctx.market(p.instrument, side * p.units, {
      sl: { distance: ctx.pips(p.instrument, p.stopPips) },
      tp: { distance: ctx.pips(p.instrument, p.takePips) },
    });
    return { state: { trades: s.trades + 1 }, intents: [order] };
  },
});
`;

/**
 * The project's tsconfig.json. An installed fxflow is checked against its compiled declarations
 * (dist/*.d.ts); a clone of fxflow (it has src/) against its sources, as the CLI run from that clone
 * uses them: the `fxflow-source` export condition, whose files import .ts paths.
 */
const tsconfig = (fromClone: boolean): object => ({
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    ...(fromClone ? { customConditions: ['fxflow-source'] } : {}),
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    types: [],
  },
  include: ['*.ts', 'strategies'],
});

const README = (name: string): string => `# ${name}

An fxflow strategy project.

\`\`\`sh
npx fxflow backtest strategy.ts            # backtest on the catalog's EUR_USD H1 (2024)
npx fxflow backtest strategy.ts --param period=21 --from 2024-06-01
npm run check                              # type-check the strategies (tsc)
\`\`\`

\`strategy.ts\` imports \`fxflow\`, linked in node_modules/ to the fxflow it was made with, as are the
\`fxflow\` and \`tsc\` commands (node_modules/.bin/), so both commands above work with no install.
package.json names that fxflow by its absolute path: moved anywhere on this machine, the project
installs (\`npm install\`) and runs as before. To use another copy of fxflow (a clone on another
machine, a newer one), install it over the old: \`npm install /path/to/fxflow\` or
\`npm install /path/to/fxflow-<version>.tgz\` (what \`npm pack\` makes in a clone of fxflow).
Packages installed here (\`npm install <name>\`) can be imported by the strategy, and so can the ones
fxflow installs (technicalindicators, luxon).
`;

/**
 * Scaffolds a strategy project in `dir`: package.json (fxflow as a file: dependency), tsconfig.json,
 * a sample strategy, a README, node_modules/fxflow linked to this fxflow (what `npm install` would
 * make of the file: dependency), and the commands its scripts and `npx` run linked in
 * node_modules/.bin (fxflow, and tsc from the TypeScript fxflow depends on), so `npx fxflow backtest
 * strategy.ts` and `npm run check` work at once, with no install and no network, wherever the folder is.
 * Refuses a folder that already holds any of those files. Returns the files written.
 */
export function initProject(dir: string): string[] {
  const target = resolve(dir);
  if (existsSync(target) && readdirSync(target).length > 0) {
    for (const f of ['package.json', 'tsconfig.json', 'strategy.ts']) {
      if (existsSync(join(target, f)))
        throw new InitError(target, `already holds ${f}: give an empty or new folder (nothing was written)`);
    }
  }
  if (resolve(target) === ROOT) throw new InitError(target, 'is fxflow itself: give another folder');
  mkdirSync(target, { recursive: true });
  const name =
    basename(target)
      .toLowerCase()
      .replace(/[^a-z0-9-_.]/g, '-') || 'strategies';
  // The fxflow that made the project, and the TypeScript it checks with, by their absolute paths
  // (the real ones, not links): `npm install` resolves both wherever the project is moved on this
  // machine (a relative path would not), with no registry (a version range would need one).
  const home = realpathSync(ROOT).split('\\').join('/');
  const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  const typescript = realpathSync(join(dirname(tsc), '..'))
    .split('\\')
    .join('/');
  const pkg = {
    name,
    private: true,
    type: 'module',
    scripts: { backtest: 'fxflow backtest strategy.ts', check: 'tsc -p tsconfig.json' },
    dependencies: { fxflow: `file:${home}` },
    devDependencies: { typescript: `file:${typescript}` },
  };
  const written: string[] = [];
  const write = (file: string, text: string): void => {
    writeFileSync(join(target, file), text);
    written.push(file);
  };
  write('package.json', `${JSON.stringify(pkg, null, 2)}\n`);
  write('tsconfig.json', `${JSON.stringify(tsconfig(existsSync(join(ROOT, 'src'))), null, 2)}\n`);
  write('strategy.ts', STRATEGY);
  write('README.md', README(name));
  write('.gitignore', 'node_modules/\nruns/\n');
  const link = join(target, 'node_modules', 'fxflow');
  if (!existsSync(link)) {
    mkdirSync(join(target, 'node_modules'), { recursive: true });
    symlinkSync(ROOT, link, 'junction');
    written.push('node_modules/fxflow');
  }
  const bin = join(target, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  const command = (name: string, file: string): void => {
    const at = join(bin, name);
    if (exists(at)) return;
    // npm marks a package's commands executable when it installs them; a clone keeps git's mode.
    try {
      if ((statSync(file).mode & 0o111) === 0) chmodSync(file, 0o755);
    } catch {
      // Not ours to change: `node_modules/.bin/<name>` may then need `node` in front, as npm would too.
    }
    symlinkSync(file, at);
    written.push(`node_modules/.bin/${name}`);
  };
  command('fxflow', join(ROOT, 'bin', 'fxflow.js'));
  command('tsc', tsc);
  return written;
}

/** Whether a path exists, a dangling symlink included. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
