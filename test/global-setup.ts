import { resolve } from 'node:path';
import { ensureSample } from '../src/adapters/catalog/sample.ts';

/** Generates the bundled synthetic sample once, before any test worker starts. */
export default async function setup(): Promise<void> {
  await ensureSample(resolve(import.meta.dirname, '../data/catalog'));
}
