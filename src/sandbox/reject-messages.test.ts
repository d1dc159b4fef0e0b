import { describe, expect, it } from 'vitest';
import { rejectMessage } from './reject-messages.ts';

describe('reject errorMessages name the refused field, as OANDA words them', () => {
  it.each([
    [
      'UNITS_PRECISION_EXCEEDED',
      'order',
      "Invalid value specified for 'order.units': more decimal places than the instrument allows (UNITS_PRECISION_EXCEEDED)",
    ],
    [
      'UNITS_MIMIMUM_NOT_MET',
      'order',
      "Invalid value specified for 'order.units': below the minimum the instrument allows (UNITS_MIMIMUM_NOT_MET)",
    ],
    [
      'PRICE_DISTANCE_MINIMUM_NOT_MET',
      'trailingStopLoss',
      "Invalid value specified for 'trailingStopLoss.distance': below the minimum the instrument allows (PRICE_DISTANCE_MINIMUM_NOT_MET)",
    ],
    [
      'PRICE_PRECISION_EXCEEDED',
      'takeProfit',
      "Invalid value specified for 'takeProfit.price': more decimal places than the instrument allows (PRICE_PRECISION_EXCEEDED)",
    ],
    [
      'STOP_LOSS_ON_FILL_PRICE_AND_DISTANCE_BOTH_SPECIFIED',
      'order',
      "Invalid value specified for 'order.stopLossOnFill.price' or 'order.stopLossOnFill.distance': give a price or a distance, not both (STOP_LOSS_ON_FILL_PRICE_AND_DISTANCE_BOTH_SPECIFIED)",
    ],
    [
      'STOP_LOSS_ORDER_PRICE_AND_DISTANCE_BOTH_MISSING',
      'stopLoss',
      "Invalid value specified for 'stopLoss.price' or 'stopLoss.distance': give a price or a distance (STOP_LOSS_ORDER_PRICE_AND_DISTANCE_BOTH_MISSING)",
    ],
    [
      'TIME_IN_FORCE_GTD_TIMESTAMP_IN_PAST',
      'order',
      "Invalid value specified for 'order.gtdTime': the time is not in the future (TIME_IN_FORCE_GTD_TIMESTAMP_IN_PAST)",
    ],
    [
      'TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MAXIMUM_EXCEEDED',
      'order',
      "Invalid value specified for 'order.trailingStopLossOnFill.distance': above the maximum the instrument allows (TRAILING_STOP_LOSS_ON_FILL_PRICE_DISTANCE_MAXIMUM_EXCEEDED)",
    ],
    [
      'CLIENT_ORDER_ID_ALREADY_EXISTS',
      'order',
      "Invalid value specified for 'order.clientExtensions.id': already assigned to another pending order (CLIENT_ORDER_ID_ALREADY_EXISTS)",
    ],
    ['TRADE_DOESNT_EXIST', 'order', 'The Trade specified does not exist'],
    ['INSUFFICIENT_MARGIN', 'order', 'Insufficient margin to perform request'],
  ])('%s under %s', (reason, root, text) => {
    expect(rejectMessage(reason, root)).toBe(text);
  });
});
