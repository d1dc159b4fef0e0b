import { describe, expect, it } from 'vitest';
import { flagsToApply, V8_FLAGS } from './v8-tuning.ts';

describe('V8 settings applied at start', () => {
  it('turns allocation-site pretenuring off unless the user set it', () => {
    expect(V8_FLAGS).toContain('--no-allocation-site-pretenuring');
    expect(flagsToApply([], undefined)).toEqual(['--no-allocation-site-pretenuring']);
    expect(flagsToApply(['--max-old-space-size=4096'], '--enable-source-maps')).toEqual([
      '--no-allocation-site-pretenuring',
    ]);
  });

  it("leaves the setting to the user who names it, either way, on Node's command line or in NODE_OPTIONS", () => {
    expect(flagsToApply(['--allocation-site-pretenuring'], undefined)).toEqual([]);
    expect(flagsToApply([], '--no-allocation-site-pretenuring')).toEqual([]);
    expect(flagsToApply([], '--max-semi-space-size=32 --allocation_site_pretenuring')).toEqual([]);
  });
});
