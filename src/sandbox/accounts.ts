/** The sandbox's accounts and their simulated brokers: built from the options, the financing rates and fill models they share, and the one submit path every route uses. */
import type { OrderIntent } from '../domain/intents.ts';
import type { FinancingRates, InstrumentRegistry } from '../domain/instrument.ts';
import { formatTime, type UnixMs } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { SandboxAccount } from './account.ts';
import { FaultError, type FaultOptions, type Faults } from './faults.ts';
import { fillModels, type FillModelNames } from './fill-models.ts';
import { HttpError } from './v3/context.ts';

/** An account as `SandboxOptions.accounts` gives it (every field has a default). */
export interface AccountSpec {
  id?: string;
  currency?: string;
  balance?: string;
  marginRate?: string;
  hedging?: boolean;
}

type Rates = { longRate: string; shortRate: string };

/**
 * The accounts by ID, each a `SandboxAccount` over its own SimBroker. The sandbox's own fill models
 * (`fill`) are what a fault set that names none goes back to.
 */
export class SandboxAccounts {
  readonly byId = new Map<string, SandboxAccount>();
  /** Financing rates set through the control (`setFinancing`), over data/instruments.json's. */
  readonly financing = new Map<string, Rates>();
  #intentSeq = 0;
  #closing: { promise: Promise<'closed'>; done: () => void };

  /** Builds the accounts and applies the sandbox's fill models; a bad model name throws a RangeError naming `sandbox option fill.<field>`. */
  constructor(
    private readonly o: {
      specs: readonly AccountSpec[];
      instruments: InstrumentRegistry;
      start: UnixMs;
      marketHours: boolean;
      keepTransactions?: number | undefined;
      fill: { slippage: string; latency: string };
      /** Real ms an answer waits for a delayed fill before its 504. */
      latencyTimeoutMs: number;
    },
  ) {
    const financingRates: FinancingRates = (name) => {
      const f = this.financing.get(name);
      return f === undefined
        ? undefined
        : {
            longRate: Number(f.longRate),
            shortRate: Number(f.shortRate),
            daysCharged: o.instruments.get(name).financing.daysCharged,
          };
    };
    for (const [i, a] of o.specs.entries()) {
      const id = a.id ?? `101-001-0000001-${String(i + 1).padStart(3, '0')}`;
      this.byId.set(
        id,
        new SandboxAccount({
          id,
          currency: a.currency ?? 'USD',
          balance: a.balance ?? '100000',
          marginRate: a.marginRate ?? '0.02',
          hedging: a.hedging ?? false,
          instruments: o.instruments,
          start: o.start,
          marketHours: o.marketHours,
          financingRates,
          ...(o.keepTransactions !== undefined ? { keepTransactions: o.keepTransactions } : {}),
        }),
      );
    }
    let done = (): void => {};
    const promise = new Promise<'closed'>((r) => {
      done = () => r('closed');
    });
    this.#closing = { promise, done };
    this.applyFill({}, (n) => `sandbox option fill.${n}`, false);
  }

  /** The account of a path's ID; a 404 INVALID_ACCOUNT_ID naming the served ones when unknown. */
  account(id: string | undefined): SandboxAccount {
    const a = id !== undefined ? this.byId.get(id) : undefined;
    if (!a)
      throw new HttpError(
        404,
        `The Account specified does not exist (${id ?? ''}); the sandbox serves ${[...this.byId.keys()].join(', ')}`,
        'INVALID_ACCOUNT_ID',
      );
    return a;
  }

  /** Sets an instrument's financing rates from now on; a 400 naming the field when one is not a yearly rate. */
  setFinancing(name: string, rates: Rates): void {
    if (!this.o.instruments.has(name))
      throw new HttpError(
        400,
        `Invalid value specified for 'instrument': unknown instrument '${name}'`,
        'INVALID_INSTRUMENT',
      );
    for (const k of ['longRate', 'shortRate'] as const) {
      const v = rates[k];
      if (typeof v !== 'string' || !/^-?\d+(\.\d+)?$/.test(v) || Math.abs(Number(v)) > 1)
        throw new HttpError(
          400,
          `Invalid value specified for '${k}': a yearly rate as a decimal string in [-1, 1], e.g. "-0.0412"`,
        );
    }
    this.financing.set(name, { longRate: rates.longRate, shortRate: rates.shortRate });
  }

