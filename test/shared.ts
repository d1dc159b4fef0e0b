import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** `../shared` beside the repository: OANDA reference responses and real FX data. */
export const SHARED = resolve(import.meta.dirname, '../../shared');
export const HAS_SHARED = existsSync(SHARED);
export const FX = resolve(SHARED, 'data/fx');
export const OANDA = resolve(SHARED, 'reference/oanda');

/** Says out loud that a suite is skipped because ../shared is missing (CI always has it). */
export function warnIfNoShared(suite: string): void {
  if (!HAS_SHARED)
    console.warn(`[skip] ${suite}: ${SHARED} not found; these tests need ../shared beside the repository`);
}
