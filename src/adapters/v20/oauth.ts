import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthError, SecretToken } from './auth.ts';
import { V20Error } from './errors.ts';
import { checkBaseUrl } from './http.ts';

/** The OAuth scopes v20 applications ask for. */
export const SCOPES = ['read', 'trade', 'marketdata', 'stream'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Parses a scope list (`read,trade` or `read trade`), refusing unknown names with the list of
 * valid ones. Duplicates are dropped; the order of SCOPES is kept.
 */
export function parseScopes(text: string, field = '--scope'): Scope[] {
  const parts = text.split(/[\s,]+/).filter((s) => s.length > 0);
  if (parts.length === 0)
    throw new AuthError(
      'AUTH_OAUTH',
      `${field} is empty: give one or more of ${SCOPES.join(', ')} (comma separated)`,
    );
  for (const p of parts) {
    if (!(SCOPES as readonly string[]).includes(p))
      throw new AuthError(
        'AUTH_OAUTH',
        `${field}: "${p}" is not an OAuth scope; use ${SCOPES.join(', ')} (comma separated)`,
      );
  }
  return SCOPES.filter((s) => parts.includes(s));
}

/** A fresh `state`: 32 random bytes from the crypto RNG, base64url. */
export function randomState(): string {
  return randomBytes(32).toString('base64url');
}

/** Constant-time comparison of two state strings. */
export function sameState(a: string | null | undefined, b: string): boolean {
  if (typeof a !== 'string') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export type OAuthFlow = 'code' | 'implicit';

/**
 * The authorization URL the user's browser opens. Scopes are sent space separated (RFC 6749
 * section 3.3); the sandbox also accepts commas.
 */
export function authorizeUrl(o: {
  authorize: string;
  clientId: string;
  redirectUri: string;
  state: string;
  scopes: readonly Scope[];
  flow: OAuthFlow;
}): string {
  const u = new URL(o.authorize);
  u.searchParams.set('response_type', o.flow === 'code' ? 'code' : 'token');
  u.searchParams.set('client_id', o.clientId);
  u.searchParams.set('redirect_uri', o.redirectUri);
  u.searchParams.set('state', o.state);
  u.searchParams.set('scope', o.scopes.join(' '));
  return u.toString();
}

/** What the loopback listener received: a code (code flow) or a token (implicit flow). */
export type Callback =
  | { readonly kind: 'code'; readonly code: string }
  | { readonly kind: 'token'; readonly token: SecretToken; readonly scope?: string };

/** The loopback redirect listener of one login attempt. */
export interface LoopbackListener {
  /** `http://127.0.0.1:<port>/callback`: the redirect_uri to register and send. */
  readonly redirectUri: string;
  /** Settles once: the code or token, or an AuthError (state mismatch, denied, timeout). */
  readonly result: Promise<Callback>;
  close(): Promise<void>;
}

const page = (title: string, text: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p id="result">${text}</p></body></html>`;

/**
 * The page served at the redirect URI in the implicit flow. The token arrives in the URL fragment,
 * which browsers never send to a server, so this script posts the fragment back to the listener
 * (same origin) and shows the outcome. It never prints the token.
 */
export const FRAGMENT_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>fxflow login</title></head><body>
<h1>fxflow login</h1><p id="result">Completing the login...</p>
<script>
(function () {
  var out = document.getElementById('result');
  var frag = window.location.hash.replace(/^#/, '');
  history.replaceState(null, '', window.location.pathname);
  fetch('/fragment', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: frag })
    .then(function (r) { return r.text().then(function (t) { out.textContent = t; }); })
    .catch(function (e) { out.textContent = 'fxflow login failed: ' + e; });
})();
</script></body></html>`;

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  });
  res.end(body);
}

function readBody(req: IncomingMessage, limit = 16_384): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Starts the redirect listener on 127.0.0.1 with a random port. It accepts exactly one outcome:
 * - code flow: `GET /callback?code=…&state=…`;
 * - implicit flow: `GET /callback` serves FRAGMENT_PAGE, whose script posts the fragment
 *   (`access_token=…&state=…&token_type=bearer&scope=…`) to `POST /fragment`.
 * A `state` that differs from the one sent is refused (HTTP 400, the result rejects, no token).
 * `error=…` from the server rejects with its description. After `timeoutMs` the result rejects.
 */
