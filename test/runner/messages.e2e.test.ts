// Issue 24, item 7 (Why 8): the messages of `fxflow run` say what actually works. Real processes
// against the sandbox: --require-token without a sandbox token, a 401 without --require-token, and a
// kill file left in place.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FxflowRun, rig, type Rig, spawnFxflowRun, watch } from './harness.ts';

let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await r?.close();
  r = undefined;
});

/** A process environment with an empty home of its own and FXFLOW_TOKEN set (which must never reach a sandbox). */
function envWithout(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: mkdtempSync(join(tmpdir(), 'fxflow-home-')),
    FXFLOW_TOKEN: 'a-live-token-0123456789',
  };
  delete e.OANDA_TOKEN;
  return e;
}

async function fxflowRun(
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number | null; err: string }> {
  run = watch(
    spawnFxflowRun(
      r!.sandbox.url,
      'test/runner/ping-pong-strategy.ts',
      ['--journal', r!.journalDir, ...args],
      env,
    ),
  );
  const code = await run.exited;
  return { code, err: run.err() };
}

const STACK = /\n\s+at .+:\d+:\d+/;

describe('messages that say what works', () => {
  it("--require-token without a sandbox token: names the sandbox's own sources, never suggests FXFLOW_TOKEN (never sent to a sandbox)", async () => {
    r = await rig({ requireToken: 'the-sandbox-token' });
    const { code, err } = await fxflowRun(['--require-token'], envWithout());
    console.log(`[messages] --require-token, no sandbox token: exit ${code}; ${err.trim()}`);
    expect(code).toBe(1);
    expect(err).toMatch(/~\/\.fxflow\/token-sandbox/);
    expect(err).toMatch(/--token-file/);
    expect(err).not.toMatch(/set FXFLOW_TOKEN|fxflow auth login/);
    expect(err).not.toMatch(STACK);
  }, 60_000);

  it('a 401 without --require-token: says the sandbox asks for a token and to add --require-token, not `fxflow auth`', async () => {
    r = await rig({ requireToken: 'the-sandbox-token' });
    const { code, err } = await fxflowRun([], envWithout());
    console.log(`[messages] 401 without --require-token: exit ${code}; ${err.trim()}`);
    expect(code).toBe(1);
    expect(err).toMatch(/asks for a token.*--require-token/);
    expect(err).not.toMatch(/fxflow auth/);
    expect(err).not.toMatch(STACK);
  }, 60_000);

  it('a kill file left in place: the next start refuses, saying why and how to go on; nothing is sent or written', async () => {
    r = await rig();
    const kill = join(r.journalDir, 'KILL');
    writeFileSync(kill, '');
    const before = (await r.rest.summary(r.accountID)).lastTransactionID;
    const { code, err } = await fxflowRun(['--kill-file', kill]);
    const after = (await r.rest.summary(r.accountID)).lastTransactionID;
    console.log(
      `[messages] kill file in place: exit ${code}; ${err.trim()}; account transactions ${before} -> ${after}`,
    );
    expect(code).toBe(1);
    expect(err).toContain(`the kill file ${kill} exists`);
    expect(err).toContain(`rm ${kill}`);
    expect(after).toBe(before);
    expect(existsSync(join(r.journalDir, 'journal.log'))).toBe(false);
  }, 60_000);
});
