// A module resolution hook (node:module register) for strategy modules that live outside this
// repository. `fxflow` and its subpaths ('fxflow/backtest') are the running fxflow itself, the files
// src/domain/package-root.ts `ownEntry` names (`own`, given by the loader): a strategy shares its
// modules, one copy of each class, wherever the strategy lives and whatever its own folder holds.
// Any other bare specifier that does not resolve from the strategy's own folder (no node_modules
// beside it holds it) is resolved again from fxflow's package, so the packages fxflow installs
// (technicalindicators, luxon...) work from any folder. What the strategy's own folder provides
// wins: the fallback is only tried when the first resolution failed.
// Plain JavaScript: it runs on Node's hooks thread, before any TypeScript loader.

/** @type {string | undefined} */
let fallbackParent;
/** @type {Record<string, string>} */
let own = {};

export function initialize(data) {
  fallbackParent = data?.parentURL;
  own = data?.own ?? {};
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
  if (Object.hasOwn(own, specifier)) return { url: own[specifier], shortCircuit: true };
  if (!isBare(specifier)) return nextResolve(specifier, context);
  // From the importer's folder, then from fxflow's package. The error reported is the importer's own.
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    if (fallbackParent === undefined || context.parentURL === fallbackParent || !NOT_FOUND.has(e?.code))
      throw e;
    try {
      return await nextResolve(specifier, { ...context, parentURL: fallbackParent });
    } catch {
      throw e;
    }
  }
}
