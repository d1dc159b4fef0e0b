/**
 * Pluggable routes for the local v20 sandbox. Modules such as the Labs and OAuth emulations export a
 * `SandboxRoute`; the sandbox server tries each mounted route before its own v20 endpoints.
 */

import { formatUnixTime, parseTime } from '../domain/time.ts';

const TIME_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** JSON of a reply body or stream line, with every RFC 3339 time rewritten as UNIX seconds when `unix` (Accept-Datetime-Format: UNIX). */
export function toJSON(body: unknown, unix: boolean): string {
  if (!unix) return JSON.stringify(body);
  return JSON.stringify(body, (_k, v: unknown) =>
    typeof v === 'string' && TIME_TEXT.test(v) ? formatUnixTime(parseTime(v)) : v,
  );
}

/** What a route answers: an HTTP status, an optional JSON body and extra headers. */
export interface SandboxReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Bytes to send as they are instead of a JSON body (e.g. a zip file); set Content-Type in headers. */
  raw?: Buffer;
}

/** Returns a reply when the route handles the request, undefined to let others try. */
export type SandboxRoute = (req: {
  method: string;
  url: URL;
  headers: Record<string, string | undefined>;
  body: unknown;
}) => SandboxReply | undefined | Promise<SandboxReply | undefined>;
