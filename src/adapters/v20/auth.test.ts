import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACT_PATHS } from '../../cli/logger.ts';
import { AuthError, SecretToken, readTokenFile, resolveToken, writeTokenFile } from './auth.ts';
import { EnvironmentError, environment, loadEnvironments, parseEnvironments } from './environments.ts';
import { V20Http } from './http.ts';
import { V20Rest } from './rest.ts';

const TOKEN = 'a1b2c3d4e5f60718293a4b5c6d7e8f90-0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const tmp = (): string => mkdtempSync(join(tmpdir(), 'fxflow-auth-'));

function catchError(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

const valid = {
  practice: { rest: 'https://api-fxpractice.oanda.com', stream: 'https://stream-fxpractice.oanda.com' },
  live: { rest: 'https://api-fxtrade.oanda.com', stream: 'https://stream-fxtrade.oanda.com' },
  sandbox: { rest: 'http://127.0.0.1:8080', stream: 'http://127.0.0.1:8080' },
};

describe('environments', () => {
  it('config/environments.json holds practice, live and sandbox with their hosts and OAuth endpoints', () => {
    const envs = loadEnvironments();
    expect(envs.practice.rest).toBe('https://api-fxpractice.oanda.com');
    expect(envs.practice.stream).toBe('https://stream-fxpractice.oanda.com');
    expect(envs.live.rest).toBe('https://api-fxtrade.oanda.com');
    expect(envs.live.stream).toBe('https://stream-fxtrade.oanda.com');
    expect(envs.sandbox.rest).toBe('http://127.0.0.1:8080');
    expect(envs.live.oauth?.authorize).toBe('https://api-fxtrade.oanda.com/v1/oauth2/authorize');
    expect(envs.practice.oauth?.token).toBe('https://api-fxpractice.oanda.com/v1/oauth2/access_token');
  });

  it('refuses http:// to a host that is not loopback, naming the field', () => {
    const e = catchError(() =>
      parseEnvironments(
        { ...valid, live: { rest: 'http://api-fxtrade.oanda.com', stream: valid.live.stream } },
        'envs.json',
      ),
    );
    expect(e).toBeInstanceOf(EnvironmentError);
    expect(e.message).toMatch(/^envs\.json: live\.rest .*not loopback.*https:\/\//);
    const o = catchError(() =>
      parseEnvironments(
        {
          ...valid,
          practice: {
            ...valid.practice,
            oauth: { authorize: 'https://x.example', token: 'http://10.0.0.1/t' },
          },
        },
        'envs.json',
      ),
    );
    expect(o.message).toMatch(/practice\.oauth\.token/);
    // Loopback over http is fine in every spelling.
    for (const host of ['127.0.0.1:9', 'localhost:9', '[::1]:9']) {
      expect(
        parseEnvironments({ ...valid, sandbox: { rest: `http://${host}`, stream: `http://${host}` } }).sandbox
          .rest,
      ).toBe(`http://${host}`);
    }
  });

  it('names missing, unknown and malformed fields', () => {
    expect(
      catchError(() => parseEnvironments({ practice: valid.practice, live: valid.live })).message,
    ).toMatch(/sandbox is missing/);
    expect(catchError(() => parseEnvironments({ ...valid, demo: valid.live })).message).toMatch(
      /demo is not a known environment/,
    );
    expect(
      catchError(() => parseEnvironments({ ...valid, live: { ...valid.live, restUrl: 'x' } })).message,
    ).toMatch(/live\.restUrl is not a known field/);
    expect(
      catchError(() => parseEnvironments({ ...valid, live: { stream: valid.live.stream } })).message,
    ).toMatch(/live\.rest must be a URL/);
    expect(
      catchError(() => parseEnvironments({ ...valid, live: { ...valid.live, rest: 'not a url' } })).message,
    ).toMatch(/live\.rest .*not a URL/);
    expect(catchError(() => environment('paper')).message).toMatch(/--env "paper" is not an environment/);
    expect(catchError(() => environment('sandbox', { url: 'http://192.168.1.5:8080' })).message).toMatch(
      /--url .*not loopback/,
    );
    expect(environment('sandbox', { url: 'http://127.0.0.1:9123/' }).oauth?.token).toBe(
      'http://127.0.0.1:9123/v1/oauth2/access_token',
    );
  });
});

describe('tokens', () => {
  it('resolves FXFLOW_TOKEN, then OANDA_TOKEN, then the config, then the token file', () => {
    const home = tmp();
    const file = join(home, '.fxflow', 'token');
    writeTokenFile(file, new SecretToken('from-file'));
    const env = { ...parseEnvironments(valid).practice, token: 'from-config' };
    expect(
      resolveToken({ env: { FXFLOW_TOKEN: 'from-fx', OANDA_TOKEN: 'from-oanda' }, environment: env, home }),
    ).toMatchObject({ source: 'FXFLOW_TOKEN' });
    expect(resolveToken({ env: { FXFLOW_TOKEN: 'from-fx' }, home }).token.reveal()).toBe('from-fx');
    expect(resolveToken({ env: { OANDA_TOKEN: 'from-oanda' }, environment: env, home }).token.reveal()).toBe(
      'from-oanda',
    );
    expect(resolveToken({ env: {}, environment: env, home }).token.reveal()).toBe('from-config');
    const f = resolveToken({ env: {}, environment: parseEnvironments(valid).practice, home });
    expect(f).toMatchObject({ source: 'file', file });
    expect(f.token.reveal()).toBe('from-file');
    // An explicit path wins over the default.
    const other = join(home, 'other-token');
    writeTokenFile(other, new SecretToken('other'));
    expect(resolveToken({ env: {}, tokenFile: other, home }).token.reveal()).toBe('other');
  });

  it('writes the token file with mode 0600 and refuses one that others can read, saying chmod 600', () => {
    const dir = tmp();
    const file = join(dir, 'token');
    writeTokenFile(file, new SecretToken(TOKEN));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${TOKEN}\n`);
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      chmodSync(file, mode);
      const e = catchError(() => readTokenFile(file));
      expect(e).toBeInstanceOf(AuthError);
      expect((e as AuthError).code).toBe('AUTH_TOKEN_FILE_MODE');
      expect(e.message).toContain(`chmod 600 ${file}`);
      expect(e.message).not.toContain(TOKEN);
    }
    chmodSync(file, 0o400);
    expect(readTokenFile(file).reveal()).toBe(TOKEN);
  });

  it('says how to get a token when there is none, and rejects an empty or multi-line file', () => {
    const home = tmp();
    const e = catchError(() => resolveToken({ env: {}, home }));
    expect((e as AuthError).code).toBe('AUTH_NO_TOKEN');
    expect(e.message).toMatch(/fxflow auth login.*FXFLOW_TOKEN/);
    const empty = join(home, 'empty');
    writeFileSync(empty, '\n', { mode: 0o600 });
    expect(catchError(() => readTokenFile(empty)).message).toMatch(/is empty/);
    const two = join(home, 'two');
    writeFileSync(two, `${TOKEN}\nsecond-secret\n`, { mode: 0o600 });
    const m = catchError(() => readTokenFile(two));
    expect(m.message).toMatch(/one token on one line/);
    expect(m.message).not.toContain(TOKEN);
    expect(m.message).not.toContain('second-secret');
  });

  it('never shows the token: String, JSON, inspect, template literals, errors and pino output', async () => {
    const t = new SecretToken(TOKEN);
    expect(String(t)).toBe('[redacted]');
    expect(`${t}`).toBe('[redacted]');
    expect(JSON.stringify({ t, nested: { t } })).not.toContain(TOKEN);
    expect(inspect({ t })).not.toContain(TOKEN);
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    log.info({ token: t }, 'object holding the secret');
    log.info({ req: { headers: { authorization: `Bearer ${TOKEN}` } } }, 'headers');
    log.info({ token: TOKEN, env: { token: TOKEN } }, 'plain string under a redacted key');
    log.info({ credentials: t }, 'secret under another key');
    await new Promise((r) => setImmediate(r));
    expect(out.split('\n').filter(Boolean)).toHaveLength(4);
    expect(out).not.toContain(TOKEN);
    expect(out).toContain('[redacted]');
    // An error raised while resolving a bad token source never quotes it.
    const e = catchError(() => resolveToken({ env: { FXFLOW_TOKEN: `${TOKEN} extra` } }));
    expect(e.message).not.toContain(TOKEN);
    expect(e.message).toMatch(/FXFLOW_TOKEN must hold one token/);
    const c = catchError(() => parseEnvironments({ ...valid, live: { ...valid.live, token: `${TOKEN} x` } }));
    expect(c.message).toMatch(/live\.token/);
    expect(c.message).not.toContain(TOKEN);
  });
});

describe('a token in use never leaks', () => {
  it('a rejected token (401 from a sandbox that requires another) is in no log line and no error', async () => {
    const { startSandbox } = await import('../../sandbox/server.ts');
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out += chunk.toString();
        cb();
      },
    });
    const log = pino({ level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    const sb = await startSandbox({ requireToken: 'the-right-one', log });
    const token = resolveToken({ env: { FXFLOW_TOKEN: TOKEN } }).token;
    const http = new V20Http({ baseUrl: sb.url, token: token.reveal(), log, retries: 0 });
    let err: Error | undefined;
    try {
      await new V20Rest(http).accounts();
    } catch (e) {
      err = e as Error;
    } finally {
      await http.close();
      await sb.close();
    }
    expect(err).toBeDefined();
    expect(err!.message).toMatch(/401/);
    expect(
      `${err!.message} ${String(err!.stack)} ${JSON.stringify(err)} ${inspect(err, { depth: 5 })}`,
    ).not.toContain(TOKEN);
    await new Promise((r) => setImmediate(r));
    expect(out.length).toBeGreaterThan(0);
    expect(out).not.toContain(TOKEN);
  });
});
