import { spawn } from 'node:child_process';

/** The desktop's opener of files and URLs on this platform, and its arguments for `target`. */
function opener(target: string): { cmd: string; args: string[] } {
  if (process.platform === 'darwin') return { cmd: 'open', args: [target] };
  if (process.platform === 'win32') return { cmd: 'cmd', args: ['/c', 'start', '', target] };
  return { cmd: 'xdg-open', args: [target] };
}

/**
 * Opens a file or URL in the user's browser (the one opener of every command: `report --open`,
 * `compare --open`, `auth login`). Resolves to undefined once the opener has handed it over, or to
 * why it could not: no opener installed, or the opener's failure (its exit code and first line of
 * error), so the caller can say so instead of failing silently. An opener still running after
 * `waitMs` (one that keeps the browser in the foreground) counts as having opened it.
 */
export function openInBrowser(target: string, waitMs = 5_000): Promise<string | undefined> {
  const { cmd, args } = opener(target);
  return new Promise((done) => {
    let err = '';
    let child;
    try {
      child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    } catch (e) {
      done(`could not start ${cmd} (${(e as Error).message})`);
      return;
    }
    const timer = setTimeout(() => {
      child.stderr?.destroy();
      child.unref();
      done(undefined);
    }, waitMs);
    child.stderr?.on('data', (b: Buffer) => {
      if (err.length < 2000) err += b.toString('utf8');
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done(
        e.code === 'ENOENT'
          ? `${cmd} is not installed (no desktop opener)`
          : `could not start ${cmd} (${e.message})`,
      );
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      const first = err.trim().split('\n')[0];
      done(code === 0 ? undefined : `${cmd} exited ${code ?? 'on a signal'}${first ? `: ${first}` : ''}`);
    });
  });
}
