// The one way fxflow writes a time for people (report.txt and every report page: the tables, the
// period, the charts' crosshair and time-axis labels): a plain script, inlined into the pages before
// common.js and required by Node (src/report/human-time.ts).
'use strict';

/** Intl formatters by zone: made once each (a trades table formats thousands of times). */
const humanTimeFormats = new Map();
const HUMAN_TIME_MONTHS = [
  'Jan',
  'Feb',
  'Mar',
  'Apr',
  'May',
  'Jun',
  'Jul',
  'Aug',
  'Sep',
  'Oct',
  'Nov',
  'Dec',
];
const pad2 = (n) => (n < 10 ? `0${n}` : String(n));

/**
 * The wall clock of an instant (epoch ms) in an IANA zone (UTC when absent): { year, month (1-12),
 * day, hour, minute, second, zoneName } as numbers, zoneName the zone's short name ('' in UTC).
 */
function humanTimeParts(ms, zone) {
  if (zone === undefined || zone === null || zone === 'UTC') {
    const d = new Date(ms);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
      zoneName: '',
    };
  }
  let f = humanTimeFormats.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'short',
    });
    humanTimeFormats.set(zone, f);
  }
  const p = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour),
    minute: Number(p.minute),
    second: Number(p.second),
    zoneName: p.timeZoneName,
  };
}

/**
 * An instant (epoch ms) as people read it, to the minute, in an IANA zone: "2024-01-01 00:00" in
 * UTC (the zone is said once, beside it), "2024-03-10 03:00 EDT" or "2024-06-01 02:00 GMT+2"
 * elsewhere (the zone's abbreviation, or its offset where it has none in English).
 */
function humanTime(ms, zone) {
  const p = humanTimeParts(ms, zone);
  const s = `${p.year}-${pad2(p.month)}-${pad2(p.day)} ${pad2(p.hour)}:${pad2(p.minute)}`;
  return p.zoneName === '' ? s : `${s} ${p.zoneName}`;
}

/**
 * A label of a chart's time axis (Lightweight Charts' TickMarkType: 0 year, 1 month, 2 day of the
 * month, 3 time, 4 time with seconds) for an instant (epoch ms), on the zone's wall clock:
 * "2024", "Mar", "10", "14:00", "14:00:05".
 */
function humanTimeTick(ms, type, zone) {
  const p = humanTimeParts(ms, zone);
  switch (type) {
    case 0:
      return String(p.year);
    case 1:
      return HUMAN_TIME_MONTHS[p.month - 1];
    case 2:
      return String(p.day);
    case 4:
      return `${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`;
    default:
      return `${pad2(p.hour)}:${pad2(p.minute)}`;
  }
}

if (typeof module === 'object' && module !== null && module.exports)
  module.exports = { humanTime, humanTimeParts, humanTimeTick };
