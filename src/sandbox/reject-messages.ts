/**
 * The `errorMessage` of a rejected request, from the reject transaction's `rejectReason`. OANDA's
 * messages name the field of the request that was refused ("Invalid value specified for
 * 'order.instrument'"); so do these, with what was wrong and what the instrument allows where it
 * helps. Reasons without a field of their own (a missing trade, margin) say what is missing.
 */

/** The request field each reason refers to, below `order.` (an on-fill reason names its details object; `|` separates alternatives). */
function fieldOf(reason: string): string | undefined {
  const onFill: [string, string][] = [
    ['TAKE_PROFIT_ON_FILL_', 'takeProfitOnFill'],
    ['STOP_LOSS_ON_FILL_', 'stopLossOnFill'],
    ['TRAILING_STOP_LOSS_ON_FILL_', 'trailingStopLossOnFill'],
    ['GUARANTEED_STOP_LOSS_ON_FILL_', 'guaranteedStopLossOnFill'],
  ];
  for (const [prefix, obj] of onFill) {
    if (!reason.startsWith(prefix)) continue;
    const rest = reason.slice(prefix.length);
    if (rest.startsWith('PRICE_DISTANCE') || rest.startsWith('DISTANCE')) return `${obj}.distance`;
    if (rest.startsWith('PRICE_AND_DISTANCE')) return `${obj}.price|${obj}.distance`;
    if (rest.startsWith('PRICE')) return `${obj}.price`;
    if (rest.startsWith('TIME_IN_FORCE')) return `${obj}.timeInForce`;
    if (rest.startsWith('GTD_TIMESTAMP')) return `${obj}.gtdTime`;
    if (rest.startsWith('TRIGGER_CONDITION')) return `${obj}.triggerCondition`;
    if (rest.startsWith('CLIENT_ORDER')) return `${obj}.clientExtensions`;
    if (rest.startsWith('GUARANTEED')) return obj;
    return obj;
  }
  if (reason.startsWith('UNITS_')) return 'units';
  if (reason.startsWith('PRICE_DISTANCE')) return 'distance';
  if (reason.startsWith('PRICE_BOUND')) return 'priceBound';
  if (reason.startsWith('PRICE_')) return 'price';
  if (reason.startsWith('STOP_LOSS_ORDER_PRICE_AND_DISTANCE')) return 'price|distance';
  if (reason.startsWith('STOP_LOSS_ORDER_GUARANTEED')) return 'type';
  if (reason.startsWith('TIME_IN_FORCE_GTD')) return 'gtdTime';
  if (reason.startsWith('TIME_IN_FORCE')) return 'timeInForce';
  if (reason.startsWith('INSTRUMENT_')) return 'instrument';
  if (reason.startsWith('TRIGGER_CONDITION')) return 'triggerCondition';
  if (reason.startsWith('ORDER_FILL_POSITION_ACTION')) return 'positionFill';
  if (reason === 'TRADE_ID_UNSPECIFIED') return 'tradeID';
  if (reason.startsWith('CLIENT_ORDER_')) return 'clientExtensions.id';
  return undefined;
}

/** What a reason's suffix says, most specific first (BOTH_MISSING before MISSING). */
const WHAT: readonly (readonly [string, string])[] = [
  ['BOTH_SPECIFIED', 'give a price or a distance, not both'],
  ['BOTH_MISSING', 'give a price or a distance'],
  ['PRECISION_EXCEEDED', 'more decimal places than the instrument allows'],
  ['MINIMUM_NOT_MET', 'below the minimum the instrument allows'],
  ['MIMIMUM_NOT_MET', 'below the minimum the instrument allows'],
  ['MAXIMUM_EXCEEDED', 'above the maximum the instrument allows'],
  ['LIMIT_EXCEEDED', 'above the maximum order size of the instrument'],
  ['IN_PAST', 'the time is not in the future'],
  ['ALREADY_EXISTS', 'already assigned to another pending order'],
  ['NOT_ALLOWED', 'guaranteed stop losses are not allowed on this instrument'],
  ['REQUIRED', 'a guaranteed stop loss on fill is required on this instrument'],
  ['UNKNOWN', 'not a known instrument'],
  ['UNSPECIFIED', 'it is required'],
  ['MISSING', 'it is required'],
  ['INVALID', 'not a valid value'],
];

/** Fixed texts for reasons that are not about one field. */
const FIXED: Readonly<Record<string, string>> = {
  INSUFFICIENT_MARGIN: 'Insufficient margin to perform request',
  ORDER_DOESNT_EXIST: 'The Order specified does not exist',
  TRADE_DOESNT_EXIST: 'The Trade specified does not exist',
  CLOSE_TRADE_UNITS_EXCEED_TRADE_SIZE:
    "Invalid value specified for 'units': more units than the Trade has open",
  CLOSEOUT_POSITION_DOESNT_EXIST: 'The Position requested to be closed out does not exist',
  CLOSEOUT_POSITION_UNITS_EXCEED_POSITION_SIZE:
    'The units requested to be closed out exceed the size of the Position side',
  CLOSEOUT_POSITION_REJECT:
    "Invalid value specified for the Position closeout: give 'ALL', 'NONE' or a positive number of units",
  CLOSEOUT_POSITION_INCOMPLETE_SPECIFICATION:
    "Invalid request: give 'longUnits' and/or 'shortUnits' ('ALL' or a number of units)",
  TAKE_PROFIT_ORDER_ALREADY_EXISTS:
    'The Trade already has a Take Profit Order: replace it (PUT /orders/{id}) or set it with PUT /trades/{id}/orders',
  STOP_LOSS_ORDER_ALREADY_EXISTS:
    'The Trade already has a Stop Loss Order: replace it (PUT /orders/{id}) or set it with PUT /trades/{id}/orders',
  TRAILING_STOP_LOSS_ORDER_ALREADY_EXISTS:
    'The Trade already has a Trailing Stop Loss Order: replace it (PUT /orders/{id}) or set it with PUT /trades/{id}/orders',
  GUARANTEED_STOP_LOSS_ORDER_ALREADY_EXISTS:
    'The Trade already has a Guaranteed Stop Loss Order: replace it (PUT /orders/{id}) or set it with PUT /trades/{id}/orders',
};

/**
 * The v20-style `errorMessage` for a reject reason. `root` is the request's key of the refused
 * object: `order` for order calls, `takeProfit`, `stopLoss`, … for a trade's dependent orders.
 */
export function rejectMessage(reason: string, root = 'order'): string {
  const fixed = FIXED[reason];
  if (fixed !== undefined) return fixed;
  const field = fieldOf(reason);
  if (field === undefined) return `The request was rejected: ${reason}`;
  let what: string | undefined;
  for (const [suffix, text] of WHAT) {
    if (reason.endsWith(`_${suffix}`)) {
      what = text;
      break;
    }
  }
  const named = field
    .split('|')
    .map((f) => `'${root}.${f}'`)
    .join(' or ');
  return `Invalid value specified for ${named}${what !== undefined ? `: ${what}` : ''} (${reason})`;
}
