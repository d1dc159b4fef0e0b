import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { writeCompare } from '../report/compare.ts';
import { writeRunReport } from '../report/run-report.ts';
import { folderKind } from '../report/sweep-model.ts';
import { writeSweepReport, writeWalkForwardReport } from '../report/sweep-report.ts';

/** Opens a file with the desktop's viewer; says where it is when there is none. */
function openFile(path: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', path] : [path];
  const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
  child.on('error', () => process.stderr.write(`could not start ${cmd} to open it: open ${path} in a browser\n`));
  child.unref();
}

const size = (n: number): string => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${Math.round(n / 1024)} kB`);

export function reportCommand(y: Argv): Argv {
  return y
    .positional('run', { type: 'string', demandOption: true, describe: 'A run folder (what `fxflow backtest` printed after "Run saved in"), a sweep folder (`fxflow optimize`) or a walk-forward folder (`fxflow walkforward`)' })
    .option('open', { type: 'boolean', default: false, describe: 'Open the report in the default browser' })
    .example('$0 report runs/20240101-120000-sma-cross-123 --open', 'Rebuild report.html and open it')
    .example('$0 report runs/sweeps/sma-cross-0123456789', 'Rebuild sweep.html (heatmap, trials, overfitting figures)')
    .example('$0 report runs/walkforward/sma-cross-0123456789', 'Rebuild walkforward.html and every window\'s sweep.html') as Argv;
}

export function runReport(a: { run: string; open?: boolean }): void {
  const dir = resolve(a.run);
  const kind = folderKind(dir);
  const r = kind === 'walkforward' ? writeWalkForwardReport(dir) : kind === 'sweep' ? writeSweepReport(dir) : writeRunReport(dir);
  for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`Report written to ${r.path} (${size(r.bytes)})\n`);
  if (a.open) openFile(r.path);
}

export function compareCommand(y: Argv): Argv {
  return y
    .positional('runs', { type: 'string', array: true, demandOption: true, describe: 'Two run folders or more' })
    .option('out', { type: 'string', default: 'compare.html', describe: 'Where to write the comparison page' })
    .option('open', { type: 'boolean', default: false, describe: 'Open it in the default browser' })
    .example('$0 compare runs/a runs/b --open', 'Equity curves overlaid, figures side by side') as Argv;
}

export function runCompare(a: { runs: string[]; out?: string; open?: boolean }): void {
  const r = writeCompare(a.runs.map((d) => resolve(d)), resolve(a.out ?? 'compare.html'));
  process.stdout.write(`Comparison written to ${r.path} (${size(r.bytes)})\n`);
  for (const n of r.notes) process.stderr.write(`fxflow compare: warning: ${n}\n`);
  if (a.open) openFile(r.path);
}
