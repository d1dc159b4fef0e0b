import { randomBytes } from 'node:crypto';
import type { SandboxReply, SandboxRoute } from './route.ts';

const SCOPES = ['read', 'trade', 'marketdata', 'stream'];
/** Codes are valid this long after the redirect (RFC 6749 recommends at most 10 minutes). */
const CODE_TTL_MS = 10 * 60_000;

interface Grant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: string;
  readonly expires: number;
  used: boolean;
}

/** The sandbox OAuth route plus what it issued (for a sandbox that requires tokens). */
export type OAuthRoute = SandboxRoute & { readonly issued: ReadonlySet<string> };

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

function json(status: number, body: unknown): SandboxReply {
  return { status, body, headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' } };
}

function oauthError(status: number, error: string, description: string): SandboxReply {
  return json(status, { error, error_description: description });
}

/** Form fields of a token request, whether the server handed the body over as text, bytes or parsed JSON. */
function formOf(body: unknown, query: URLSearchParams): URLSearchParams {
  if (typeof body === 'string') return new URLSearchParams(body);
  if (body instanceof Uint8Array) return new URLSearchParams(Buffer.from(body).toString('utf8'));
  if (body instanceof URLSearchParams) return body;
  if (typeof body === 'object' && body !== null) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(body as Record<string, unknown>))
      if (typeof v === 'string') p.set(k, v);
    return p;
  }
  return query;
}

/**
 * The sandbox's OAuth 2.0 endpoints, for testing `fxflow auth login` with no internet.
 *
 * - `GET /v1/oauth2/authorize?response_type=code|token&client_id&redirect_uri&state&scope`: there is
 *   no user to ask, so every well-formed request is granted at once with a 302 to `redirect_uri`:
 *   `?code=…&state=…` for `code`, `#access_token=…&state=…&token_type=bearer&scope=…` for `token`
 *   (implicit flow). A missing client_id or a bad redirect_uri is a 400 (never redirected, as
 *   RFC 6749 4.1.2.1 says); a bad response_type or scope redirects with `error=…`.
 * - `POST /v1/oauth2/access_token` (form: grant_type=authorization_code, code, redirect_uri,
 *   client_id): exchanges a code once. An unknown, expired or already used code is a 400
 *   `invalid_grant`, as is a client_id or redirect_uri that differs from the authorization request.
 *
 * Any client_id is accepted (the sandbox has no application registry) and client_secret is not
 * checked. redirect_uri must be https, or http to a loopback host.
 */
export function oauthRoute(opts: { baseUrl: () => string }): OAuthRoute {
  const grants = new Map<string, Grant>();
  const issued = new Set<string>();
  const route: SandboxRoute = (req) => {
    const path = req.url.pathname;
    if (path === '/v1/oauth2/authorize') {
      if (req.method !== 'GET') return oauthError(405, 'invalid_request', 'use GET for /v1/oauth2/authorize');
      const q = req.url.searchParams;
      const clientId = q.get('client_id');
      const redirect = q.get('redirect_uri');
      if (!clientId) return oauthError(400, 'invalid_request', 'client_id is required');
      if (!redirect) return oauthError(400, 'invalid_request', 'redirect_uri is required');
      let target: URL;
      try {
        target = new URL(redirect);
      } catch {
        return oauthError(400, 'invalid_request', 'redirect_uri is not an absolute URL');
      }
      if (
        !(target.protocol === 'https:' || (target.protocol === 'http:' && LOOPBACK.test(target.hostname))) ||
        target.hash
      ) {
        return oauthError(
          400,
          'invalid_request',
          'redirect_uri must be https, or http to a loopback address, and carry no fragment',
        );
      }
      const state = q.get('state');
      const type = q.get('response_type');
      const back = (params: Record<string, string>, inFragment: boolean): SandboxReply => {
        const u = new URL(target);
        const p = new URLSearchParams(params);
        if (state !== null) p.set('state', state);
        if (inFragment) u.hash = p.toString();
        else for (const [k, v] of p) u.searchParams.set(k, v);
        return { status: 302, headers: { Location: u.toString(), 'Cache-Control': 'no-store' } };
      };
      if (type !== 'code' && type !== 'token')
        return back(
          { error: 'unsupported_response_type', error_description: 'response_type must be code or token' },
          false,
        );
      const scopes = (q.get('scope') ?? 'read').split(/[\s,]+/).filter((s) => s.length > 0);
      const unknown = scopes.find((s) => !SCOPES.includes(s));
      if (unknown !== undefined || scopes.length === 0) {
        return back(
          {
            error: 'invalid_scope',
            error_description: `unknown scope ${unknown ?? '(none)'}; use ${SCOPES.join(', ')}`,
          },
          type === 'token',
        );
      }
      const scope = scopes.join(' ');
      if (type === 'token') {
        const token = randomBytes(32).toString('hex');
        issued.add(token);
        return back({ access_token: token, token_type: 'bearer', scope }, true);
      }
      const code = randomBytes(24).toString('base64url');
      grants.set(code, {
        clientId,
        redirectUri: redirect,
        scope,
        expires: Date.now() + CODE_TTL_MS,
        used: false,
      });
      return back({ code }, false);
    }
    if (path === '/v1/oauth2/access_token') {
      if (req.method !== 'POST')
        return oauthError(405, 'invalid_request', 'use POST for /v1/oauth2/access_token');
      const f = formOf(req.body, req.url.searchParams);
      if (f.get('grant_type') !== 'authorization_code')
        return oauthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code');
      const code = f.get('code');
      const clientId = f.get('client_id');
      if (!code || !clientId) return oauthError(400, 'invalid_request', 'code and client_id are required');
      const g = grants.get(code);
      if (!g || g.used || g.expires < Date.now()) {
        return oauthError(
          400,
          'invalid_grant',
          g?.used
            ? 'the authorization code was already used'
            : 'the authorization code is unknown or expired',
        );
      }
      // A code is spent by any attempt to use it (RFC 6749 4.1.2: used at most once).
      g.used = true;
      if (g.clientId !== clientId)
        return oauthError(400, 'invalid_grant', 'client_id differs from the authorization request');
      if (f.get('redirect_uri') !== g.redirectUri)
        return oauthError(400, 'invalid_grant', 'redirect_uri differs from the authorization request');
      const token = randomBytes(32).toString('hex');
      issued.add(token);
      return json(200, { access_token: token, token_type: 'bearer', scope: g.scope, issuer: opts.baseUrl() });
    }
    return undefined;
  };
  return Object.assign(route, { issued: issued as ReadonlySet<string> });
}
