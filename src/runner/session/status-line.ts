import type { Logger } from 'pino';
import type { StreamStats } from '../../adapters/v20/stream.ts';
import { toUnits } from '../../domain/money.ts';
import type { Portfolio } from '../../engine/portfolio.ts';
import type { LabsPoller } from './labs-poller.ts';
import type { CandleCounts } from './official-candles.ts';
import type { Latency } from './session.ts';

/** What the status line reads: the account view, the streams, the candles and the labs poller. */
export interface StatusSource {
  readonly portfolio: Portfolio;
  readonly latency: Latency;
  readonly pricingStats: StreamStats;
  readonly transactionStats: StreamStats;
  readonly lastTransactionID: string;
  readonly candles: Readonly<CandleCounts>;
  readonly labsPoller: LabsPoller | undefined;
}

/** One status line, logged (every `statusEveryMs`, and once at the stop): equity, positions, latency, stream health. */
export function logStatus(log: Logger, r: StatusSource): void {
  const p = r.portfolio;
  const lat = r.latency.snapshot();
  const labs = r.labsPoller;
  log.info(
    {
      nav: Number((toUnits(p.ledger.balance) + p.unrealizedTotal()).toFixed(2)),
      balance: toUnits(p.ledger.balance),
      openTrades: p.ledger.trades.size,
      pendingOrders: p.ledger.pendingOrders.size,
      latencyMs: { p50: lat.p50, p99: lat.p99, max: lat.max },
      pricing: { ...r.pricingStats },
      transactions: { ...r.transactionStats },
      lastTransactionID: r.lastTransactionID,
      candles: { ...r.candles },
      ...(labs
        ? { labs: { polls: labs.stats.polls, items: labs.stats.items, failures: labs.stats.failures } }
        : {}),
    },
    'status',
  );
}
