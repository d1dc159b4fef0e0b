/**
 * The migration aid: for each legacy endpoint the sandbox serves, the `/v3` call that replaces it
 * and how the fields map. Every legacy answer names the replacement in the `X-V3-Replacement`
 * header; `fxflow sandbox --legacy-report FILE` writes the calls a client made, with these mappings.
 */

/** One legacy endpoint: its method and path template, the /v3 replacement, and the field mapping. */
export interface LegacyEndpoint {
  readonly method: string;
  /** e.g. `/v1/accounts/:account_id/orders`. */
  readonly template: string;
  readonly replacement: string;
  /** legacy field -> what replaces it in /v3. */
  readonly fields: Readonly<Record<string, string>>;
}

const A = '/v3/accounts/{accountID}';
const ID = {
  accountId: 'accountID path segment: the v20 ID (101-...); the sandbox maps the legacy integer to it',
};
const NUMBERS = { '(numbers)': 'decimal strings ("1.10000"): parse them as decimals, not floats' };
const ORDER_FIELDS = {
  side: "sign of order.units (negative to sell); no 'side' field",
  units: 'order.units (a signed decimal string)',
  type: 'order.type: MARKET, LIMIT, STOP, MARKET_IF_TOUCHED (upper case)',
  price: 'order.price',
  expiry: "order.timeInForce 'GTD' with order.gtdTime (GTC: no expiry)",
  upperBound: 'order.priceBound (for a buy)',
  lowerBound: 'order.priceBound (for a sell)',
  takeProfit: 'order.takeProfitOnFill.price (absent for none, never 0)',
  stopLoss: 'order.stopLossOnFill.price (absent for none, never 0)',
  trailingStop: 'order.trailingStopLossOnFill.distance, in price units (pips x 10^pipLocation)',
};
const TRADE_FIELDS = {
  units: 'trade.currentUnits (signed; no side)',
  side: 'sign of trade.currentUnits',
  time: 'trade.openTime',
  takeProfit: 'trade.takeProfitOrder.price (the dependent order; absent for none)',
  stopLoss: 'trade.stopLossOrder.price',
  trailingStop: 'trade.trailingStopLossOrder.distance (price units)',
  trailingAmount: 'trade.trailingStopLossOrder.trailingStopValue',
};
const TX_FIELDS = {
  type: 'transaction.type: MARKET_ORDER_CREATE -> MARKET_ORDER + ORDER_FILL; ORDER_FILLED -> ORDER_FILL; TRADE_UPDATE -> TAKE_PROFIT_ORDER / STOP_LOSS_ORDER / TRAILING_STOP_LOSS_ORDER; TAKE_PROFIT_FILLED etc. -> ORDER_FILL with reason TAKE_PROFIT_ORDER etc.; DAILY_INTEREST -> DAILY_FINANCING; SET_MARGIN_RATE -> CLIENT_CONFIGURE',
  interest: 'financing',
  pl: 'pl',
  tradeOpened: 'tradeOpened {tradeID, units}',
  tradeReduced: 'tradeReduced / tradesClosed[] {tradeID, units, realizedPL, financing}',
  maxId: 'idrange?from=&to= (ascending pages), or sinceid?id=',
  minId: 'idrange from',
  count: 'pageSize of GET /transactions (which returns page URLs)',
};

