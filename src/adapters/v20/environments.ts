import { readFileSync } from 'node:fs';
import { packageFile } from '../../domain/package-root.ts';
import { V20Error } from './errors.ts';
import { checkBaseUrl } from './http.ts';

/** The environments fxflow knows by name. */
export const ENVIRONMENT_NAMES = ['practice', 'live', 'sandbox'] as const;
export type EnvironmentName = (typeof ENVIRONMENT_NAMES)[number];

/**
 * One v20 environment: where REST and streams live, and its OAuth endpoints when it has them.
 * `token` / `tokenFile` are optional per-environment token sources (see `resolveToken`).
 */
export interface Environment {
  readonly name: EnvironmentName;
  readonly rest: string;
  readonly stream: string;
  readonly oauth?: { readonly authorize: string; readonly token: string };
  readonly token?: string;
  readonly tokenFile?: string;
}

/** A problem in the environments file: names the file and the field, and says how to fix it. */
export class EnvironmentError extends Error {
  readonly code = 'ENVIRONMENT' as const;
  constructor(
    readonly file: string,
    readonly field: string,
    problem: string,
  ) {
    super(`${file}: ${field} ${problem}`);
    this.name = 'EnvironmentError';
  }
}

/** `config/environments.json` of the repository. */
export const DEFAULT_ENVIRONMENTS_FILE = packageFile('config/environments.json');

const FIELDS = ['rest', 'stream', 'oauth', 'token', 'tokenFile'] as const;

export function isEnvironmentName(x: string): x is EnvironmentName {
  return (ENVIRONMENT_NAMES as readonly string[]).includes(x);
}

/**
 * Validates a parsed environments document (`{ practice: {...}, live: {...}, sandbox: {...} }`).
 * Every URL must be https, or http to a loopback host (127.0.0.1, ::1, localhost); anything else
 * would carry a token in clear text and is refused with the field named.
 * Use it for documents from anywhere; `loadEnvironments` reads the file and calls it.
 */
export function parseEnvironments(doc: unknown, file = 'environments'): Record<EnvironmentName, Environment> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new EnvironmentError(
      file,
      '(file)',
      'must be a JSON object keyed by environment name (practice, live, sandbox)',
    );
  }
  const out: Partial<Record<EnvironmentName, Environment>> = {};
  for (const [name, raw] of Object.entries(doc as Record<string, unknown>)) {
    if (!isEnvironmentName(name))
      throw new EnvironmentError(
        file,
        name,
        `is not a known environment: use one of ${ENVIRONMENT_NAMES.join(', ')}`,
      );
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new EnvironmentError(file, name, 'must be an object with rest and stream URLs');
    const o = raw as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (!(FIELDS as readonly string[]).includes(k))
        throw new EnvironmentError(
          file,
          `${name}.${k}`,
          `is not a known field (known: ${FIELDS.join(', ')})`,
        );
    }
    const url = (field: string, v: unknown): string => {
      if (typeof v !== 'string' || v.length === 0)
        throw new EnvironmentError(
          file,
          field,
          'must be a URL string, e.g. "https://api-fxpractice.oanda.com"',
        );
      try {
        checkBaseUrl(v, field);
      } catch (e) {
        if (e instanceof V20Error)
          throw new EnvironmentError(
            file,
            field,
            e.message.startsWith(field) ? e.message.slice(field.length + 1) : e.message,
          );
        throw e;
      }
      return v.replace(/\/+$/, '');
    };
    const env: { -readonly [K in keyof Environment]: Environment[K] } = {
      name,
      rest: url(`${name}.rest`, o.rest),
      stream: url(`${name}.stream`, o.stream),
    };
    if (o.oauth !== undefined) {
      const a = o.oauth as Record<string, unknown>;
      if (typeof a !== 'object' || a === null || Array.isArray(a))
        throw new EnvironmentError(file, `${name}.oauth`, 'must be an object { authorize, token }');
      env.oauth = {
        authorize: url(`${name}.oauth.authorize`, a.authorize),
        token: url(`${name}.oauth.token`, a.token),
      };
    }
    if (o.token !== undefined) {
      // Never echo the value: only say what is wrong with it.
      if (typeof o.token !== 'string' || !/^\S+$/.test(o.token))
        throw new EnvironmentError(
          file,
          `${name}.token`,
          'must be a non-empty string without spaces (the personal access token)',
        );
      env.token = o.token;
    }
    if (o.tokenFile !== undefined) {
      if (typeof o.tokenFile !== 'string' || o.tokenFile.length === 0)
        throw new EnvironmentError(file, `${name}.tokenFile`, 'must be a path string');
      env.tokenFile = o.tokenFile;
    }
    out[name] = env;
  }
  for (const n of ENVIRONMENT_NAMES)
    if (!out[n])
      throw new EnvironmentError(
        file,
        n,
        'is missing: every environment (practice, live, sandbox) needs rest and stream URLs',
      );
  return out as Record<EnvironmentName, Environment>;
}

/** Reads and validates the environments file (default `config/environments.json`). */
export function loadEnvironments(file = DEFAULT_ENVIRONMENTS_FILE): Record<EnvironmentName, Environment> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new EnvironmentError(
      file,
      '(file)',
      `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)}): check the path`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new EnvironmentError(file, '(file)', `is not valid JSON: ${(e as Error).message}`);
  }
  return parseEnvironments(doc, file);
}

/**
 * One environment by name, with an optional REST/stream override (e.g. a sandbox on another
 * port: `--url http://127.0.0.1:9000`). The override is checked like the file's URLs.
 */
export function environment(name: string, o: { file?: string; url?: string } = {}): Environment {
  if (!isEnvironmentName(name))
    throw new EnvironmentError(
      o.file ?? DEFAULT_ENVIRONMENTS_FILE,
      '--env',
      `"${name}" is not an environment: use one of ${ENVIRONMENT_NAMES.join(', ')}`,
    );
  const env = loadEnvironments(o.file)[name];
  if (o.url === undefined) return env;
  const base = o.url.replace(/\/+$/, '');
  try {
    checkBaseUrl(base, '--url');
  } catch (e) {
    if (e instanceof V20Error)
      throw new EnvironmentError('command line', '--url', e.message.replace(/^--url /, ''));
    throw e;
  }
  return {
    ...env,
    rest: base,
    stream: base,
    ...(env.oauth
      ? { oauth: { authorize: `${base}/v1/oauth2/authorize`, token: `${base}/v1/oauth2/access_token` } }
      : {}),
  };
}
