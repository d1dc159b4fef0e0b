import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { writeCompare } from '../report/compare.ts';
import { openInBrowser } from './open.ts';
import { writeRunReport } from '../report/run-report.ts';
import { folderKind } from '../report/sweep-model.ts';
import { writeSweepReport, writeWalkForwardReport } from '../report/sweep-report.ts';

/** Opens a page in the browser; a failure is one line on stderr and exit code 1 (the page is written: its path is printed). */
async function openFile(path: string): Promise<void> {
  const problem = await openInBrowser(path);
  if (problem === undefined) return;
  process.stderr.write(`fxflow: could not open the page in a browser: ${problem}. Open ${path} yourself\n`);
  process.exitCode = 1;
}

const size = (n: number): string =>
  n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${Math.round(n / 1024)} kB`;

export function reportCommand(y: Argv): Argv {
  return y
    .positional('run', {
      type: 'string',
      demandOption: true,
      describe:
        'A run folder (what `fxflow backtest` printed after "Run saved in"), a sweep folder (`fxflow optimize`) or a walk-forward folder (`fxflow walkforward`)',
    })
    .option('open', { type: 'boolean', default: false, describe: 'Open the report in the default browser' })
    .example('$0 report runs/20240101-120000-sma-cross-123 --open', 'Rebuild report.html and open it')
    .example(
      '$0 report runs/sweeps/sma-cross-0123456789',
      'Rebuild sweep.html (heatmap, trials, overfitting figures)',
    )
    .example(
      '$0 report runs/walkforward/sma-cross-0123456789',
      "Rebuild walkforward.html and every window's sweep.html",
    ) as Argv;
}

export async function runReport(a: { run: string; open?: boolean }): Promise<void> {
  const dir = resolve(a.run);
  const kind = folderKind(dir);
  const r =
    kind === 'walkforward'
      ? writeWalkForwardReport(dir)
      : kind === 'sweep'
        ? writeSweepReport(dir)
        : writeRunReport(dir);
  for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`Report written to ${r.path} (${size(r.bytes)})\n`);
  if (a.open) await openFile(r.path);
}

export function compareCommand(y: Argv): Argv {
  return y
    .positional('runs', {
      type: 'string',
      array: true,
      demandOption: true,
      describe: 'Two run folders or more',
    })
    .option('out', {
      type: 'string',
      default: 'compare.html',
      describe: 'Where to write the comparison page',
    })
    .option('open', { type: 'boolean', default: false, describe: 'Open it in the default browser' })
    .example('$0 compare runs/a runs/b --open', 'Equity curves overlaid, figures side by side') as Argv;
}

export async function runCompare(a: { runs: string[]; out?: string; open?: boolean }): Promise<void> {
  const r = writeCompare(
    a.runs.map((d) => resolve(d)),
    resolve(a.out ?? 'compare.html'),
  );
  process.stdout.write(`Comparison written to ${r.path} (${size(r.bytes)})\n`);
  for (const n of r.notes) process.stderr.write(`fxflow compare: warning: ${n}\n`);
  if (a.open) await openFile(r.path);
}
