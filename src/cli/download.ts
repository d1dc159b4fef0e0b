import type { CommandModule } from 'yargs';
import { Catalog } from '../adapters/catalog/catalog.ts';
import { AuthError, resolveToken } from '../adapters/v20/auth.ts';
import { DownloadError, downloadCandles, type DownloadPrice } from '../adapters/v20/download.ts';
import { isGranularity } from '../domain/granularity.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { parseDate } from '../app/config.ts';
import { catalogFolder } from '../adapters/catalog/location.ts';
import { CATALOG_FLAG } from './catalog-flag.ts';
import { createLogger, flushLogger } from './logger.ts';
import { ProgressBar, formatCount } from './progress.ts';

interface DownloadArgs {
  instrument: string;
  granularity: string;
  price: string;
  from: string;
  to?: string;
  env: string;
  url?: string;
  catalog?: string;
  'token-file'?: string;
  restart?: boolean;
  'page-size': number;
}

const usage = (message: string): Error => Object.assign(new Error(message), { code: 'USAGE' });

/**
 * `fxflow data download`: fills the catalog with v20 candles (5000 per request, rate-limited,
 * resumable, only complete candles). Registered under `fxflow data` in `data.ts`.
 */
export const dataDownloadCommand: CommandModule<object, DownloadArgs> = {
  command: 'download',
  describe:
    'Download v20 candles into the catalog (5000 per request, rate-limited, resumable: run it again after an interruption)',
  builder: (y) =>
    y
      .option('instrument', { type: 'string', demandOption: true, describe: 'Instrument, e.g. EUR_USD' })
      .option('granularity', {
        type: 'string',
        demandOption: true,
        describe: 'v20 granularity, e.g. M1, H1, D',
      })
      .option('price', {
        type: 'string',
        default: 'BA',
        choices: ['BA', 'M'],
        describe: 'BA: bid and ask (the catalog keeps both); M: mid only, written as bid = ask',
      })
      .option('from', {
        type: 'string',
        demandOption: true,
        describe: 'Start (UTC date or RFC 3339), inclusive',
      })
      .option('to', { type: 'string', describe: 'End, exclusive (default: now)' })
      .option('env', {
        type: 'string',
        default: 'practice',
        choices: ['practice', 'live', 'sandbox'],
        describe: 'Environment (config/environments.json)',
      })
      .option('url', {
        type: 'string',
        describe: 'Base URL overriding the environment (e.g. a sandbox on another port)',
      })
      .options(CATALOG_FLAG)
      .option('token-file', {
        type: 'string',
        describe: 'Token file (default ~/.fxflow/token; FXFLOW_TOKEN wins)',
      })
      .option('restart', {
        type: 'boolean',
        default: false,
        describe: 'Fetch the whole range again instead of resuming after the last candle held',
      })
      .option('page-size', {
        type: 'number',
        default: 5000,
        hidden: true,
        describe: 'Candles per request (1..5000)',
      })
      .example(
        '$0 data download --instrument EUR_USD --granularity M1 --from 2024-01-01 --to 2024-02-01',
        'January 2024 bid/ask M1 from the practice environment',
      )
      .example(
        '$0 data download --env sandbox --instrument EUR_USD --granularity H1 --from 2024-01-01',
        'From a local sandbox (fxflow sandbox)',
      ) as never,
  handler: async (a) => {
    if (!isGranularity(a.granularity))
      throw usage(`--granularity '${a.granularity}' is not a v20 granularity (S5…M30, H1…H12, D, W, M)`);
    if (!/^[A-Z0-9]+_[A-Z0-9]+$/.test(a.instrument))
      throw usage(`--instrument '${a.instrument}' is not an instrument name like EUR_USD`);
    const from = parseDate(a.from);
    const to = a.to === undefined ? Date.now() : parseDate(a.to);
    if (Number.isNaN(from)) throw usage(`--from '${a.from}' is not a date (YYYY-MM-DD or RFC 3339)`);
    if (Number.isNaN(to)) throw usage(`--to '${a.to}' is not a date (YYYY-MM-DD or RFC 3339)`);
    // The HTTP stack (undici) is loaded by the commands that talk to OANDA, when they run.
    const [{ environment }, { v20Client }] = await Promise.all([
      import('../adapters/v20/environments.ts'),
      import('./v20-client.ts'),
    ]);
    const env = environment(a.env, a.url !== undefined ? { url: a.url } : {});
    let token: string | undefined;
    try {
      token = resolveToken({
        environment: env,
        ...(a['token-file'] !== undefined ? { tokenFile: a['token-file'] } : {}),
      }).token.reveal();
    } catch (e) {
      // The sandbox needs no token unless it was started with one.
      if (!(env.name === 'sandbox' && e instanceof AuthError && e.code === 'AUTH_NO_TOKEN')) throw e;
    }
    const log = createLogger({ level: process.env.FXFLOW_LOG_LEVEL ?? 'warn' });
    const { http, rest } = await v20Client(env, token, log);
    const catalog = new Catalog(catalogFolder(a.catalog));
    const bar = new ProgressBar(`download ${a.instrument} ${a.granularity}`);
    const ctl = new AbortController();
    const onSignal = (): void => ctl.abort();
    process.once('SIGINT', onSignal);
    try {
      const r = await downloadCandles({
        rest,
        catalog,
        instrument: a.instrument,
        granularity: a.granularity,
        price: a.price as DownloadPrice,
        from,
        to,
        pageSize: a['page-size'],
        restart: a.restart === true,
        signal: ctl.signal,
        onPage: (p) => bar.update(p.fraction, p.written),
        instruments: loadInstruments(),
      });
      bar.done();
      const last = r.last === undefined ? 'none' : new Date(r.last).toISOString();
      process.stdout.write(
        `${r.resumed ? `Resumed at ${new Date(r.start).toISOString()}: ` : ''}${formatCount(r.written)} candles written in ${r.pages} requests to ${catalog.root} (last candle ${last})${r.reachedPresent ? '; stopped at the incomplete current candle' : ''}\n`,
      );
    } catch (e) {
      bar.done();
      if (e instanceof DownloadError) throw e;
      throw Object.assign(
        new Error(
          `download of ${a.instrument} ${a.granularity} failed: ${(e as Error).message}. What was written is kept: run the same command again to resume`,
          { cause: e },
        ),
        {
          code:
            typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'DOWNLOAD',
        },
      );
    } finally {
      process.off('SIGINT', onSignal);
      await http.close();
      await flushLogger(log);
    }
  },
};
