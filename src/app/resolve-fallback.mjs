// A module resolution hook (node:module register) for strategy modules that live outside this
// repository: a bare specifier that does not resolve from the strategy's own folder (no
// node_modules beside it holds it) is resolved again from fxflow's package. So `import { defineStrategy }
// from 'fxflow'` works from any folder (a package can import itself by name through its `exports`),
// and so do the packages fxflow installs (technicalindicators, luxon...). What the strategy's own
// folder provides wins: the fallback is only tried when the first resolution failed.
// Plain JavaScript: it runs on Node's hooks thread, before any TypeScript loader.

// When fxflow runs from its TypeScript sources (`sourceCondition`), every resolution also carries
// the condition `fxflow-source`, under which fxflow's `exports` name src/ instead of dist/, so a
// strategy's `import 'fxflow'` reaches the sources the run uses, never a stale build. Only fxflow's
// package.json uses that condition; a package that names a missing file under it is resolved again
// without it.

/** @type {string | undefined} */
let fallbackParent;
let sourceCondition = false;

export function initialize(data) {
  fallbackParent = data?.parentURL;
  sourceCondition = data?.sourceCondition === true;
}

function withSource(context) {
  return sourceCondition && !context.conditions.includes('fxflow-source')
    ? { ...context, conditions: [...context.conditions, 'fxflow-source'] }
    : undefined;
}

const isBare = (s) =>
  !s.startsWith('.') &&
  !s.startsWith('/') &&
  !s.startsWith('file:') &&
  !s.startsWith('node:') &&
  !s.startsWith('data:') &&
  !/^[a-zA-Z][a-zA-Z+.-]*:/.test(s);

const NOT_FOUND = new Set(['ERR_MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);

export async function resolve(specifier, context, nextResolve) {
  if (!isBare(specifier)) return nextResolve(specifier, context);
  const fallback =
    fallbackParent !== undefined && context.parentURL !== fallbackParent
      ? { ...context, parentURL: fallbackParent }
      : undefined;
  // In order: from the importer's folder, then from fxflow's package; each with fxflow-source first
  // when fxflow runs from its sources. The error reported is the importer's own.
  const attempts = [];
  for (const c of fallback === undefined ? [context] : [context, fallback]) {
    const source = withSource(c);
    if (source !== undefined) attempts.push({ c: source, quiet: true });
    attempts.push({ c, quiet: false });
  }
  let error;
  for (const { c, quiet } of attempts) {
    try {
      return await nextResolve(specifier, c);
    } catch (e) {
      if (quiet) continue;
      error ??= e;
      if (!NOT_FOUND.has(e?.code)) throw error;
    }
  }
  throw error;
}
