import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { inspect } from 'node:util';
import type { Environment } from './environments.ts';

/** A token problem: says where the token was looked for and how to fix it, never the token itself. */
export class AuthError extends Error {
  readonly code: 'AUTH' | 'AUTH_NO_TOKEN' | 'AUTH_TOKEN_FILE_MODE' | 'AUTH_OAUTH';
  constructor(code: AuthError['code'], message: string) {
    super(message);
    this.name = 'AuthError';
    this.code = code;
  }
}

const REDACTED = '[redacted]';

/**
 * A bearer token that does not print. `String(t)`, `JSON.stringify(t)`, template literals,
 * `console.log` and pino all show `[redacted]`; only `reveal()` gives the value, for the one place
 * that builds the `Authorization` header. Use it everywhere a token is held.
 */
export class SecretToken {
  readonly #value: string;
  constructor(value: string) {
    if (!/^\S+$/.test(value))
      throw new AuthError(
        'AUTH',
        'the access token is empty or contains spaces: check where it came from (FXFLOW_TOKEN, the config, or the token file)',
      );
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return REDACTED;
  }
  toJSON(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return REDACTED;
  }
}

/** Where a resolved token came from (for messages: the source, never the value). */
export type TokenSource = 'FXFLOW_TOKEN' | 'OANDA_TOKEN' | 'config' | 'file';

/**
 * The default token file of an environment: `~/.fxflow/token-<env>` (mode 0600), one per
 * environment, so a sandbox login never overwrites the token practice or live read. Without an
 * environment: `~/.fxflow/token`, the file of versions before per-environment files (practice and
 * live still read it when their own file is missing; the sandbox never does).
 */
export function defaultTokenFile(home = homedir(), environment?: string): string {
  return join(home, '.fxflow', environment === undefined ? 'token' : `token-${environment}`);
}

/**
 * Reads a token file. Refuses a file that group or others can read or write (mode must be 0600 or
 * stricter), with the `chmod 600 <file>` that fixes it. On Windows, where modes mean nothing, the
 * check is skipped.
 */
export function readTokenFile(file: string): SecretToken {
  const path = resolve(file);
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new AuthError(
      'AUTH_NO_TOKEN',
      `token file ${path} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`}: run \`fxflow auth login\`, or put your personal access token there (one line, mode 0600), or set FXFLOW_TOKEN`,
    );
  }
  if (!st.isFile()) throw new AuthError('AUTH', `token file ${path} is not a regular file`);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    throw new AuthError(
      'AUTH_TOKEN_FILE_MODE',
      `token file ${path} is readable by other users (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); a token file must be private: run \`chmod 600 ${path}\``,
    );
  }
  const text = readFileSync(path, 'utf8').trim();
  if (text.length === 0)
    throw new AuthError(
      'AUTH_NO_TOKEN',
      `token file ${path} is empty: run \`fxflow auth login\` or write your personal access token into it`,
    );
  if (/\s/.test(text))
    throw new AuthError(
      'AUTH',
      `token file ${path} must hold one token on one line (found spaces or several lines)`,
    );
  return new SecretToken(text);
}

/**
 * Writes a token file with mode 0600 (created private, then renamed into place, so the token is
 * never readable by others even for an instant). Creates the folder with mode 0700 if missing.
 */
export function writeTokenFile(file: string, token: SecretToken): string {
  const path = resolve(file);
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${token.reveal()}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return path;
}

export interface TokenRequest {
  /** The environment: its `token` and `tokenFile` fields are the config sources. */
  readonly environment?: Environment;
  /** A token file given explicitly (e.g. `--token-file`); overrides the environment's and the default. */
  readonly tokenFile?: string;
  /** The process environment (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Home folder for the default `~/.fxflow/token`. */
  readonly home?: string;
}

/**
 * Finds the personal access token, in this order:
 * 1. the environment variable `FXFLOW_TOKEN`, then `OANDA_TOKEN`;
 * 2. the config (`token` of the environment in `config/environments.json`);
 * 3. a token file: the one given, else the environment's `tokenFile`, else `~/.fxflow/token-<env>`
 *    (practice and live fall back to the older shared `~/.fxflow/token`); it must be mode 0600.
 * Use it once at start-up; pass `token.reveal()` only to the HTTP client.
 */
export function resolveToken(r: TokenRequest = {}): {
  token: SecretToken;
  source: TokenSource;
  file?: string;
} {
  const env = r.env ?? process.env;
  for (const name of ['FXFLOW_TOKEN', 'OANDA_TOKEN'] as const) {
    const v = env[name];
    if (v !== undefined && v.trim() !== '') {
      if (/\s/.test(v.trim())) throw new AuthError('AUTH', `${name} must hold one token without spaces`);
      return { token: new SecretToken(v.trim()), source: name };
    }
  }
  if (r.environment?.token !== undefined)
    return { token: new SecretToken(r.environment.token), source: 'config' };
  let file = r.tokenFile ?? r.environment?.tokenFile;
  if (file === undefined) {
    const name = r.environment?.name;
    file = defaultTokenFile(r.home, name);
    // The shared file of earlier versions, for practice and live only: a sandbox never reads another environment's token.
    if (name !== 'sandbox' && !existsSync(file) && existsSync(defaultTokenFile(r.home)))
      file = defaultTokenFile(r.home);
  }
  const expanded = file.startsWith('~/') ? join(r.home ?? homedir(), file.slice(2)) : file;
  return { token: readTokenFile(expanded), source: 'file', file: resolve(expanded) };
}
