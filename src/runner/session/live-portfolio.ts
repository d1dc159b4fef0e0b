// A portfolio on a live account (docs/portfolios.md, "Portfolio runs"): several strategies in one
// process, one journal and one halt, each on its own book (engine/book.ts), each with its own risk
// limits inside the account's. What one strategy's run has not: the host of their engines, their
// states in the journal's snapshot, a member stopped alone when it throws, and the books at a restart.
import type { Logger } from 'pino';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Account, Transaction } from '../../domain/v20/index.ts';
import type { Book } from '../../engine/book.ts';
import { bookGate, PortfolioHost } from '../../engine/portfolio-host.ts';
import type { Portfolio } from '../../engine/portfolio.ts';
import type { RiskReport } from '../../engine/report.ts';
import { activeLimits, type RiskExecution } from '../../engine/risk.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Execution } from '../../ports/execution.ts';
import { HANDLER_NAMES, type Params, type Step, type Strategy } from '../../strategy/api.ts';
import { RunnerError } from './errors.ts';
import { liveStrategy } from './live-strategy.ts';
import type { RunMember, RunnerOptions } from './runner-options.ts';

/** What the live portfolio needs of its run. */
export interface LivePortfolioHooks {
  readonly runId: string;
  readonly log: Logger;
  /** A line for the operator's terminal. */
  readonly say: (line: string) => void;
  readonly halted: () => boolean;
  readonly stop: (reason: string) => void;
}

/** The journal snapshot's `state` of a portfolio: each member's state and client-ID sequence. */
interface PortfolioState {
  readonly portfolio: Readonly<Record<string, { readonly state: unknown; readonly sequence: number }>>;
}

/** A member's book as the status page and the report show it. */
export interface BookView {
  readonly name: string;
  /** Net units per instrument of the book's open trades (instruments with none left out). */
  readonly positions: Readonly<Record<string, number>>;
  readonly trades: readonly { readonly id: string; readonly instrument: string; readonly units: number }[];
  readonly pendingOrders: number;
  /** What the strategy threw, once it was stopped alone. */
  readonly failed?: string;
}

/**
 * A live portfolio's strategies: the host of their engines (built by the assembly's `host`), their
 * snapshot, and a member stopped alone when a handler of it throws. One halt: every member is quiet
 * once the run is halted (`halted`), as one strategy is.
 */
export class LivePortfolio {
  host: PortfolioHost | undefined;
  readonly #failed = new Map<string, string>();
  readonly #o: RunnerOptions;
  readonly #members: readonly RunMember[];
  readonly #run: LivePortfolioHooks;

  constructor(o: RunnerOptions, members: readonly RunMember[], run: LivePortfolioHooks) {
    this.#o = o;
    this.#members = members;
    this.#run = run;
  }

