// The Redis side of a sweep's queue (queue.ts): the queue's URL, the connection that says when it is
// lost, the server's version check, and the errors a queue problem is said with.
import { Redis } from 'ioredis';

/** A queue problem, said once: Redis unreachable or too old, a queue busy with another sweep, a worker with other data. */
export class QueueError extends Error {
  readonly code = 'QUEUE' as const;
}

/** The oldest Redis BullMQ 5 supports. */
export const MIN_REDIS = '5.0.0';

export interface QueueTarget {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username?: string;
  readonly password?: string;
  /** The BullMQ queue's name (`?name=` in the URL; default `fxflow`). */
  readonly name: string;
}

/** `redis://[user:password@]HOST[:PORT][/DB][?name=QUEUE]`. */
export function parseQueueUrl(url: string): QueueTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new QueueError(
      `--queue ${url}: not a URL; give redis://HOST:PORT/DB (e.g. redis://127.0.0.1:6379/0)`,
    );
  }
  if (u.protocol !== 'redis:')
    throw new QueueError(`--queue ${url}: the scheme must be redis:// (got ${u.protocol}//)`);
  const dbText = u.pathname.replace(/^\//, '') || '0';
  const db = Number(dbText);
  if (!Number.isInteger(db) || db < 0 || db > 15)
    throw new QueueError(`--queue ${url}: the database must be a number from 0 to 15 (got '${dbText}')`);
  const port = u.port ? Number(u.port) : 6379;
  const name = u.searchParams.get('name') ?? 'fxflow';
  if (!/^[A-Za-z0-9_.-]+$/.test(name))
    throw new QueueError(
      `--queue ${url}: the queue name '${name}' may hold letters, digits, '_', '.' and '-' only`,
    );
  return {
    url,
    host: u.hostname || '127.0.0.1',
    port,
    db,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    name,
  };
}

/** How long, by default, a coordinator or worker keeps trying to reach Redis again after losing it (ms). */
export const RECONNECT_MS = 20_000;

/** The wait before reconnect attempt `n` (1, 2, …): 100 ms, 200 ms, … up to 1 s. */
const retryDelay = (n: number): number => Math.min(100 * n, 1000);

/**
 * One side's connection to Redis, shared by every client it opens (BullMQ opens several: the
 * queue, its event stream, a worker's blocking connection). Each client that loses the server
 * retries on a bounded schedule: once the delays of its attempts add up to `reconnectMs` without
 * reaching the server again, it gives up, and the link is lost: `lost` resolves once with the
 * reason, so the coordinator or worker stops with one message instead of waiting forever. The
 * schedule counts the attempts' delays, not the wall clock; a client that reconnects starts over.
 */
export class RedisLink {
  #lastError: string | undefined;
  #resolveLost: (reason: string) => void = () => {};
  #isLost = false;
  readonly #onLose: (() => void)[] = [];
  /** Resolves (once) with the last connection error when a client gives up reaching Redis. */
  readonly lost: Promise<string>;

  constructor(
    readonly target: QueueTarget,
    readonly reconnectMs: number = RECONNECT_MS,
  ) {
    this.lost = new Promise((resolve) => (this.#resolveLost = resolve));
  }

  get isLost(): boolean {
    return this.#isLost;
  }

  /** Notes a client's connection error (the reason given when the link is lost). */
  readonly noteError = (e: Error): void => {
    this.#lastError = (e as NodeJS.ErrnoException).code ?? (e.message || String(e));
  };

  /** ioredis' retryStrategy: the delay before attempt `times`, or null (give up) when the bound is reached. */
  readonly retryStrategy = (times: number): number | null => {
    let spent = 0;
    for (let n = 1; n < times; n++) spent += retryDelay(n);
    if (this.#isLost || spent >= this.reconnectMs) {
      this.lose();
      return null;
    }
    return retryDelay(times);
  };

  /**
   * Runs `f` at the moment the link is lost, before the clients fail what they hold: a BullMQ
   * object closed then does not wait (BullMQ pauses 5 s after a failed command unless closing).
   */
  onLose(f: () => void): void {
    this.#onLose.push(f);
  }

  /** Declares the link lost (also called by the bound above). */
  lose(reason?: string): void {
    if (this.#isLost) return;
    this.#isLost = true;
    const why = reason ?? this.#lastError ?? 'connection closed';
    for (const f of this.#onLose) f();
    this.#resolveLost(why);
  }

  /** The options of every client on this link. */
  connection(): {
    host: string;
    port: number;
    db: number;
    username?: string;
    password?: string;
    maxRetriesPerRequest: null;
    retryStrategy: (times: number) => number | null;
  } {
    const t = this.target;
    return {
      host: t.host,
      port: t.port,
      db: t.db,
      ...(t.username ? { username: t.username } : {}),
      ...(t.password ? { password: t.password } : {}),
      maxRetriesPerRequest: null,
      retryStrategy: this.retryStrategy,
    };
  }
}

/** A connection error (the server went away or cannot be reached), as opposed to an error in BullMQ's own work. */
export function isConnectionError(e: Error): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  if (
    code &&
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/.test(code)
  )
    return true;
  return /Connection is closed|connect ETIMEDOUT|ECONNREFUSED|ECONNRESET|socket closed|Stream isn't writeable/i.test(
    e.message,
  );
}

/** The QueueError of a lost link: which server, why, and since when nothing answered. */
export class QueueLostError extends QueueError {
  constructor(
    readonly where: string,
    readonly reason: string,
    readonly reconnectMs: number,
  ) {
    super(
      `lost Redis at ${where} (${reason}) and could not reach it again in ${(reconnectMs / 1000).toFixed(reconnectMs % 1000 ? 1 : 0)} s`,
    );
  }
}

export const where = (t: QueueTarget): string => `redis://${t.host}:${t.port}/${t.db}`;

/** The queue as it may be printed: no user or password. */
export function describeQueue(url: string): string {
  return describeQueueTarget(parseQueueUrl(url));
}

export const describeQueueTarget = (t: QueueTarget): string =>
  `${where(t)}${t.name === 'fxflow' ? '' : `?name=${t.name}`}`;

const older = (a: string, b: string): boolean => {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) < (pb[i] ?? 0);
  return false;
};

/**
 * Connects once, with no retry, and checks the server: unreachable, refusing the password, or
 * older than BullMQ supports is one QueueError. Returns a client for the manifest.
 */
export async function openRedis(t: QueueTarget): Promise<Redis> {
  const client = new Redis({
    ...new RedisLink(t).connection(),
    lazyConnect: true,
    connectTimeout: 5000,
    retryStrategy: () => null,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  let lastError: Error | undefined;
  client.on('error', (e: Error) => (lastError = e)); // reported below, once
  try {
    await client.connect();
    const info = await client.info('server');
    const version = /redis_version:([0-9.]+)/.exec(info)?.[1] ?? '0.0.0';
    if (older(version, MIN_REDIS))
      throw new QueueError(
        `${where(t)} runs Redis ${version}; BullMQ needs Redis ${MIN_REDIS} or newer: upgrade it or point --queue at another server`,
      );
    return client;
  } catch (e) {
    client.disconnect();
    if (e instanceof QueueError) throw e;
    const err = lastError ?? (e as Error);
    const msg = (err as NodeJS.ErrnoException).code ?? (err.message || String(err));
    throw new QueueError(
      `cannot reach Redis at ${where(t)} (${msg}): start it, or check the host, port and password in --queue`,
    );
  }
}
