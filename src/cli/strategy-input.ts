// The strategies a command runs, as the command line gives them: one module, several (a
// portfolio on one account), or a --portfolio file (docs/portfolios.md).
import { resolve } from 'node:path';
import { readPortfolioFile, type PortfolioEntry } from '../app/portfolio.ts';

/**
 * What `fxflow backtest` (and `run`, `optimize`) runs: one strategy file, or a portfolio (several
 * files, each entry named by its strategy; or a --portfolio file). --param applies to one strategy
 * only: a portfolio's params are its file's. `command` names the command in the advice.
 */
export function strategyInput(
  files: readonly string[],
  portfolio: string | undefined,
  params: readonly (string | number)[] | undefined,
  command = 'backtest',
): string | { portfolio: PortfolioEntry[]; label: string } {
  if (portfolio !== undefined && files.length > 0)
    throw new UsageError(
      'give strategy files or --portfolio <file>, not both (list every strategy in the portfolio file)',
    );
  if (portfolio !== undefined || files.length > 1) {
    if ((params ?? []).length > 0)
      throw new UsageError(
        "--param sets one strategy's params: in a portfolio give each entry its params in a --portfolio file",
      );
    if (portfolio !== undefined) return { portfolio: readPortfolioFile(portfolio), label: portfolio };
    return { portfolio: files.map((f) => ({ module: resolve(f) })), label: files.join(' ') };
  }
  if (files.length === 0)
    throw new UsageError(
      `give a strategy module (fxflow ${command} strategies/sma-cross.ts) or --portfolio <file>`,
    );
  return files[0]!;
}

/** A mistake on the command line (exit 64, as main.ts's UsageError). */
export class UsageError extends Error {
  readonly code = 'USAGE' as const;
}
