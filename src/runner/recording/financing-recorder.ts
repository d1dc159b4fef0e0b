import type { FinancingRecord, FinancingWriter } from '../../adapters/catalog/financing-store.ts';
import type { V20Rest } from '../../adapters/v20/rest.ts';
import { tradingDayOf } from '../../domain/new-york.ts';
import { parseTime, type UnixMs } from '../../domain/time.ts';

export interface FinancingRecorderOptions {
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly instruments: readonly string[];
  readonly writer: FinancingWriter;
  /** knownAt of what is read (default Date.now). */
  readonly now?: () => UnixMs;
}

/**
 * Records an account's instruments' financing and margin rates once per v20 trading day (the day
 * rolls at 17:00 New York). `check()` asks the server for its time (GET /pricing answers with
 * `time`, so the day follows the server's clock, a sandbox's stepped one included), and when that
 * trading day is not recorded for every instrument, reads GET /instruments and appends a record
 * per instrument. Call it at start and then every minute or so: a day is recorded once, whatever
 * the number of checks or restarts.
 */
export class FinancingRecorder {
  readonly stats = {
    checks: 0,
    days: 0,
    records: 0,
    failures: 0,
    lastError: undefined as string | undefined,
  };
  readonly #o: FinancingRecorderOptions;

  constructor(o: FinancingRecorderOptions) {
    this.#o = o;
  }

  /** One check; returns the trading day and what was written (nothing when the day was recorded). Throws on a failed request or an answer without financing. */
  async check(): Promise<{ day: string; written: FinancingRecord[] }> {
    const { rest, accountID, instruments, writer } = this.#o;
    this.stats.checks++;
    const pricing = await rest.pricing(accountID, instruments);
    const serverTime = pricing.time !== undefined ? parseTime(pricing.time) : Number.NaN;
    const day = tradingDayOf(Number.isNaN(serverTime) ? (this.#o.now ?? Date.now)() : serverTime);
    if (instruments.every((i) => writer.has(day, i))) return { day, written: [] };
    const list = await rest.instruments(accountID, instruments);
    const knownAt = (this.#o.now ?? Date.now)();
    const records: FinancingRecord[] = [];
    for (const name of instruments) {
      const i = list.find((x) => x.name === name);
      if (i === undefined)
        throw new Error(
          `GET /v3/accounts/${accountID}/instruments did not list ${name}: is it tradeable on this account?`,
        );
      const f = i.financing;
      if (f === undefined)
        throw new Error(
          `GET /v3/accounts/${accountID}/instruments: ${name} carries no financing (longRate, shortRate, financingDaysOfWeek); this server does not publish financing rates`,
        );
      records.push({
        day,
        instrument: name,
        knownAt,
        longRate: f.longRate,
        shortRate: f.shortRate,
        financingDaysOfWeek: f.financingDaysOfWeek.map((d) => ({
          dayOfWeek: d.dayOfWeek,
          daysCharged: d.daysCharged,
        })),
        marginRate: i.marginRate,
      });
    }
    const written = writer.append(records);
    if (written.length > 0) this.stats.days++;
    this.stats.records += written.length;
    return { day, written };
  }
}
