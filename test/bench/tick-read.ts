/**
 * One-off A/B of reading recorded tick day files (docs/data.md "Reading recorded ticks"):
 *   node --import tsx test/bench/tick-read.ts gen <dir> [days]     writes 1,000,000 ticks over `days` day files (default 10), a gzip member per 1,000 (the recorder's default flush)
 *   node --import tsx test/bench/tick-read.ts read <tick-store.ts> <dir>   reads every day file with that module's readTickDayFile; prints ticks, ms, peak RSS
 * The driver runs `read` with the old and the new module alternately, in fresh processes, several
 * rounds, and takes medians (the machine is shared).
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatTime } from '../../src/domain/time.ts';
import { TickWriter } from '../../src/adapters/catalog/tick-store.ts';

const [cmd, a, b] = process.argv.slice(2);
if (cmd === 'gen') {
  const w = TickWriter.open(resolve(a!), ['EUR_USD']);
  const days = Number(b ?? 10);
  const perDay = Math.floor(1_000_000 / days);
  const step = Math.floor(86_000_000 / perDay);
  const day0 = Date.UTC(2024, 0, 8);
  let k = 0;
  for (let d = 0; d < days; d++) {
    for (let i = 0; i < perDay; i++, k++) {
      const at = day0 + d * 86_400_000 + i * step + (k % 7);
      const bid = (1.09 + ((k * 7919) % 2000) / 100_000).toFixed(5);
      w.add('EUR_USD', {
        time: formatTime(at),
        at,
        bid,
        ask: (Number(bid) + 0.00008 + (k % 3) / 100_000).toFixed(5),
        knownAt: at + 40,
      });
      if (w.buffered >= 1000) w.flush();
    }
  }
  w.flush();
  process.stdout.write(`wrote ${w.written} ticks\n`);
} else if (cmd === 'read') {
  const mod = (await import(pathToFileURL(resolve(a!)).href)) as {
    readTickDayFile: (file: string, o: { instrument: string }) => Iterable<{ at: number; bid: number }[]>;
  };
  const dir = join(resolve(b!), 'ticks', 'EUR_USD');
  const files = readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
  const t0 = performance.now();
  let n = 0;
  let sum = 0;
  for (const f of files)
    for (const batch of mod.readTickDayFile(f, { instrument: 'EUR_USD' }))
      for (const t of batch) {
        n++;
        sum += t.bid;
      }
  const ms = performance.now() - t0;
  process.stdout.write(
    `${JSON.stringify({ ticks: n, ms: Math.round(ms), ticksPerSec: Math.round(n / (ms / 1000)), maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024), check: Math.round(sum) })}\n`,
  );
} else {
  process.stderr.write('usage: tick-read.ts gen <dir> | read <tick-store.ts> <dir>\n');
  process.exitCode = 64;
}
