// A run page's times in the run's zone (config.json report.timeZone), when it is not UTC: inlined
// between common.js and report.js only then, so a UTC page is the same bytes as before. It turns
// fx.date into human-time.cjs's humanTime in that zone (the trades, drawdowns, chart crosshair and
// period take it from there) and, once report.js has drawn, says the zone where the page said UTC.
'use strict';
(function () {
  const zone = fx.zone; // set by the page (src/report/html.ts) just before this script
  if (!zone || zone === 'UTC') return;
  fx.date = (sec) => humanTime(sec * 1000, zone);
  document.addEventListener('DOMContentLoaded', () => {
    const period = document.getElementById('period');
    if (period) period.textContent = period.textContent.replace(/ UTC(  ·  run )/, ` (${zone})$1`);
    for (const note of document.querySelectorAll('p.note')) {
      if (note.textContent.startsWith('Dates are UTC and filter by the opening day;'))
        note.textContent = note.textContent.replace(
          'Dates are UTC and filter by the opening day;',
          `Times are ${zone}'s; the dates filter by the opening day in UTC;`,
        );
    }
  });
})();