  /** The fill models named by `names` (absent: the sandbox's own), in every account. Throws a RangeError naming the field. */
  applyFill(names: FillModelNames, field: (n: 'slippage' | 'latency') => string, quiet: boolean): void {
    const want = {
      slippage: names.slippage ?? this.o.fill.slippage,
      latency: names.latency ?? this.o.fill.latency,
    };
    // Checked before anything changes; then each account gets its own models (a recorded latency file cycles per account).
    fillModels(want, field, quiet);
    for (const a of this.byId.values()) {
      const m = fillModels(want, field, quiet);
      a.slippage.set(m.slippage);
      a.latency.set(m.latency);
    }
  }

  /**
   * The fault set, fill models included: every field is checked before any takes effect, so a bad
   * one (a FaultError naming it) leaves the running faults as they were.
   */
  setFaults(faults: Faults, f: FaultOptions, quiet: boolean): void {
    const fill = this.o.fill;
    for (const k of ['slippage', 'latency'] as const) {
      if (f[k] !== undefined && typeof f[k] !== 'string')
        throw new FaultError(
          `faults.${k} must be a string like ${k === 'slippage' ? '"fixed:1"' : '"fixed:250"'} (got ${JSON.stringify(f[k])}); leave it out for the sandbox's own (${fill[k]})`,
        );
    }
    try {
      fillModels(
        { slippage: f.slippage ?? fill.slippage, latency: f.latency ?? fill.latency },
        (n) => `faults.${n}`,
        quiet,
      );
    } catch (e) {
      throw new FaultError((e as Error).message);
    }
    faults.set(f);
    this.applyFill(
      {
        ...(f.slippage !== undefined ? { slippage: f.slippage } : {}),
        ...(f.latency !== undefined ? { latency: f.latency } : {}),
      },
      (n) => `faults.${n}`,
      quiet,
    );
  }

  /** Submits an intent at sandbox time `now`; the transactions it made. */
  submit(a: SandboxAccount, intent: OrderIntent, now: UnixMs): Transaction[] {
    return a.submit(intent, now).txs;
  }

  /**
   * Submits an intent whose answer carries its fill (an order, a replace, a trade or position
   * close), as v20 answers: with the latency fault on, the market orders reach the simulator at
   * T + delay, so the answer waits for the sandbox clock to pass that time (at most
   * `latencyTimeoutMs` real ms: then 504; the order still fills when the clock gets there and its
   * transactions are on the stream). After `close()`, a 503.
   */
  async submitAndWait(a: SandboxAccount, intent: OrderIntent, now: UnixMs): Promise<Transaction[]> {
    const decided = now;
    const r = a.submit(intent, now);
    if (r.arriving === undefined) return r.txs;
    const latencyTimeoutMs = this.o.latencyTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      r.arriving,
      this.#closing.promise,
      new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), latencyTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (late === 'timeout') {
      throw new HttpError(
        504,
        `The order decided at ${formatTime(decided)} reaches the market at ${formatTime(r.arrivesAt ?? decided)} (sandbox latency ${a.latency.name}), and the sandbox clock did not get there within ${latencyTimeoutMs} ms: move it (POST /sandbox/time, /sandbox/advance, /sandbox/prices) or raise fill.latencyTimeoutMs. The order was not lost: it fills once the clock passes that time, and its transactions go out on the transaction stream.`,
      );
    }
    if (late === 'closed')
      throw new HttpError(
        503,
        'The sandbox is closing: the order was still on its way to the market (latency fault) and was not filled',
      );
    return r.txs.concat(late);
  }

  /** A fresh intent ID. */
  intentID(): string {
    return `sandbox-${++this.#intentSeq}`;
  }

  /** Orders the latency fault holds back, over all accounts. */
  get delayed(): number {
    let n = 0;
    for (const a of this.byId.values()) n += a.delayed;
    return n;
  }

  /** The sandbox closes: answers still waiting for a delayed fill give up (503). */
  close(): void {
    this.#closing.done();
  }
}
