import { SimBroker, type SimBrokerOptions } from './broker.ts';
import { parseFillModels, type FillModelNames, type FillModels } from './fill-models.ts';

/** The account a simulator holds: its currency, deposit, margin rate, kind and v20 ID. */
export interface SimAccountSettings {
  readonly currency: string;
  /** The deposit, a decimal string in the account currency. */
  readonly balance: string;
  readonly marginRate: string;
  readonly hedging?: boolean;
  readonly fifo?: boolean;
  readonly id?: string;
}

/** What a simulator is made from in every mode: the account, the fill models, and the simulator's other options. */
export interface SimSettings extends Omit<
  SimBrokerOptions,
  | 'currency'
  | 'initialBalance'
  | 'marginRate'
  | 'hedging'
  | 'fifo'
  | 'accountID'
  | 'slippage'
  | 'latency'
  | 'commission'
  | 'marketHours'
> {
  readonly account: SimAccountSettings;
  /**
   * The fill models: by name (parsed here, `parseFillModels`), or built already (a run's, checked
   * with its flags named; a sandbox's swappable ones). Absent: v20's own behaviour.
   */
  readonly models?: FillModelNames | Partial<FillModels>;
}

const built = (m: FillModelNames | Partial<FillModels>): m is Partial<FillModels> =>
  typeof m.slippage === 'object' || typeof m.latency === 'object' || typeof m.commission === 'object';

/**
 * The one way a SimBroker is made (backtest, sweep trials, `run --broker sim`, `--shadow`, replay,
 * the sandbox's accounts): settings in, a simulator out. `kind` is the class made: SimBroker, or
 * the sandbox's SandboxSim (sandbox-control.ts: the broker plus what only the sandbox does).
 */
export function simBroker<B extends SimBroker = SimBroker>(
  s: SimSettings,
  kind: new (o: SimBrokerOptions) => B = SimBroker as new (o: SimBrokerOptions) => B,
): B {
  const { account: a, models, ...options } = s;
  const m = models === undefined ? {} : built(models) ? models : parseFillModels(models, a.currency);
  return new kind({
    ...options,
    currency: a.currency,
    initialBalance: a.balance,
    marginRate: a.marginRate,
    ...(a.hedging !== undefined ? { hedging: a.hedging } : {}),
    ...(a.fifo !== undefined ? { fifo: a.fifo } : {}),
    ...(a.id !== undefined ? { accountID: a.id } : {}),
    ...(m.slippage !== undefined ? { slippage: m.slippage } : {}),
    ...(m.latency !== undefined ? { latency: m.latency } : {}),
    ...(m.commission !== undefined ? { commission: m.commission } : {}),
    ...(m.marketHours !== undefined ? { marketHours: m.marketHours } : {}),
  });
}
