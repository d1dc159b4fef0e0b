// `fxflow journal`: what an operator does to a run's journal by hand. For now one thing: clear the
// kill switch's halt, so that `fxflow run` on that journal trades again.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { Journal } from '../runner/order-path/journal.ts';
import { RunnerError } from '../runner/session/errors.ts';

/** Declares `fxflow journal <command>`. */
export function journalCommand(y: Argv): Argv {
  return y
    .command(
      'clear-halt <dir>',
      "Clear the kill switch's halt from a run's journal: fxflow run on it trades again (while halted, it only finishes the flatten and stops)",
      (a) =>
        a.positional('dir', {
          type: 'string',
          demandOption: true,
          describe: 'The journal directory (fxflow run --journal; the run names it when it halts)',
        }),
      (a) => {
        process.stdout.write(`${clearHalt(String(a.dir))}\n`);
      },
    )
    .demandCommand(1, 'Name a journal command: clear-halt <dir>');
}

/**
 * Ends the halt a journal holds, under the journal's lock (a journal a live run holds is refused:
 * stop that run first). Returns what it did, in words; a directory that holds no journal is an error.
 */
export function clearHalt(dir: string): string {
  const d = resolve(dir);
  if (!existsSync(join(d, 'journal.log')) && !existsSync(join(d, 'snapshot.json'))) {
    throw new RunnerError(
      'RUNNER',
      `${d} holds no journal (no journal.log or snapshot.json): give the directory fxflow run names with --journal (default runs/journal/<env>-<account>-<strategy>)`,
    );
  }
  const journal = Journal.open(d);
  try {
    const was = journal.clearHalt();
    if (was === undefined) return `journal ${d} is not halted: nothing to clear`;
    return `journal ${d}: the halt since ${new Date(was.at).toISOString()} (${was.why}) is cleared; fxflow run on this journal trades again`;
  } finally {
    journal.close();
  }
}
