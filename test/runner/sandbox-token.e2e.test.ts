// Issue 15, item 8 (and issue 13's token file per environment): a token reaches a sandbox only when
// the sandbox asks for one (--require-token) and only from the sandbox's own entry. A real
// `fxflow run` process against the sandbox, through a TCP tap that records every request byte.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultTokenFile, resolveToken, SecretToken, writeTokenFile } from '../../src/adapters/v20/auth.ts';
import { environment } from '../../src/adapters/v20/environments.ts';
import { startTcpTap, type TcpTap } from '../tcp-tap.ts';
import { type FxflowRun, rig, type Rig, startFxflowRun } from './harness.ts';

let r: Rig | undefined;
let tap: TcpTap | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await tap?.close();
  tap = undefined;
  await r?.close();
  r = undefined;
});

const LIVE = 'live-token-that-must-never-travel-in-clear-0123456789';

/** A process environment with a home of its own and FXFLOW_TOKEN set (possibly a live token). */
function envWith(home: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, HOME: home, FXFLOW_TOKEN: LIVE };
  delete e.OANDA_TOKEN;
  return e;
}

async function runThroughTap(args: string[], home: string): Promise<{ sent: string; code: number | null }> {
  run = await startFxflowRun(
    r!.sandbox,
    'test/runner/ping-pong-strategy.ts',
    ['--journal', r!.journalDir, ...args],
    2,
    { url: tap!.url, env: envWith(home) },
  );
  run.proc.kill('SIGTERM');
  const code = await run.exited;
  return { sent: tap!.connections.map((c) => c.sent).join('\n'), code };
}

describe('tokens and the sandbox', () => {
  it('FXFLOW_TOKEN is never sent to a sandbox; without --require-token no Authorization header at all', async () => {
    r = await rig();
    tap = await startTcpTap(r.sandbox.url);
    const { sent, code } = await runThroughTap([], mkdtempSync(join(tmpdir(), 'fxflow-home-')));
    const requests = sent.split('\r\n').filter((l) => /^(GET|POST|PUT|PATCH) /.test(l)).length;
    console.log(
      `[sandbox token] no --require-token: ${requests} requests, ${(sent.match(/authorization:/gi) ?? []).length} Authorization headers, FXFLOW_TOKEN in ${sent.split(LIVE).length - 1}`,
    );
    expect(code).toBe(0);
    expect(requests).toBeGreaterThan(2);
    expect(sent).not.toContain(LIVE);
    expect(sent).not.toMatch(/authorization:/i);
  }, 60_000);

  it("--require-token sends the sandbox's own token (its token file, ~/.fxflow/token-sandbox), never FXFLOW_TOKEN", async () => {
    const own = 'sandbox-own-token-42';
    r = await rig({ requireToken: own });
    tap = await startTcpTap(r.sandbox.url);
    const home = mkdtempSync(join(tmpdir(), 'fxflow-home-'));
    mkdirSync(join(home, '.fxflow'), { mode: 0o700 });
    writeFileSync(join(home, '.fxflow', 'token-sandbox'), `${own}\n`, { mode: 0o600 });
    const { sent, code } = await runThroughTap(['--require-token'], home);
    console.log(
      `[sandbox token] --require-token: the sandbox's own token in ${sent.split(`Bearer ${own}`).length - 1} requests, FXFLOW_TOKEN in ${sent.split(LIVE).length - 1}`,
    );
    expect(code).toBe(0);
    expect(sent).toContain(`Bearer ${own}`);
    expect(sent).not.toContain(LIVE);
  }, 60_000);

  it('one token file per environment: a sandbox login never overwrites what practice and live read; the sandbox never reads the shared file', () => {
    const home = mkdtempSync(join(tmpdir(), 'fxflow-home-'));
    const practice = environment('practice');
    const sandbox = environment('sandbox');
    writeTokenFile(defaultTokenFile(home, 'practice'), new SecretToken('practice-token'));
    writeTokenFile(defaultTokenFile(home), new SecretToken('shared-token-of-older-versions'));
    // What `fxflow auth login --env sandbox` writes by default.
    const written = writeTokenFile(defaultTokenFile(home, sandbox.name), new SecretToken('sandbox-token'));
    expect(written).toBe(join(home, '.fxflow', 'token-sandbox'));
    expect(resolveToken({ environment: practice, env: {}, home }).token.reveal()).toBe('practice-token');
    expect(resolveToken({ environment: environment('live'), env: {}, home }).token.reveal()).toBe(
      'shared-token-of-older-versions',
    );
    expect(resolveToken({ environment: sandbox, env: {}, home }).token.reveal()).toBe('sandbox-token');
  });
});
