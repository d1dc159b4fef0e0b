import type { Options } from 'yargs';

/**
 * `--catalog`, the same on every command that reads or writes the catalog (the rule:
 * src/adapters/catalog/location.ts).
 */
export const CATALOG_FLAG = {
  catalog: {
    type: 'string',
    describe:
      "Catalog folder (default: $FXFLOW_CATALOG, else a --config file's data.catalog, else ./data/catalog; the bundled sample when that holds nothing)",
  },
} as const satisfies Record<string, Options>;
