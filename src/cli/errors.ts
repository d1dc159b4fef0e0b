import { isOwnCode } from '../domain/package-root.ts';

/**
 * Turns any error into the one message a user sees. Errors raised at fxflow's boundaries carry a
 * literal `code` and a message that already names the file, field or line and how to fix it: they
 * are printed as they are. A strategy's error (code STRATEGY) also says where in the strategy it was
 * thrown. Anything else is an internal error: its message is printed with a hint, and the stack only
 * with FXFLOW_DEBUG=1.
 */
export function describeError(e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as { code?: unknown }).code;
  const known = typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code);
  const debug = process.env.FXFLOW_DEBUG === '1';
  const chain: string[] = [];
  let said = err.message;
  let cause = (err as { cause?: unknown }).cause;
  while (cause instanceof Error && chain.length < 3) {
    // A cause whose message the error already quotes is not said twice.
    if (!said.includes(cause.message)) chain.push(`  caused by: ${cause.message}`);
    said = cause.message;
    cause = (cause as { cause?: unknown }).cause;
  }
  // A strategy's own error: where in the strategy it was thrown (its first stack frame).
  const thrown = code === 'STRATEGY' ? (err as { cause?: unknown }).cause : undefined;
  const where = thrown instanceof Error && !debug ? strategyFrame(thrown.stack ?? '') : undefined;
  if (where !== undefined)
    chain.push(`  ${where}`, '  (the strategy has to be fixed; FXFLOW_DEBUG=1 prints the whole stack)');
  if (debug && thrown instanceof Error && thrown.stack) chain.push(thrown.stack);
  if (known)
    return [`fxflow: ${err.message}`, ...chain, ...(debug && err.stack ? [err.stack] : [])].join('\n');
  return [
    `fxflow: internal error: ${err.message}`,
    ...chain,
    debug && err.stack
      ? err.stack
      : '(run again with FXFLOW_DEBUG=1 to see where it happened, and report it)',
  ].join('\n');
}

/**
 * The stack frame to show for a strategy's error: the first one in the strategy module, else the
 * first. A strategy module tsx compiled runs from a `data:` URL that carries the file's path
 * (`filePath=`); the frame is shown with that path (its line and column are of the compiled code).
 * One run from the compiled-strategy cache has its source map: its frames name the file and line.
 */
export function strategyFrame(stack: string): string | undefined {
  const frames = stack
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .map((l) => l.trim());
  for (const f of frames) {
    const m = /^at (?:(.+?) \()?data:text\/javascript,.*[?&]filePath=([^:)&]+)/.exec(f);
    if (m) {
      const file = decodeURIComponent(m[2]!).replace(/\?namespace=.*$/, '');
      return m[1] !== undefined ? `at ${m[1]} (${file})` : `at ${file}`;
    }
  }
  // A strategy file run as itself: the first frame outside fxflow's own code (a check in
  // src/engine/context.ts is not where the strategy went wrong), Node's internals and packages.
  const ours = (f: string): boolean =>
    isOwnCode(f) || /\(node:|\bnode:internal|[\\/]node_modules[\\/]/.test(f);
  return frames.find((f) => !ours(f)) ?? frames[0];
}