  /**
   * A member threw: it hears nothing more (`isolated`); its book is closed (`--on-strategy-error
   * close`, the default: its own closes and cancels, after the handler's turn) or kept. The others go
   * on; once every member has thrown, the run stops on the error.
   */
  #stoppedAlone(name: string, e: unknown): void {
    const run = this.#run;
    const close = (this.#o.onStrategyError ?? 'close') === 'close' && !run.halted();
    const why = e instanceof Error ? e.message : String(e);
    run.log.error({ err: e, strategy: name }, 'a strategy of the portfolio threw: stopped alone');
    run.say(
      `strategy ${name} threw (${why}): stopped alone; ${close ? 'closing its book (its positions and pending orders)' : 'its book is kept as it is (--on-strategy-error keep)'}; the other strategies go on`,
    );
    if (close) queueMicrotask(() => this.closeBook(name, run.runId));
    if (this.#failed.size === this.#members.length)
      queueMicrotask(() =>
        run.stop(`error: every strategy of the portfolio threw (the last: ${name}: ${why})`),
      );
  }

  /**
   * The assembly's `host`: one engine per member on its book, each member's strategy restored from
   * the snapshot, quiet while warming or halted, isolated (a throw stops it alone: `failed`), with its
   * own gate and client IDs `<name>-<runId>-<n>`. The books are folded from `handled` (the journal's
   * transactions the strategies had handled, from the journal's start) before any strategy hears one.
   */
  hostOf(
    parts: { readonly execution: Execution; readonly portfolio: Portfolio },
    p: {
      readonly restored: unknown;
      readonly runId: string;
      readonly handled: readonly Transaction[];
      readonly hedging: boolean;
      /** The books start with the account's balance (an account); `--broker sim`'s get its deposit transaction. */
      readonly funded: boolean;
      readonly marginRate: number;
      readonly clock: Clock;
      readonly log: Logger;
      readonly warming: () => boolean;
      readonly halted: () => boolean;
      readonly transaction: (tx: Transaction) => void;
      readonly intent: (intent: OrderIntent) => void;
    },
  ): PortfolioHost {
    const o = this.#o;
    const saved = (p.restored as PortfolioState | undefined)?.portfolio;
    const host = new PortfolioHost({
      members: this.#members.map((m) => {
        const own = saved?.[m.name];
        const live = liveStrategy(m.strategy, own !== undefined ? { state: own.state } : undefined, {
          warming: p.warming,
          halted: p.halted,
          // The account's transactions reach the runner's bookkeeping once, from the host (below).
          transaction: () => undefined,
        });
        return {
          strategy: isolated(live, (e) => {
            if (this.#failed.has(m.name)) return;
            this.#failed.set(m.name, e instanceof Error ? e.message : String(e));
            this.#stoppedAlone(m.name, e);
          }),
          name: m.name,
          params: m.params,
          clientIdPrefix: `${m.name}-${p.runId}`,
        };
      }),
      execution: parts.execution,
      account: parts.portfolio,
      instruments: o.instruments,
      clock: p.clock,
      log: (name) => p.log.child({ component: 'strategy', strategy: name }),
      marginRate: p.marginRate,
      hedging: p.hedging,
      keepClosedTrades: true,
      funded: p.funded,
      onIntent: (_name, intent) => p.intent(intent),
      gate: (name, inner, book) =>
        bookGate({
          inner,
          book,
          limits: this.#members.find((m) => m.name === name)?.limits,
          instruments: o.instruments,
          clock: p.clock,
          hedging: p.hedging,
          log: p.log,
        }),
      onTransaction: p.transaction,
    });
    host.restore(p.handled);
    for (const [i, m] of this.#members.entries()) {
      const own = saved?.[m.name];
      if (own !== undefined) host.engines[i]!.sequence = own.sequence;
    }
    this.host = host;
    return host;
  }

  /** The snapshot's `state`: each member's state and client-ID sequence. */
  get state(): PortfolioState {
    const out: Record<string, { state: unknown; sequence: number }> = {};
    const host = this.host;
    if (host !== undefined)
      for (const [i, m] of this.#members.entries()) {
        const e = host.engines[i]!;
        out[m.name] = { state: e.state, sequence: e.sequence };
      }
    return { portfolio: out };
  }

  /** Members stopped alone, and what each threw. */
  get failed(): ReadonlyMap<string, string> {
    return this.#failed;
  }

  /**
   * The intents that close a member's book: a close of its position in every instrument it holds
   * (its own execution turns it into tagged reduce-only orders for its units) and a cancel of every
   * pending entry order of it. Sent through its own execution, so they are its, tagged and journaled.
   */
  closeBook(name: string, runId: string): number {
    const host = this.host;
    const own = host?.executions.get(name);
    if (host === undefined || own === undefined) return 0;
    const ledger = own.book.portfolio.ledger;
    let k = 0;
    const id = (): string => `${name}-${runId}-stopped-${++k}`;
    const intents: OrderIntent[] = [];
    for (const o of ledger.pendingOrders.values())
      if (o.tradeID === undefined) intents.push({ kind: 'cancel', id: id(), orderSpecifier: o.id });
    const instruments = new Set<string>();
    for (const t of ledger.trades.values()) instruments.add(t.instrument);
    for (const instrument of instruments)
      intents.push({ kind: 'closePosition', id: id(), instrument, longUnits: 'ALL', shortUnits: 'ALL' });
    for (const i of intents) own.submit(i);
    return intents.length;
  }

