import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests run fxflow's TypeScript sources: `import 'fxflow'` (the strategies do) resolves to src/
  // through the package's `fxflow-source` export condition, never to a build in dist/.
  ssr: { resolve: { conditions: ['fxflow-source', ...defaultServerConditions] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
