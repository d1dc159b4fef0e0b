/**
 * A runner that cannot start (no account, a journal of another account, live without consent). In
 * a module of its own so that the CLI checks its flags without loading the runner.
 */
export class RunnerError extends Error {
  readonly code: 'RUNNER' | 'RUNNER_LIVE_UNCONFIRMED';
  constructor(code: RunnerError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'RunnerError';
  }
}
