// The one way fxflow writes a time for people (report.txt and every report page): a plain script,
// inlined into the pages and required by Node (src/report/human-time.ts).
'use strict';

/** Intl formatters by zone: made once each (a trades table formats thousands of times). */
const humanTimeFormats = new Map();

/**
 * An instant (epoch ms) as people read it, to the minute, in an IANA zone: "2024-01-01 00:00" in
 * UTC (the zone is said once, beside it), "2024-03-10 03:00 EDT" or "2024-06-01 02:00 GMT+2"
 * elsewhere (the zone's abbreviation, or its offset where it has none in English).
 */
function humanTime(ms, zone) {
  if (zone === undefined || zone === null || zone === 'UTC')
    return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
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
      timeZoneName: 'short',
    });
    humanTimeFormats.set(zone, f);
  }
  const p = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${p.timeZoneName}`;
}

if (typeof module === 'object' && module !== null && module.exports) module.exports = { humanTime };
