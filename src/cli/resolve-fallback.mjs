// A module resolution hook (node:module register) for strategy modules that live outside this
// repository: a bare specifier that does not resolve from the strategy's own folder (no
// node_modules beside it holds it) is resolved again from fxflow's package. So `import { defineStrategy }
// from 'fxflow'` works from any folder (a package can import itself by name through its `exports`),
// and so do the packages fxflow installs (technicalindicators, luxon...). What the strategy's own
// folder provides wins: the fallback is only tried when the first resolution failed.
// Plain JavaScript: it runs on Node's hooks thread, before any TypeScript loader.

/** @type {string | undefined} */
let fallbackParent;

export function initialize(data) {
  fallbackParent = data?.parentURL;
}

const isBare = (s) => !s.startsWith('.') && !s.startsWith('/') && !s.startsWith('file:') && !s.startsWith('node:') && !s.startsWith('data:') && !/^[a-zA-Z][a-zA-Z+.-]*:/.test(s);

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    if (fallbackParent === undefined || !isBare(specifier) || context.parentURL === fallbackParent) throw e;
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw e;
    try {
      return await nextResolve(specifier, { ...context, parentURL: fallbackParent });
    } catch {
      throw e;
    }
  }
}
