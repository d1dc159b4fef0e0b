// A strategy whose name would put its client IDs in the runner's reserved namespace (`fxflow-`: the
// kill switch's and flatten's own closes) is refused by `fxflow run` before anything is written:
// a real process against the sandbox, a real strategy file.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rig, spawnFxflowRun, watch, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('fxflow run: a strategy name in the reserved client-ID namespace', () => {
  it('is refused with a message naming the file, the name and the fix; no journal, no run folder', async () => {
    r = await rig();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-reserved-'));
    const file = join(dir, 'forger.mjs');
    writeFileSync(
      file,
      "export default { name: 'fxflow-kill', params: {}, subscribe: { ticks: ['EUR_USD'] } };\n",
    );
    const journal = join(dir, 'journal');
    const out = join(dir, 'live');
    const run = watch(
      spawnFxflowRun(r.sandbox.url, file, ['--broker', 'sim', '--journal', journal, '--out', out]),
    );
    const code = await run.exited;
    console.log(`[reserved name] exit ${code}: ${run.err().trim()}`);
    expect(code).not.toBe(0);
    expect(run.err()).toContain(file);
    expect(run.err()).toMatch(
      /the strategy's name 'fxflow-kill' would make client IDs starting 'fxflow-', which are reserved for the runner's own closes and cancels \(kill switch, flatten\): give the strategy another `name`/,
    );
    expect(run.err()).not.toMatch(/\n\s+at /);
    expect(existsSync(journal)).toBe(false);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir)).toEqual(['forger.mjs']);
  }, 60_000);
});
