import type { Logger } from 'pino';
import type { Environment } from '../adapters/v20/environments.ts';
import type { V20Http } from '../adapters/v20/http.ts';
import type { V20Rest } from '../adapters/v20/rest.ts';

/**
 * The v20 client of a command that talks to OANDA (`run`, `record`, `download`), built in one
 * place: the HTTP transport on the environment's REST and stream hosts, with the token when there
 * is one and its log lines tagged `component: v20`, and the REST endpoints over it. The HTTP stack
 * (undici) is loaded here, when such a command runs: other commands start without it.
 */
export async function v20Client(
  env: Environment,
  token: string | undefined,
  log: Logger,
): Promise<{ http: V20Http; rest: V20Rest }> {
  const [{ V20Http: Http }, { V20Rest: Rest }] = await Promise.all([
    import('../adapters/v20/http.ts'),
    import('../adapters/v20/rest.ts'),
  ]);
  const http = new Http({
    baseUrl: env.rest,
    streamUrl: env.stream,
    ...(token !== undefined ? { token } : {}),
    log: log.child({ component: 'v20' }),
  });
  return { http, rest: new Rest(http) };
}
