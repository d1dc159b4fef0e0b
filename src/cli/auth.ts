import { homedir } from 'node:os';
import type { Argv } from 'yargs';
import { openInBrowser } from './open.ts';
import { AuthError, defaultTokenFile, resolveToken, writeTokenFile } from '../adapters/v20/auth.ts';

/** `fxflow auth …` subcommands: `login` (OAuth) and `status` (where the token comes from). */
export function authCommand(y: Argv): Argv {
  return y
    .command(
      'login',
      'Log in with OAuth (authorization code, or implicit with --implicit) and store the token in the token file (mode 0600)',
      (a) =>
        a
          .option('env', {
            type: 'string',
            choices: ['practice', 'live', 'sandbox'],
            default: 'practice',
            describe: 'Environment whose OAuth endpoints to use',
          })
          .option('url', {
            type: 'string',
            describe:
              'Base URL overriding the environment (e.g. a sandbox on another port: http://127.0.0.1:9000)',
          })
          .option('client-id', {
            type: 'string',
            describe: 'Your application client ID (or FXFLOW_CLIENT_ID)',
          })
          .option('client-secret', {
            type: 'string',
            describe: 'Your application secret for the code exchange (better: FXFLOW_CLIENT_SECRET)',
          })
          .option('scope', {
            type: 'string',
            default: 'read,trade,marketdata,stream',
            describe: 'Scopes, comma separated: read, trade, marketdata, stream',
          })
          .option('implicit', {
            type: 'boolean',
            default: false,
            describe: 'Implicit flow: the token comes back in the URL fragment (no code exchange)',
          })
          .option('browser', {
            type: 'boolean',
            default: true,
            describe: 'Open the authorization page in a browser; --no-browser only prints the URL',
          })
          .option('token-file', {
            type: 'string',
            describe: 'Where to store the token (default ~/.fxflow/token-<env>: one file per environment)',
          })
          .option('timeout', { type: 'number', default: 300, describe: 'Seconds to wait for the redirect' }),
      async (a) => {
        // Loaded when the command runs: the other commands start without the HTTP stack (undici).
        const [{ environment }, { login, parseScopes }] = await Promise.all([
          import('../adapters/v20/environments.ts'),
          import('../adapters/v20/oauth.ts'),
        ]);
        const env = environment(String(a.env), a.url !== undefined ? { url: String(a.url) } : {});
        if (!env.oauth)
          throw new AuthError(
            'AUTH_OAUTH',
            `environment ${env.name} has no oauth endpoints in config/environments.json (add "oauth": { "authorize", "token" })`,
          );
        const clientId = (a['client-id'] as string | undefined) ?? process.env.FXFLOW_CLIENT_ID;
        if (!clientId)
          throw new AuthError(
            'AUTH_OAUTH',
            '--client-id is required (or set FXFLOW_CLIENT_ID): the ID OANDA gave your registered application',
          );
        const clientSecret = (a['client-secret'] as string | undefined) ?? process.env.FXFLOW_CLIENT_SECRET;
        const scopes = parseScopes(String(a.scope));
        const useBrowser = a.browser !== false;
        const { token, scope } = await login({
          authorize: env.oauth.authorize,
          tokenUrl: env.oauth.token,
          clientId,
          ...(clientSecret ? { clientSecret } : {}),
          scopes,
          flow: a.implicit ? 'implicit' : 'code',
          timeoutMs: Number(a.timeout) * 1000,
          open: (url) => {
            process.stderr.write(
              `Open this URL to authorize fxflow (${env.name}):\n  ${url}\nWaiting for the redirect on the loopback listener...\n`,
            );
            // The URL is printed above: a browser that cannot be opened is said, and the login waits on.
            if (useBrowser)
              void openInBrowser(url).then(
                (problem) =>
                  problem !== undefined &&
                  process.stderr.write(
                    `(could not open a browser: ${problem}; open the URL above yourself)\n`,
                  ),
              );
          },
        });
        const file = writeTokenFile(
          (a['token-file'] as string | undefined) ??
            env.tokenFile?.replace(/^~\//, `${homedir()}/`) ??
            defaultTokenFile(undefined, env.name),
          token,
        );
        process.stdout.write(
          `Logged in to ${env.name}${scope ? ` (scopes: ${scope})` : ''}. Token stored in ${file} (mode 0600).\n`,
        );
      },
    )
    .command(
      'status',
      'Say where the access token would come from (environment variable, config or token file); never prints it',
      (a) =>
        a
          .option('env', { type: 'string', choices: ['practice', 'live', 'sandbox'], default: 'practice' })
          .option('token-file', {
            type: 'string',
            describe: 'Token file to check (default ~/.fxflow/token-<env>)',
          }),
      async (a) => {
        const { environment } = await import('../adapters/v20/environments.ts');
        const env = environment(String(a.env));
        // A sandbox never gets FXFLOW_TOKEN / OANDA_TOKEN (fxflow run): only its own token, and only with --require-token.
        const r = resolveToken({
          environment: env,
          ...(a['token-file'] !== undefined ? { tokenFile: String(a['token-file']) } : {}),
          ...(env.name === 'sandbox' ? { env: {} } : {}),
        });
        process.stdout.write(
          `${env.name}: token from ${r.source === 'file' ? `token file ${r.file}` : r.source === 'config' ? 'config/environments.json' : `the ${r.source} environment variable`} (${env.rest})${env.name === 'sandbox' ? '; fxflow run sends it only with --require-token' : ''}\n`,
        );
      },
    )
    .demandCommand(1, 'Name an auth command: login or status');
}
