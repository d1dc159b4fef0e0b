/**
 * Turns any error into the one message a user sees. Errors raised at fxflow's boundaries carry a
 * literal `code` and a message that already names the file, field or line and how to fix it: they
 * are printed as they are. Anything else is an internal error: its message is printed with a hint,
 * and the stack only with FXFLOW_DEBUG=1.
 */
export function describeError(e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as { code?: unknown }).code;
  const known = typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code);
  const debug = process.env.FXFLOW_DEBUG === '1';
  const chain: string[] = [];
  let cause = (err as { cause?: unknown }).cause;
  while (cause instanceof Error && chain.length < 3) {
    chain.push(`  caused by: ${cause.message}`);
    cause = (cause as { cause?: unknown }).cause;
  }
  if (known) return [`fxflow: ${err.message}`, ...chain, ...(debug && err.stack ? [err.stack] : [])].join('\n');
  return [
    `fxflow: internal error: ${err.message}`,
    ...chain,
    debug && err.stack ? err.stack : '(run again with FXFLOW_DEBUG=1 to see where it happened, and report it)',
  ].join('\n');
}
