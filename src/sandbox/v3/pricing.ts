/** The /v3 pricing routes: current prices (with home conversions) and the price stream. */
import { formatTime, parseRequestTime } from '../../domain/time.ts';
import { A, HttpError, ok, type On, type V3Context } from './context.ts';

/** Mounts the pricing routes (the price stream included) on `on`. */
export function pricingRoutes(c: V3Context, on: On): void {
  const { account, instruments, priceJSON, openStream, priceStreams, streamWrite } = c;
  const instrumentsParam = (url: URL): string[] => {
    const text = url.searchParams.get('instruments');
    if (text === null || text === '')
      throw new HttpError(
        400,
        "Invalid value specified for 'instruments': give a comma-separated list, e.g. instruments=EUR_USD,USD_JPY",
        'INVALID_INSTRUMENTS',
      );
    const list = text.split(',');
    for (const n of list)
      if (!instruments.has(n))
        throw new HttpError(
          400,
          `Invalid value specified for 'instruments': unknown instrument '${n}'`,
          'INVALID_INSTRUMENT',
        );
    return list;
  };
  on('GET', `${A}/pricing`, (r, [id]) => {
    const a = account(id);
    const list = instrumentsParam(r.url);
    const sinceText = r.url.searchParams.get('since');
    let since = -Infinity;
    if (sinceText !== null) {
      since = /^\d+(\.\d+)?$/.test(sinceText) ? Number(sinceText) * 1000 : parseRequestTime(sinceText);
      if (!Number.isFinite(since))
        throw new HttpError(
          400,
          `Invalid value specified for 'since': ${sinceText} (RFC 3339 or UNIX seconds)`,
        );
    }
    // since: only prices that changed after that time.
    const prices = list
      .filter((n) => (c.quoteTime(n) ?? -Infinity) > since)
      .map((n) => priceJSON(a, n))
      .filter((p) => p !== undefined);
    const body: Record<string, unknown> = { prices, time: formatTime(c.now()) };
    if (r.url.searchParams.get('includeHomeConversions') === 'true') {
      const currencies = new Set<string>();
      for (const i of instruments.list()) {
        currencies.add(i.base);
        currencies.add(i.quote);
      }
      body.homeConversions = [...currencies]
        .sort()
        .map((c) => a.homeConversion(c))
        .filter((x) => x !== undefined);
    }
    return ok(body);
  });
  on('GET', `${A}/pricing/stream`, (r, [id]) => {
    const a = account(id);
    const list = instrumentsParam(r.url);
    const conn = openStream(r.res);
    const s = { conn, account: a, instruments: new Set(list), unix: r.unix };
    priceStreams.add(s);
    r.res.on('close', () => priceStreams.delete(s));
    // OANDA starts a price stream with the current price of each instrument (snapshot=false: not).
    for (const n of r.url.searchParams.get('snapshot') === 'false' ? [] : list) {
      const body = priceJSON(a, n);
      if (body && !streamWrite(conn, body, r.unix)) {
        priceStreams.delete(s);
        break;
      }
    }
    return 'stream';
  });
}