export async function startLoopbackListener(o: {
  state: string;
  flow: OAuthFlow;
  timeoutMs?: number;
}): Promise<LoopbackListener> {
  let settle: { ok: (c: Callback) => void; fail: (e: Error) => void } | undefined;
  let done = false;
  const result = new Promise<Callback>((ok, fail) => {
    settle = { ok, fail };
  });
  // Mark as handled: callers await it later; an early rejection must not be "unhandled".
  result.catch(() => {});
  const finish = (r: Callback | Error): void => {
    if (done) return;
    done = true;
    if (r instanceof Error) settle!.fail(r);
    else settle!.ok(r);
  };
  const check = (params: URLSearchParams): Error | undefined => {
    const err = params.get('error');
    if (err !== null) {
      const desc = params.get('error_description');
      return new AuthError(
        'AUTH_OAUTH',
        `the authorization server refused the login: ${err}${desc ? ` (${desc})` : ''}; no token was stored`,
      );
    }
    if (!sameState(params.get('state'), o.state)) {
      return new AuthError(
        'AUTH_OAUTH',
        'the OAuth state in the redirect does not match the one this login sent (a forged or stale redirect); no token was stored. Run `fxflow auth login` again',
      );
    }
    return undefined;
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    void (async () => {
      if (req.method === 'GET' && url.pathname === '/callback') {
        if (o.flow === 'implicit' && !url.searchParams.has('error'))
          return send(res, 200, 'text/html; charset=utf-8', FRAGMENT_PAGE);
        const bad = check(url.searchParams);
        if (bad) {
          finish(bad);
          return send(res, 400, 'text/html; charset=utf-8', page('fxflow login failed', bad.message));
        }
        const code = url.searchParams.get('code');
        if (!code) {
          const e = new AuthError(
            'AUTH_OAUTH',
            'the redirect carried no authorization code; no token was stored',
          );
          finish(e);
          return send(res, 400, 'text/html; charset=utf-8', page('fxflow login failed', e.message));
        }
        finish({ kind: 'code', code });
        return send(
          res,
          200,
          'text/html; charset=utf-8',
          page('fxflow login', 'Authorized. You can close this window and return to the terminal.'),
        );
      }
      if (req.method === 'POST' && url.pathname === '/fragment' && o.flow === 'implicit') {
        const params = new URLSearchParams(await readBody(req));
        const bad = check(params);
        if (bad) {
          finish(bad);
          return send(res, 400, 'text/plain; charset=utf-8', `fxflow login failed: ${bad.message}`);
        }
        const token = params.get('access_token');
        if (!token || /\s/.test(token)) {
          const e = new AuthError(
            'AUTH_OAUTH',
            'the redirect fragment carried no access_token; no token was stored',
          );
          finish(e);
          return send(res, 400, 'text/plain; charset=utf-8', `fxflow login failed: ${e.message}`);
        }
        const scope = params.get('scope');
        finish({ kind: 'token', token: new SecretToken(token), ...(scope !== null ? { scope } : {}) });
        return send(
          res,
          200,
          'text/plain; charset=utf-8',
          'fxflow login: authorized. You can close this window.',
        );
      }
      send(res, 404, 'text/plain; charset=utf-8', 'not found');
    })().catch(() => send(res, 400, 'text/plain; charset=utf-8', 'bad request'));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  const timer = setTimeout(
    () =>
      finish(
        new AuthError(
          'AUTH_OAUTH',
          `no redirect arrived within ${Math.round((o.timeoutMs ?? 300_000) / 1000)} s; no token was stored. Run \`fxflow auth login\` again`,
        ),
      ),
    o.timeoutMs ?? 300_000,
  );
  timer.unref();
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    result,
    close: () =>
      new Promise<void>((ok) => {
        clearTimeout(timer);
        finish(new AuthError('AUTH_OAUTH', 'the login was cancelled; no token was stored'));
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/**
 * Exchanges an authorization code at the token endpoint (RFC 6749 4.1.3, form encoded). The
 * endpoint must be https (or loopback http). Errors carry the server's `error` and
 * `error_description`, never the code, the secret or a token.
 */
export async function exchangeCode(o: {
  tokenUrl: string;
  clientId: string;
  clientSecret?: string;
  code: string;
  redirectUri: string;
}): Promise<{ token: SecretToken; scope?: string; tokenType: string }> {
  try {
    checkBaseUrl(o.tokenUrl, 'oauth.token');
  } catch (e) {
    if (e instanceof V20Error) throw new AuthError('AUTH_OAUTH', e.message);
    throw e;
  }
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: o.code,
    redirect_uri: o.redirectUri,
    client_id: o.clientId,
  });
  if (o.clientSecret !== undefined) form.set('client_secret', o.clientSecret);
  let res: Response;
  try {
    res = await fetch(o.tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: form.toString(),
      redirect: 'error',
    });
  } catch (e) {
    throw new AuthError(
      'AUTH_OAUTH',
      `cannot reach the token endpoint ${new URL(o.tokenUrl).origin}: ${(e as Error).message}`,
    );
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    // handled below
  }
  if (!res.ok) {
    const err = typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
    const desc = typeof body.error_description === 'string' ? ` (${body.error_description})` : '';
    throw new AuthError(
      'AUTH_OAUTH',
      `the token endpoint refused the code: ${err}${desc}; no token was stored. Run \`fxflow auth login\` again`,
    );
  }
  if (typeof body.access_token !== 'string' || body.access_token.length === 0) {
    throw new AuthError(
      'AUTH_OAUTH',
      `the token endpoint answered HTTP ${res.status} without an access_token; no token was stored`,
    );
  }
  return {
    token: new SecretToken(body.access_token),
    tokenType: typeof body.token_type === 'string' ? body.token_type : 'bearer',
    ...(typeof body.scope === 'string' ? { scope: body.scope } : {}),
  };
}

export interface LoginOptions {
  readonly authorize: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly scopes: readonly Scope[];
  readonly flow: OAuthFlow;
  /** Opens the authorization URL: a browser, or (in tests) an HTTP client. */
  readonly open: (url: string) => void | Promise<void>;
  readonly timeoutMs?: number;
  /** Fixed state (tests only); default a fresh random one. */
  readonly state?: string;
}

/**
 * One complete login: random state, loopback listener, authorization URL opened, redirect
 * received and its state verified, then (code flow) the code exchanged for a token. Returns the
 * token; storing it is the caller's choice (`writeTokenFile`).
 */
export async function login(o: LoginOptions): Promise<{ token: SecretToken; scope?: string }> {
  checkUrl(o.authorize, 'oauth.authorize');
  const state = o.state ?? randomState();
  const listener = await startLoopbackListener({
    state,
    flow: o.flow,
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  });
  try {
    const url = authorizeUrl({
      authorize: o.authorize,
      clientId: o.clientId,
      redirectUri: listener.redirectUri,
      state,
      scopes: o.scopes,
      flow: o.flow,
    });
    await o.open(url);
    const cb = await listener.result;
    if (cb.kind === 'token')
      return { token: cb.token, ...(cb.scope !== undefined ? { scope: cb.scope } : {}) };
    const ex = await exchangeCode({
      tokenUrl: o.tokenUrl,
      clientId: o.clientId,
      code: cb.code,
      redirectUri: listener.redirectUri,
      ...(o.clientSecret !== undefined ? { clientSecret: o.clientSecret } : {}),
    });
    return { token: ex.token, ...(ex.scope !== undefined ? { scope: ex.scope } : {}) };
  } finally {
    await listener.close();
  }
}

function checkUrl(url: string, field: string): void {
  try {
    checkBaseUrl(url, field);
  } catch (e) {
    if (e instanceof V20Error) throw new AuthError('AUTH_OAUTH', e.message);
    throw e;
  }
}