  /** Each member's book now (the status page, the report). */
  views(): BookView[] {
    const host = this.host;
    if (host === undefined) return [];
    return host.books.books.map((b) => viewOf(b, this.#failed.get(b.name)));
  }

  /** A member's own risk gate's limits and refusals (its portfolio entry's `risk`), if it has one. */
  riskOf(name: string): RiskReport | undefined {
    const host = this.host;
    const i = this.#members.findIndex((m) => m.name === name);
    const gate = host?.gates[i] as RiskExecution | undefined;
    const limits = this.#members[i]?.limits;
    return gate === undefined || limits === undefined
      ? undefined
      : { limits: activeLimits(limits), refused: gate.refused };
  }

  /** Each member's book, for the summary's `strategies`. */
  get books(): readonly Book[] {
    return this.host?.books.books ?? [];
  }
}

function viewOf(b: Book, failed: string | undefined): BookView {
  const positions: Record<string, number> = {};
  const trades: { id: string; instrument: string; units: number }[] = [];
  for (const t of b.portfolio.ledger.trades.values()) {
    trades.push({ id: t.id, instrument: t.instrument, units: t.unitsNum });
    positions[t.instrument] = (positions[t.instrument] ?? 0) + t.unitsNum;
  }
  for (const k of Object.keys(positions)) if (positions[k] === 0) delete positions[k];
  let pendingOrders = 0;
  for (const o of b.portfolio.ledger.pendingOrders.values()) if (o.tradeID === undefined) pendingOrders++;
  return { name: b.name, positions, trades, pendingOrders, ...(failed !== undefined ? { failed } : {}) };
}

/**
 * The strategy with every handler guarded: the first throw is told to `failed` and from then on no
 * handler of it is called (it is stopped alone; its engine still folds its book's transactions).
 */
export function isolated(
  base: Strategy<Params, unknown>,
  failed: (error: unknown) => void,
): Strategy<Params, unknown> {
  let down = false;
  type Handler = (ctx: never, s: unknown) => Step<unknown>;
  const guard = (h: Handler | undefined): Handler | undefined =>
    h === undefined
      ? undefined
      : (ctx, s) => {
          if (down) return undefined;
          try {
            return h(ctx, s);
          } catch (e) {
            down = true;
            failed(e);
            return undefined;
          }
        };
  const out: Record<string, unknown> = { ...base };
  for (const k of HANDLER_NAMES) {
    const g = guard(base[k] as Handler | undefined);
    if (g !== undefined) out[k] = g;
  }
  return out as unknown as Strategy<Params, unknown>;
}

/**
 * The start of a run checked against its journal and the account, before anything is restored:
 * - a portfolio's journal (its baseline names the members) goes on only with a portfolio that
 *   still has every member it names (a member's book and state would otherwise be folded into the
 *   others'), and a single strategy's journal only with a single strategy; a member added is a new
 *   book, empty;
 * - a portfolio's first start (no journal baseline yet) on an account that holds open trades or
 *   pending entry orders is refused: no strategy of the portfolio opened them, so no book could hold
 *   them, and closing them would land in someone's book (`--broker sim` starts empty: not checked).
 */
export function checkPortfolioStart(
  o: RunnerOptions,
  account: Account,
  journal: { readonly members?: readonly string[] } | undefined,
  broker: 'v20' | 'sim',
): void {
  const members = o.members?.map((m) => m.name);
  const dir = o.journalDir;
  if (journal !== undefined) {
    const was = journal.members;
    if (was === undefined && members === undefined) return;
    const fix = `give this run its own --journal (or run what wrote it: ${was === undefined ? 'one strategy' : `the portfolio ${was.join(', ')}`})`;
    if (was === undefined)
      throw new RunnerError(
        'RUNNER',
        `journal ${dir} is a single strategy's, and this run is a portfolio (${members!.join(', ')}): ${fix}`,
      );
    if (members === undefined)
      throw new RunnerError(
        'RUNNER',
        `journal ${dir} is the portfolio's of ${was.join(', ')}, and this run is one strategy (${o.name}): ${fix}`,
      );
    const missing = was.filter((n) => !members.includes(n));
    if (missing.length > 0)
      throw new RunnerError(
        'RUNNER',
        `journal ${dir} is the portfolio's of ${was.join(', ')}, and this run lacks ${missing.join(', ')}: each strategy's book and state are kept by name, so a strategy cannot leave (or be renamed in) a portfolio whose journal goes on. Run it with ${missing.length === 1 ? 'that strategy' : 'those strategies'} again (its trades are still its), or start afresh with --new-journal once the account holds none of ${missing.length === 1 ? 'its' : 'their'} trades`,
      );
    return;
  }
  if (members === undefined || broker === 'sim') return;
  const trades = account.trades?.length ?? 0;
  const orders = (account.orders ?? []).filter(
    (x) => (x as { tradeID?: string }).tradeID === undefined,
  ).length;
  if (trades === 0 && orders === 0) return;
  throw new RunnerError(
    'RUNNER',
    `account ${o.accountID} holds ${trades} open trade(s) and ${orders} pending entry order(s) that no strategy of this portfolio (${members.join(', ')}) opened: a portfolio run starts on an account with nothing open, so that every trade is one strategy's. Close them first, or run the portfolio on an account (a sub-account) of its own`,
  );
}
