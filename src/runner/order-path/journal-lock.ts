// The journal's lock (journal.lock: one live process a journal) and the journal's errors.
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

const LOCK = 'journal.lock';

/** A journal that cannot be opened or written (a broken file, a full disk). */
export class JournalError extends Error {
  readonly code = 'JOURNAL' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JournalError';
  }
}

/** Another live process holds the journal: a second runner refuses to start. */
export class JournalLockedError extends JournalError {
  constructor(
    readonly lockFile: string,
    readonly holder: LockHolder,
    message: string,
  ) {
    super(message);
    this.name = 'JournalLockedError';
  }
}

/** Who holds a journal: written into its lock file. */
export interface LockHolder {
  readonly pid: number;
  /** The process's start time (field 22 of /proc/<pid>/stat, clock ticks since boot), when known. */
  readonly start?: string;
  readonly host: string;
  /** A random token: tells this holder from a copy of its lock file. */
  readonly token: string;
  /** Epoch ms when the lock was taken. */
  readonly since: number;
}

/** Lock files this process holds (path → token). */
const heldLocks = new Map<string, string>();

/** A process's start time from /proc (Linux), or undefined where there is no /proc. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces and parentheses): state is field 3, starttime field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Why a lock file does not (any more) hold its journal, or undefined when its holder is alive.
 * The holder is alive when its pid exists and (where /proc tells) started at the recorded time: a
 * pid reused by another process after a `kill -9` has another start time.
 */
function staleReason(h: LockHolder, path: string): string | undefined {
  if (h.host !== hostname()) return undefined; // another machine: its processes cannot be checked from here
  if (h.pid === process.pid)
    return heldLocks.get(path) === h.token ? undefined : 'a copy of a lock of this process';
  if (!processAlive(h.pid)) return `process ${h.pid} is gone`;
  const now = processStart(h.pid);
  if (h.start !== undefined && now !== undefined && now !== h.start)
    return `pid ${h.pid} now belongs to another process (started at tick ${now}, the holder at ${h.start})`;
  return undefined;
}

/**
 * Takes the journal lock of `dir`: `journal.lock`, created exclusively (O_EXCL) with the holder's
 * pid, process start time, host and a random token. Node has no flock(2); this lock dies with its
 * process in effect: a lock whose pid is gone, or whose pid now names a process with another start
 * time (a reused pid), is stale and taken over, so a `kill -9` never leaves a journal locked. A
 * stale lock is first renamed to a name of this process alone (only one of several racing
 * processes can rename it) and checked to be the one judged stale before it is removed.
 */
export function acquireLock(dir: string): { path: string; token: string } {
  const path = join(dir, LOCK);
  const me: LockHolder = {
    pid: process.pid,
    ...(processStart(process.pid) !== undefined ? { start: processStart(process.pid)! } : {}),
    host: hostname(),
    token: randomUUID(),
    since: Date.now(),
  };
  const body = `${JSON.stringify(me)}\n`;
  for (let attempt = 0; attempt < 5; attempt++) {
    // Written to a private file first, then linked into place: the lock never exists half-written.
    const tmp = join(dir, `${LOCK}.${process.pid}.${me.token.slice(0, 8)}`);
    const fd = openSync(tmp, 'w', 0o644);
    try {
      writeSync(fd, body);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
      unlinkSync(tmp);
      heldLocks.set(path, me.token);
      return { path, token: me.token };
    } catch (e) {
      unlinkSync(tmp);
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue; // released meanwhile: try again
    }
    let holder: LockHolder;
    try {
      holder = JSON.parse(text) as LockHolder;
      if (typeof holder.pid !== 'number') throw new Error('no pid');
    } catch {
      throw new JournalError(
        `journal ${dir}: its lock file ${path} is not one fxflow wrote (${JSON.stringify(text.slice(0, 80))}); if no fxflow run uses this journal, delete the lock file`,
      );
    }
    const stale = staleReason(holder, path);
    if (stale === undefined) {
      const who =
        holder.pid === process.pid
          ? `this process (pid ${holder.pid})`
          : holder.host !== hostname()
            ? `pid ${holder.pid} on host ${holder.host} (it cannot be checked from ${hostname()}; if that run is gone, delete ${path})`
            : `pid ${holder.pid}`;
      throw new JournalLockedError(
        path,
        holder,
        `journal ${dir} is in use by ${who} since ${new Date(holder.since).toISOString()}: one journal, one runner. Stop that run first, or give this one another --journal`,
      );
    }
    const aside = `${path}.stale.${process.pid}`;
    try {
      renameSync(path, aside);
    } catch {
      continue; // another process took it over first
    }
    if (readFileSync(aside, 'utf8') !== text) {
      // It was replaced by a live holder between the check and the rename: put it back.
      try {
        linkSync(aside, path);
      } catch {
        // A third process took the lock meanwhile: the next attempt sees it.
      }
    }
    unlinkSync(aside);
  }
  throw new JournalError(
    `journal ${dir}: could not take its lock ${path} after 5 attempts (other processes keep taking it)`,
  );
}

export function releaseLock(lock: { path: string; token: string }): void {
  if (heldLocks.get(lock.path) !== lock.token) return;
  heldLocks.delete(lock.path);
  try {
    if ((JSON.parse(readFileSync(lock.path, 'utf8')) as LockHolder).token === lock.token)
      unlinkSync(lock.path);
  } catch {
    // Gone already.
  }
}
