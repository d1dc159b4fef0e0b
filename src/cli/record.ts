import { resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { LABS_KINDS, type LabsKind } from '../adapters/catalog/labs-items.ts';
import { LabsWriter } from '../adapters/catalog/labs-store.ts';
import { AuthError, resolveToken } from '../adapters/v20/auth.ts';
import { LabsPoller } from '../runner/labs-poller.ts';
import { createLogger, flushLogger } from './logger.ts';

export interface RecordArgs {
  instruments?: string;
  currencies?: string;
  labs: string;
  prices?: boolean;
  financing?: boolean;
  env: string;
  url?: string;
  catalog: string;
  'token-file'?: string;
  once?: boolean;
  'every-ms'?: number;
  'requests-per-minute': number;
}

const usage = (m: string): Error => Object.assign(new Error(m), { code: 'USAGE' });
const list = (s: string | undefined): string[] => (s ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');

/**
 * `fxflow record`: polls the labs endpoints for the given instruments and currencies and appends
 * every new item (or new version of one) to the catalog, stamped with the time it became known
 * (docs/labs.md). Unattended: labs failures are counted and retried, never fatal; SIGINT/SIGTERM
 * stop it after the round in progress is written; a restart resumes without recording anything
 * twice (the writer reads back what is recorded).
 */
export const recordCommand: CommandModule<object, RecordArgs> = {
  command: 'record',
  describe: 'Record OANDA labs data (calendar, Autochartist signals, spreads, COT) into the catalog, each item with the time it became known; resumable',
  builder: (y) =>
    y
      .option('instruments', { type: 'string', describe: 'Instruments (comma-separated) for signals, spreads and COT, e.g. EUR_USD,GBP_USD' })
      .option('currencies', { type: 'string', describe: 'Currencies (comma-separated) for the economic calendar, e.g. USD,EUR' })
      .option('labs', { type: 'string', default: 'calendar,signals', describe: `Labs kinds to record (comma-separated: ${LABS_KINDS.join(', ')})` })
      .option('prices', { type: 'boolean', default: false, describe: 'Also record the pricing stream (not available yet)' })
      .option('financing', { type: 'boolean', default: false, describe: 'Also record financing and margin rates daily (not available yet)' })
      .option('env', { type: 'string', default: 'practice', choices: ['practice', 'live', 'sandbox'], describe: 'Environment (config/environments.json)' })
      .option('url', { type: 'string', describe: 'Base URL overriding the environment (e.g. a sandbox on another port)' })
      .option('catalog', { type: 'string', default: 'data/catalog', describe: 'Catalog folder (items go to <catalog>/labs/<kind>/YYYY-MM.jsonl)' })
      .option('token-file', { type: 'string', describe: 'Token file (default ~/.fxflow/token; FXFLOW_TOKEN wins)' })
      .option('once', { type: 'boolean', default: false, describe: 'Poll every requested kind once, write, and exit' })
      .option('every-ms', { type: 'number', describe: 'Poll every kind this often (ms) instead of the defaults (calendar 60 s, signals 5 min, spreads 15 min, COT 6 h)' })
      .option('requests-per-minute', { type: 'number', default: 20, describe: 'Labs request budget' })
      .example('$0 record --currencies USD,EUR --instruments EUR_USD --labs calendar,signals', 'Record the calendar for USD and EUR and EUR_USD Autochartist signals until stopped') as never,
  handler: async (a) => {
    const kinds = list(a.labs);
    for (const k of kinds) if (!LABS_KINDS.includes(k as LabsKind)) throw usage(`--labs '${k}' is not a labs kind: use ${LABS_KINDS.join(', ')}`);
    const instruments = list(a.instruments);
    const currencies = list(a.currencies);
    for (const i of instruments) if (!/^[A-Z0-9]+_[A-Z0-9]+$/.test(i)) throw usage(`--instruments: '${i}' is not an instrument name like EUR_USD`);
    for (const c of currencies) if (!/^[A-Z]{3}$/.test(c)) throw usage(`--currencies: '${c}' is not a currency code like USD`);
    if (kinds.includes('calendar') && currencies.length === 0) throw usage('--labs calendar needs --currencies (e.g. --currencies USD,EUR)');
    if (kinds.some((k) => k !== 'calendar') && instruments.length === 0) throw usage(`--labs ${kinds.filter((k) => k !== 'calendar').join(',')} needs --instruments (e.g. --instruments EUR_USD)`);
    if (a.prices || a.financing) throw usage('--prices and --financing are not implemented yet (docs/labs.md); record labs only for now');

    const [{ environment }, { V20Http }, { V20Labs }] = await Promise.all([import('../adapters/v20/environments.ts'), import('../adapters/v20/http.ts'), import('../adapters/v20/labs.ts')]);
    const env = environment(a.env, a.url !== undefined ? { url: a.url } : {});
    let token: string | undefined;
    try {
      token = resolveToken({ environment: env, ...(a['token-file'] !== undefined ? { tokenFile: a['token-file'] } : {}) }).token.reveal();
    } catch (e) {
      if (!(env.name === 'sandbox' && e instanceof AuthError && e.code === 'AUTH_NO_TOKEN')) throw e;
    }
    const log = createLogger({ level: process.env.FXFLOW_LOG_LEVEL ?? 'warn' });
    const http = new V20Http({ baseUrl: env.rest, streamUrl: env.stream, ...(token !== undefined ? { token } : {}), log: log.child({ component: 'v20' }) });
    const root = resolve(a.catalog);
    const writer = await LabsWriter.open(root);
    for (const r of writer.repaired) process.stderr.write(`repaired ${r.file}: dropped ${r.bytes} bytes of a line cut short (it is fetched again)\n`);
    const every = a['every-ms'];
    const poller = new LabsPoller({
      labs: new V20Labs(http),
      identity: writer.identity,
      ...(kinds.includes('calendar') ? { calendar: currencies } : {}),
      ...(kinds.includes('signals') ? { signals: instruments } : {}),
      ...(kinds.includes('spreads') ? { spreads: instruments } : {}),
      ...(kinds.includes('cot') ? { cot: instruments } : {}),
      ...(every !== undefined ? { every: { calendar: every, signals: every, spreads: every, cot: every } } : {}),
      requestsPerMinute: a['requests-per-minute'],
    });
    const report = (): void => {
      const s = poller.stats;
      process.stderr.write(`record: ${s.polls} polls, ${s.items} items, ${s.failures} failures${s.deferred ? `, ${s.deferred} deferred by the rate budget` : ''}${s.lastError ? ` (last: ${s.lastError})` : ''}\n`);
    };
    try {
      if (a.once) {
        writer.append(await poller.poll());
        report();
        return;
      }
      await new Promise<void>((done) => {
        const stop = (): void => {
          poller.stop();
          done();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        poller.start((items) => {
          writer.append(items);
          process.stdout.write(`${new Date().toISOString()} recorded ${items.length} item${items.length === 1 ? '' : 's'} (${poller.stats.items} in all)\n`);
        }, Math.max(10, Math.min(every ?? 5000, 5000)));
        // The poller's timer does not hold the process: this does, until a signal.
        const hold = setInterval(() => {}, 1 << 30);
        process.once('exit', () => clearInterval(hold));
        const release = (): void => clearInterval(hold);
        process.once('SIGINT', release);
        process.once('SIGTERM', release);
      });
      report();
    } finally {
      await http.close();
      await flushLogger(log);
    }
  },
};
