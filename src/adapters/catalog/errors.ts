/**
 * A data file that cannot be read as candles or ticks. The message names the file, the 1-based
 * line and the column, says what was found, and how to fix it.
 */
export class DataError extends Error {
  readonly code = 'DATA' as const;
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: string,
    problem: string,
  ) {
    super(`${file}${line > 0 ? `:${line}` : ''}${column ? ` (${column})` : ''}: ${problem}`);
    this.name = 'DataError';
  }
}
