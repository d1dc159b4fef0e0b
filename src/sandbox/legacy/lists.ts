/**
 * The legacy generation's lists (orders, trades, transactions): their query (`ids` alone, or
 * `maxId` / `minId` / `count` / `instrument`), newest first, in pages with a `Link` to the next and
 * `X-Result-Count`; and the bounded scan of the v20 log that legacy transaction lists read.
 */
import type { SandboxReply } from '../route.ts';
import { LegacyError, type LegacyContext, type Obj } from './common.ts';
import { legacyTransaction, type LegacyTxContext } from './shapes.ts';

/** count: default and maximum; ids: at most this many. */
export const DEFAULT_COUNT = 50;
const MAX_COUNT = 500;
export const MAX_IDS = 50;

/** The query of a list. */
export interface ListQuery {
  readonly ids?: Set<number>;
  readonly maxId?: number;
  readonly minId?: number;
  readonly count: number;
  readonly instrument?: string;
}

/** Query parameters of a list: ids alone (at most 50), else maxId / minId / count / instrument; `allowed` names the ones this list takes. */
export function listQuery(ctx: LegacyContext, url: URL, allowed: readonly string[]): ListQuery {
  const q = url.searchParams;
  for (const k of q.keys())
    if (!allowed.includes(k))
      throw new LegacyError(
        400,
        `Invalid argument: '${k}' (this list takes ${allowed.join(', ')})`,
        'INVALID_ARGUMENT',
      );
  const idsText = q.get('ids');
  if (idsText !== null) {
    if ([...q.keys()].some((k) => k !== 'ids'))
      throw new LegacyError(
        400,
        "Invalid argument: 'ids' cannot be combined with other parameters (give ids alone)",
        'INVALID_ARGUMENT',
      );
    const list = idsText.split(',').filter((s) => s !== '');
    if (list.length === 0 || list.length > MAX_IDS || list.some((s) => !/^\d+$/.test(s)))
      throw new LegacyError(
        400,
        `Invalid argument: ids=${idsText} (1 to ${MAX_IDS} comma-separated IDs)`,
        'INVALID_ARGUMENT',
      );
    return { ids: new Set(list.map(Number)), count: MAX_IDS };
  }
  const int = (k: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    const v = q.get(k);
    if (v === null) return undefined;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max)
      throw new LegacyError(
        400,
        `Invalid argument: ${k}=${v} (a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''})`,
        'INVALID_ARGUMENT',
      );
    return n;
  };
  const out: { maxId?: number; minId?: number; count: number; instrument?: string } = {
    count: int('count', 1, MAX_COUNT) ?? DEFAULT_COUNT,
  };
  const maxId = int('maxId', 1);
  if (maxId !== undefined) out.maxId = maxId;
  const minId = int('minId', 1);
  if (minId !== undefined) out.minId = minId;
  const instrument = q.get('instrument');
  if (instrument !== null) {
    if (!ctx.instruments.has(instrument))
      throw new LegacyError(
        400,
        `Invalid argument: instrument=${instrument} is not a known instrument`,
        'INVALID_INSTRUMENT',
      );
    out.instrument = instrument;
  }
  return out;
}

/** A descending page of a list: at most `count`, Link with the next maxId, X-Result-Count. */
export function page(
  ctx: LegacyContext,
  key: string,
  all: Obj[],
  url: URL,
  allowed: readonly string[],
): SandboxReply {
  const q = listQuery(ctx, url, allowed);
  let list = all;
  if (q.ids) list = list.filter((x) => q.ids!.has(x.id as number));
  if (q.maxId !== undefined) list = list.filter((x) => (x.id as number) <= q.maxId!);
  if (q.minId !== undefined) list = list.filter((x) => (x.id as number) >= q.minId!);
  if (q.instrument !== undefined) list = list.filter((x) => x.instrument === q.instrument);
  return pageReply(ctx, key, list.slice(0, q.count + 1), q.count, url);
}

/** The answer of one page of `items` (one more than `count` when there are more). `unscanned`: the page stopped at the scan budget; the next one starts at this ID. */
export function pageReply(
  ctx: LegacyContext,
  key: string,
  items: Obj[],
  count: number,
  url: URL,
  unscanned?: number,
): SandboxReply {
  const headers: Record<string, string> = {};
  const more = items.length > count;
  const shown = items.slice(0, count);
  const nextID = more ? (items[count]!.id as number) : unscanned;
  if (nextID !== undefined) {
    const next = new URL(url.pathname + url.search, ctx.baseUrl());
    next.searchParams.set('maxId', String(nextID));
    headers.Link = `<${next.href}>; rel="next"`;
  }
  headers['X-Result-Count'] = String(shown.length);
  return { status: 200, body: { [key]: shown }, headers };
}

/**
 * Legacy transactions of an account, newest first, from `hi` down to `lo`, at most `limit`, looking
 * at no more than `scan` v20 transactions. `next` is the first ID not looked at when the scan
 * budget ran out first (a sparse filter over a long log), else undefined.
 */
export function transactionsScan(
  c: LegacyTxContext,
  hi: number,
  lo: number,
  limit: number,
  keep: (t: Obj) => boolean,
  scan = Number.MAX_SAFE_INTEGER,
): { list: Obj[]; next?: number } {
  const log = c.account.transactions;
  const out: Obj[] = [];
  const bottom = Math.max(lo, log.oldestID);
  let id = Math.min(hi, log.lastID);
  for (let seen = 0; id >= bottom && out.length < limit; id--, seen++) {
    if (seen >= scan) return { list: out, next: id };
    const t = legacyTransaction(c, log.get(id)!);
    if (t && keep(t)) out.push(t);
  }
  return { list: out };
}
