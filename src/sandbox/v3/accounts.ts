/** The /v3 account routes: the list, details, summary, instruments, configuration, changes; and candles. */
import { candlesReply } from '../candles.ts';
import { tradeSummary, type SandboxAccount } from '../account.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { A, HttpError, objectBody, ok, type Handler, type On, type V3Context } from './context.ts';
import { tooOld } from './transactions.ts';

/** /changes serves at most this many transactions; an older sinceTransactionID is a 416. */
const MAX_CHANGES = 500;

/** Mounts the account routes on `on`. */
export function accountRoutes(c: V3Context, on: On): void {
  const { account, accounts, instruments, financing, faults, catalog } = c;
  on('GET', '/v3/accounts', () => ok({ accounts: [...accounts.keys()].map((id) => ({ id, tags: [] })) }));
  on('GET', A, (_r, [id]) => {
    const a = account(id);
    return ok({ account: a.full(), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/summary`, (_r, [id]) => {
    const a = account(id);
    return ok({ account: a.summary(), lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/instruments`, (r, [id]) => {
    const a = account(id);
    const want = r.url.searchParams.get('instruments');
    const list = want !== null ? want.split(',').map((n) => instruments.get(n)) : instruments.list();
    return ok({
      instruments: list.map((i) =>
        wireInstrument(i.wire as unknown as Record<string, unknown>, financing.get(i.name)),
      ),
      lastTransactionID: a.broker.ledger.lastTransactionID,
    });
  });
  on('PATCH', `${A}/configuration`, (r, [id]) => {
    const a = account(id);
    const b = objectBody(r.body, 'the body');
    const fields: { alias?: string; marginRate?: string } = {};
    if (b.alias !== undefined) {
      if (typeof b.alias !== 'string')
        throw new HttpError(400, "Invalid value specified for 'alias': must be a string");
      fields.alias = b.alias;
    }
    if (b.marginRate !== undefined) {
      if (
        typeof b.marginRate !== 'string' ||
        !/^\d+(\.\d+)?$/.test(b.marginRate) ||
        !(Number(b.marginRate) > 0 && Number(b.marginRate) <= 1)
      ) {
        throw new HttpError(
          400,
          'Invalid value specified for \'marginRate\': a decimal string in (0, 1], e.g. "0.05"',
          'INVALID_MARGIN_RATE',
        );
      }
      fields.marginRate = b.marginRate;
    }
    if (fields.alias === undefined && fields.marginRate === undefined)
      throw new HttpError(400, "Invalid request body: give 'alias' and/or 'marginRate'");
    const txs = a.configure(fields);
    return ok({ clientConfigureTransaction: txs[0], lastTransactionID: a.broker.ledger.lastTransactionID });
  });
  on('GET', `${A}/changes`, (r, [id]) => {
    const a = account(id);
    const since = Number(r.url.searchParams.get('sinceTransactionID') ?? 'NaN');
    if (!Number.isInteger(since) || since < 0)
      throw new HttpError(
        400,
        "Invalid value specified for 'sinceTransactionID': give a transaction ID",
        'INVALID_TRANSACTION_ID',
      );
    const log = a.transactions;
    if (since < log.oldestID - 1) throw tooOld(a, since, 'sinceTransactionID');
    if (log.lastID - since > MAX_CHANGES) {
      throw new HttpError(
        416,
        `Invalid value specified for 'sinceTransactionID': ${since} is ${log.lastID - since} transactions behind the last (${log.lastID}); /changes serves at most ${MAX_CHANGES}. Get the account (GET /v3/accounts/${a.id}) and poll from its lastTransactionID, or read the transactions in pages with /transactions/idrange`,
        'INVALID_RANGE',
      );
    }
    const txs = log.range(since + 1, log.lastID);
    const changes = changesOf(a, txs);
    const state: Record<string, unknown> = { ...a.state() };
    // DynamicOrderState: the trailing stops' current values.
    state.orders = a
      .pendingOrders()
      .filter((o) => o.type === 'TRAILING_STOP_LOSS')
      .map((o) => ({
        id: o.id,
        trailingStopValue: o.trailingStopValue,
        triggerDistance: o.distance,
        isTriggerDistanceExact: true,
      }));
    state.trades = a
      .openTrades()
      .map((t) => ({ id: t.id, unrealizedPL: t.unrealizedPL, marginUsed: t.marginUsed }));
    state.positions = a.positions(true).map((p) => ({
      instrument: p.instrument,
      netUnrealizedPL: p.unrealizedPL,
      longUnrealizedPL: (p.long as Record<string, unknown>).unrealizedPL,
      shortUnrealizedPL: (p.short as Record<string, unknown>).unrealizedPL,
      marginUsed: p.marginUsed,
    }));
    return ok({ changes, state, lastTransactionID: a.broker.ledger.lastTransactionID });
  });

  // Instruments: candles
  const candles: Handler = async (r, m) => {
    const instrument = m[m.length - 1]!;
    if (!instruments.has(instrument))
      throw new HttpError(
        400,
        `Invalid value specified for 'instrument': ${instrument}`,
        'INVALID_INSTRUMENT',
      );
    const fault = await faults.candles();
    if (fault) return fault;
    return candlesReply(catalog, instrument, r.url.searchParams, c.now(), faults.candleCompleteLagMs);
  };
  on('GET', '/v3/instruments/{instrument}/candles', candles);
  on('GET', `${A}/instruments/{instrument}/candles`, (r, m) => {
    account(m[0]);
    return candles(r, m);
  });
}

/**
 * The `changes` of GET /changes: orders, trades and positions touched by `txs`, and the transactions.
 * A trade is listed once, by where it ended up: closed, else opened, else reduced.
 */
function changesOf(a: SandboxAccount, txs: readonly Transaction[]): Record<string, unknown> {
  const ordersCreated: unknown[] = [];
  const ordersCancelled: unknown[] = [];
  const ordersFilled: unknown[] = [];
  const opened = new Set<string>();
  const reduced = new Set<string>();
  const closed = new Set<string>();
  const instruments = new Set<string>();
  for (const t of txs) {
    const x = t as Transaction & {
      orderID?: string;
      instrument?: string;
      tradeOpened?: { tradeID: string };
      tradeReduced?: { tradeID: string };
      tradesClosed?: { tradeID: string }[];
    };
    if (t.type.endsWith('_ORDER')) {
      const o = a.findOrder(t.id);
      if (o) ordersCreated.push(o);
    } else if (t.type === 'ORDER_CANCEL') {
      const o = a.findOrder(x.orderID ?? '');
      if (o) ordersCancelled.push(o);
    } else if (t.type === 'ORDER_FILL') {
      const o = a.findOrder(x.orderID ?? '');
      if (o) ordersFilled.push(o);
      if (x.instrument) instruments.add(x.instrument);
      if (x.tradeOpened) opened.add(x.tradeOpened.tradeID);
      if (x.tradeReduced) reduced.add(x.tradeReduced.tradeID);
      for (const c of x.tradesClosed ?? []) closed.add(c.tradeID);
    }
  }
  const tradesOpened: unknown[] = [];
  const tradesReduced: unknown[] = [];
  const tradesClosed: unknown[] = [];
  for (const id of new Set([...opened, ...reduced, ...closed])) {
    const tr = a.tradeBySpec(id);
    if (!tr) continue;
    const s = tradeSummary(tr);
    if (tr.state === 'CLOSED') tradesClosed.push(s);
    else if (opened.has(id)) tradesOpened.push(s);
    else tradesReduced.push(s);
  }
  return {
    ordersCreated,
    ordersCancelled,
    ordersFilled,
    ordersTriggered: [],
    tradesOpened,
    tradesReduced,
    tradesClosed,
    positions: [...instruments].map((i) => a.position(i)),
    transactions: txs,
  };
}

/**
 * The fields of v20's Instrument definition, and `financing` as OANDA's live service added it after
 * 3.0.25 (`longRate`, `shortRate` as decimal strings, `financingDaysOfWeek` with DayOfWeek values
 * `MONDAY`…); data/instruments.json carries more (tradingHours, which is not a v20 field).
 */
const INSTRUMENT_FIELDS = [
  'name',
  'type',
  'displayName',
  'pipLocation',
  'displayPrecision',
  'tradeUnitsPrecision',
  'minimumTradeSize',
  'maximumTrailingStopDistance',
  'minimumTrailingStopDistance',
  'maximumPositionSize',
  'maximumOrderUnits',
  'marginRate',
  'commission',
];

function wireInstrument(
  w: Record<string, unknown>,
  rates: { longRate: string; shortRate: string } | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of INSTRUMENT_FIELDS) if (w[k] !== undefined) out[k] = w[k];
  const f = w.financing as
    | {
        longRate: string;
        shortRate: string;
        financingDaysOfWeek: { dayOfWeek: string; daysCharged: number }[];
      }
    | undefined;
  if (f !== undefined) {
    out.financing = {
      longRate: rates?.longRate ?? f.longRate,
      shortRate: rates?.shortRate ?? f.shortRate,
      financingDaysOfWeek: f.financingDaysOfWeek.map((d) => ({
        dayOfWeek: d.dayOfWeek.toUpperCase(),
        daysCharged: d.daysCharged,
      })),
    };
  }
  return out;
}
