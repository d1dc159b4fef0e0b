// A sandbox on loopback with a TCP tap in front of it and a v20 client through the tap: for tests
// that look at what a request does to its connection (aborts, retries) and count what the sandbox
// served. Each test file registers `closeTapRigs` in its afterEach.
import { V20Http, type V20HttpOptions } from '../src/adapters/v20/http.ts';
import { V20Rest } from '../src/adapters/v20/rest.ts';
import { startSandbox, type FaultOptions, type Sandbox } from '../src/sandbox/server.ts';
import { startTcpTap, type TcpTap } from './tcp-tap.ts';

export interface TapRig {
  sb: Sandbox;
  tap: TcpTap;
  http: V20Http;
  rest: V20Rest;
  /** Requests the sandbox received since the rig started. */
  served(): number;
}

let open: TapRig[] = [];

/** A sandbox at `start` with `faults`, the tap, and a client (fast rate budget; `o` overrides). */
export async function tapRig(
  start: number,
  faults: FaultOptions,
  o: Partial<V20HttpOptions> = {},
): Promise<TapRig> {
  const sb = await startSandbox({ start, heartbeatMs: 1000, faults });
  const tap = await startTcpTap(sb.url);
  const http = new V20Http({
    baseUrl: tap.url,
    connectionsPerSecond: 1000,
    rate: { perSecond: 1000, burst: 1000 },
    ...o,
  });
  const base = sb.stats().requests;
  const r: TapRig = { sb, tap, http, rest: new V20Rest(http), served: () => sb.stats().requests - base };
  open.push(r);
  return r;
}

/** Closes every rig made since the last call: client, tap, sandbox. */
export async function closeTapRigs(): Promise<void> {
  for (const r of open) {
    await r.http.close().catch(() => undefined);
    await r.tap.close();
    await r.sb.close();
  }
  open = [];
}