/** Every legacy endpoint the sandbox serves. */
export const LEGACY_ENDPOINTS: readonly LegacyEndpoint[] = [
  {
    method: 'GET',
    template: '/v1/accounts',
    replacement: 'GET /v3/accounts',
    fields: {
      accountId: 'accounts[].id (a string)',
      accountName: 'alias (GET /v3/accounts/{accountID}/summary)',
      accountCurrency: 'currency (summary)',
      marginRate: 'marginRate (summary, a decimal string)',
    },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id',
    replacement: `GET ${A}/summary`,
    fields: {
      ...ID,
      accountName: 'account.alias',
      balance: 'account.balance',
      unrealizedPl: 'account.unrealizedPL',
      realizedPl: 'account.pl',
      marginUsed: 'account.marginUsed',
      marginAvail: 'account.marginAvailable',
      openTrades: 'account.openTradeCount',
      openOrders: 'account.pendingOrderCount (counts take-profit/stop-loss orders too)',
      marginRate: 'account.marginRate',
      accountCurrency: 'account.currency',
      ...NUMBERS,
    },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id/orders',
    replacement: `GET ${A}/pendingOrders (or ${A}/orders?state=PENDING)`,
    fields: {
      ...ID,
      maxId: 'beforeID (exclusive: maxId + 1)',
      count: 'count',
      instrument: 'instrument',
      ids: 'ids',
      ...ORDER_FIELDS,
    },
  },
  {
    method: 'POST',
    template: '/v1/accounts/:account_id/orders',
    replacement: `POST ${A}/orders with a JSON body {"order": {...}}`,
    fields: {
      ...ID,
      ...ORDER_FIELDS,
      '(form body)': 'JSON body {"order": {...}}',
      tradeOpened: 'orderFillTransaction.tradeOpened',
      tradesClosed: 'orderFillTransaction.tradesClosed',
      orderOpened: 'orderCreateTransaction',
    },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id/orders/:order_id',
    replacement: `GET ${A}/orders/{orderSpecifier}`,
    fields: { ...ID, ...ORDER_FIELDS },
  },
  {
    method: 'PATCH',
    template: '/v1/accounts/:account_id/orders/:order_id',
    replacement: `PUT ${A}/orders/{orderSpecifier} (the whole replacing order; the order gets a new ID)`,
    fields: {
      ...ID,
      '(only given fields)': 'send the whole order: read it first, change fields, PUT it',
      '(0 removes)': 'leave the field out',
      ...ORDER_FIELDS,
    },
  },
  {
    method: 'DELETE',
    template: '/v1/accounts/:account_id/orders/:order_id',
    replacement: `PUT ${A}/orders/{orderSpecifier}/cancel`,
    fields: { ...ID, id: 'orderCancelTransaction.id' },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id/trades',
    replacement: `GET ${A}/openTrades (or ${A}/trades)`,
    fields: { ...ID, maxId: 'beforeID (exclusive)', ...TRADE_FIELDS },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id/trades/:trade_id',
    replacement: `GET ${A}/trades/{tradeSpecifier}`,
    fields: { ...ID, ...TRADE_FIELDS },
  },
  {
    method: 'PATCH',
    template: '/v1/accounts/:account_id/trades/:trade_id',
    replacement: `PUT ${A}/trades/{tradeSpecifier}/orders`,
    fields: {
      ...ID,
      takeProfit: 'takeProfit {price} (null cancels; 0 is not "none")',
      stopLoss: 'stopLoss {price} (null cancels)',
      trailingStop: 'trailingStopLoss {distance} in price units (null cancels)',
    },
  },
  {
    method: 'DELETE',
    template: '/v1/accounts/:account_id/trades/:trade_id',
    replacement: `PUT ${A}/trades/{tradeSpecifier}/close`,
    fields: {
      ...ID,
      id: 'orderFillTransaction.id',
      price: 'orderFillTransaction.price',
      profit: 'orderFillTransaction.tradesClosed[0].realizedPL',
    },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id/transactions',
    replacement: `GET ${A}/transactions/idrange?from=&to= (or ${A}/transactions/sinceid?id=)`,
    fields: { ...ID, ...TX_FIELDS },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id/transactions/:transaction_id',
    replacement: `GET ${A}/transactions/{transactionID}`,
    fields: { ...ID, ...TX_FIELDS },
  },
  {
    method: 'GET',
    template: '/v1/accounts/:account_id/alltransactions',
    replacement: `GET ${A}/transactions (page URLs), then each GET ${A}/transactions/idrange`,
    fields: { ...ID, Location: 'pages[] of the /transactions answer' },
  },
  {
    method: 'GET',
    template: '/v1/history/:file',
    replacement: `GET ${A}/transactions/idrange?from=&to= for each page`,
    fields: { '(zip file)': 'JSON pages of transactions; no archive' },
  },
];

/** How often each legacy endpoint was called: the migration report's data. */
export class LegacyCallLog {
  readonly #counts = new Map<LegacyEndpoint, number>();

  record(e: LegacyEndpoint): void {
    this.#counts.set(e, (this.#counts.get(e) ?? 0) + 1);
  }

  /** The calls made, most frequent first. */
  entries(): {
    call: string;
    count: number;
    replacement: string;
    fields: Readonly<Record<string, string>>;
  }[] {
    return [...this.#counts]
      .sort((a, b) => b[1] - a[1] || LEGACY_ENDPOINTS.indexOf(a[0]) - LEGACY_ENDPOINTS.indexOf(b[0]))
      .map(([e, count]) => ({
        call: `${e.method} ${e.template}`,
        count,
        replacement: e.replacement,
        fields: e.fields,
      }));
  }
}

/** The report as Markdown (a migration checklist), or JSON when `json`. */
export function formatLegacyReport(entries: ReturnType<LegacyCallLog['entries']>, json: boolean): string {
  if (json) return `${JSON.stringify({ legacyCalls: entries }, null, 2)}\n`;
  const lines = ['# Legacy (/v1) calls made against the sandbox, and their /v3 replacements', ''];
  if (entries.length === 0) lines.push('No legacy call was made.', '');
  for (const e of entries) {
    lines.push(
      `## ${e.call} (${e.count} call${e.count === 1 ? '' : 's'})`,
      '',
      `- [ ] Replace with: ${e.replacement}`,
      '',
      '| legacy | v20 (/v3) |',
      '|---|---|',
    );
    for (const [k, v] of Object.entries(e.fields)) lines.push(`| ${k} | ${v.replace(/\|/g, '\\|')} |`);
    lines.push('');
  }
  return lines.join('\n');
}
