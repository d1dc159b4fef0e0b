import { existsSync, lstatSync, mkdirSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureSample } from '../src/adapters/catalog/sample.ts';

/**
 * Generates the bundled synthetic sample once, before any test worker starts, into the
 * repository's data/catalog (the tests' catalog, run from the repository). The tests' user cache
 * (XDG_CACHE_HOME, inherited by every worker and every fxflow they start) is a git-ignored folder
 * of the repository whose sample is that same catalog: a command run from another folder with no
 * catalog of its own reads it there, as a user's first run reads the sample in ~/.cache/fxflow,
 * without generating 96 MB into the home folder.
 */
export default async function setup(): Promise<void> {
  const catalog = resolve(import.meta.dirname, '../data/catalog');
  await ensureSample(catalog);
  const xdg = resolve(import.meta.dirname, '../.cache/test-xdg');
  const sample = join(xdg, 'fxflow', 'sample');
  mkdirSync(join(xdg, 'fxflow'), { recursive: true });
  if (!existsSync(sample) && !isLink(sample)) symlinkSync(catalog, sample, 'junction');
  process.env.XDG_CACHE_HOME = xdg;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
