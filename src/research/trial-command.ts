import { resolve } from 'node:path';

/** A word for a POSIX shell: as it is when it holds nothing the shell reads, else in single quotes. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Where a sweep read its data: the catalog of its config, or a --data file or folder (and its format). */
export type SweepDataSource =
  { readonly catalog: string } | { readonly file: string; readonly format?: string };

/** The file beside sweep.json holding the sweep's whole configuration, as `--config` reads it. */
export const SWEEP_CONFIG_FILE = 'config.json';

/**
 * The `fxflow backtest` command that runs one trial of a sweep on its own, exactly: the sweep's
 * whole configuration (its `config.json`, written by the sweep: every flag the sweep was given,
 * --config's file and --spread included, is in it), its data when it was not the catalog, and
 * every param (the fixed ones too: a sweep may have fixed a param away from its default).
 */
export function trialCommand(o: {
  readonly dir: string;
  readonly strategyFile: string;
  readonly data?: SweepDataSource | undefined;
  readonly fixed: Readonly<Record<string, string | number | boolean>>;
  readonly params: Readonly<Record<string, string | number | boolean>>;
}): string {
  const words = ['fxflow', 'backtest', o.strategyFile, '--config', resolve(o.dir, SWEEP_CONFIG_FILE)];
  if (o.data && 'file' in o.data) {
    words.push('--data', o.data.file);
    if (o.data.format !== undefined) words.push('--format', o.data.format);
  }
  const all = { ...o.fixed, ...o.params };
  for (const k of Object.keys(all).sort()) words.push('--param', `${k}=${String(all[k])}`);
  return words.map(shellWord).join(' ');
}
