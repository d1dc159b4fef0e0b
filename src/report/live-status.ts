import type { V20Rest } from '../adapters/v20/rest.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { resolve } from 'node:path';
import { RunnerStatus, type RunnerView, type RunnerStatusOptions } from './runner-status.ts';
import { startStatusServer, type StatusServer } from './status-server.ts';

/** The live status page of one `fxflow run`: feed the provider, start once the runner runs, close at the end. */
export interface LiveStatus {
  readonly provider: RunnerStatus;
  start(): Promise<StatusServer>;
  close(): Promise<void>;
}

/**
 * `--status-port`: a RunnerStatus over the runner (the account's margin rate and hedging read once
 * from its summary) and the loopback status server.
 */
export async function liveStatus(o: {
  statusPort: number;
  env: string;
  broker: string;
  killFile?: string;
  strategy: string;
  accountID: string;
  limits: RunnerStatusOptions['limits'];
  rest: V20Rest;
  runner: () => RunnerView;
}): Promise<LiveStatus> {
  const { account } = await o.rest.summary(o.accountID);
  const instruments = loadInstruments();
  const provider = new RunnerStatus(o.runner, {
    strategy: o.strategy,
    mode: `${o.env}${o.broker === 'sim' ? ' (simulated fills)' : ''}`,
    accountID: o.accountID,
    marginRate: Number(account.marginRate),
    hedging: account.hedgingEnabled === true,
    ...(o.limits !== undefined ? { limits: o.limits } : {}),
    ...(o.killFile !== undefined ? { killFile: resolve(o.killFile) } : {}),
    pip: (i) => instruments.get(i).pip,
  });
  let server: StatusServer | undefined;
  return {
    provider,
    start: async () => (server = await startStatusServer({ port: o.statusPort, provider })),
    close: async () => {
      await server?.close();
    },
  };
}
