// Whether dist/ (the compiled build) was built from the sources as they are now. The build writes
// dist/build-stamp.json: every input's size, modification time and SHA-256. A check stats every
// input and hashes only those whose size or time differ from the stamp (a checkout or an editor
// that saves the same bytes), so the usual answer costs a directory walk and a stat per file.
// bin/fxflow.js asks before it runs the build; scripts/build.mjs asks before it builds.
// Plain JavaScript: it runs before any TypeScript can be loaded.
import { createRequire } from 'node:module';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const STAMP = 'build-stamp.json';

/** Whether a file under src/ is an input of the build (tests, their kits and fixtures are not). */
export function isBuildInput(rel) {
  return (
    !rel.endsWith('.test.ts') && !/(^|[./])testkit\.ts$/.test(rel) && !rel.split('/').includes('fixtures')
  );
}

/** The build's inputs, as paths relative to the package root: src/ (less tests) and the tsconfigs. */
export function buildInputs(root) {
  const out = ['tsconfig.json', 'tsconfig.build.json'];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split('\\').join('/');
      if (e.isDirectory()) {
        if (isBuildInput(`${rel}/`)) walk(abs);
      } else if (e.isFile() && isBuildInput(rel)) out.push(rel);
    }
  };
  walk(join(root, 'src'));
  return out.sort();
}

// node:crypto is loaded on the first hash: the usual check (every size and time as stamped) needs none.
const sha256 = (file) =>
  createRequire(import.meta.url)('node:crypto')
    .createHash('sha256')
    .update(readFileSync(file))
    .digest('hex');

/** What the stamp records of each input now. */
export function stampOf(root) {
  const files = {};
  for (const rel of buildInputs(root)) {
    const abs = join(root, rel);
    const s = statSync(abs);
    files[rel] = { size: s.size, mtimeMs: s.mtimeMs, sha256: sha256(abs) };
  }
  return { files };
}

/**
 * `{ current: true }` when dist/ holds a build of exactly the inputs as they are now; else
 * `{ current: false, reason }`, the reason naming the first difference (for the user).
 */
export function buildState(root) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, 'dist', STAMP), 'utf8'));
  } catch {
    return { current: false, reason: 'there is no build in dist/' };
  }
  const recorded = stamp?.files ?? {};
  const inputs = buildInputs(root);
  const seen = new Set(inputs);
  for (const rel of Object.keys(recorded))
    if (!seen.has(rel)) return { current: false, reason: `${rel} was removed since the build` };
  for (const rel of inputs) {
    const r = recorded[rel];
    if (r === undefined) return { current: false, reason: `${rel} is newer than the build` };
    const abs = join(root, rel);
    let s;
    try {
      s = statSync(abs);
    } catch {
      return { current: false, reason: `${rel} was removed since the build` };
    }
    if (s.size === r.size && s.mtimeMs === r.mtimeMs) continue;
    if (s.size !== r.size || sha256(abs) !== r.sha256)
      return { current: false, reason: `${rel} changed since the build` };
  }
  return { current: true };
}
