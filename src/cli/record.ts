import type { CommandModule } from 'yargs';
import { LABS_KINDS, type LabsKind } from '../adapters/catalog/labs-items.ts';
import { FinancingWriter } from '../adapters/catalog/financing-store.ts';
import { LabsWriter } from '../adapters/catalog/labs-store.ts';
import { checkManifest } from '../adapters/catalog/recording-manifest.ts';
import { TickWriter } from '../adapters/catalog/tick-store.ts';
import { AuthError, resolveToken } from '../adapters/v20/auth.ts';
import { FinancingRecorder } from '../runner/recording/financing-recorder.ts';
import { LabsPoller } from '../runner/session/labs-poller.ts';
import { PriceRecorder } from '../runner/recording/price-recorder.ts';
import { catalogFolder } from '../adapters/catalog/location.ts';
import { CATALOG_FLAG } from './catalog-flag.ts';
import { createLogger, flushLogger } from './logger.ts';

export interface RecordArgs {
  instruments?: string;
  currencies?: string;
  labs?: string;
  prices?: boolean;
  financing?: boolean;
  env: string;
  url?: string;
  catalog?: string;
  'token-file'?: string;
  account?: string;
  'flush-ticks': number;
  'flush-ms': number;
  'allow-mismatch'?: boolean;
  once?: boolean;
  'every-ms'?: number;
  'requests-per-minute': number;
}

const usage = (m: string): Error => Object.assign(new Error(m), { code: 'USAGE' });
const list = (s: string | undefined): string[] =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

/**
 * `fxflow record`: polls the labs endpoints for the given instruments and currencies and appends
 * every new item (or new version of one) to the catalog, stamped with the time it became known;
 * with `--prices`, records the pricing stream's ticks (day files of gzip blocks); with
 * `--financing`, the instruments' financing and margin rates once per trading day (docs/labs.md).
 * Unattended: failures are counted and retried, never fatal (a pricing stream refused for a wrong
 * token or account stops it); SIGINT/SIGTERM stop it after what waits is written; a restart resumes
 * without recording anything twice (the writers read back what is recorded and cut a torn tail).
 * A catalog's recording.json says which account and instruments it holds; another is refused.
 */
// Its name and one-line description are in src/cli/main.ts, which imports this module only when
// `fxflow record` runs.
export const recordCommand: Pick<CommandModule<object, RecordArgs>, 'builder' | 'handler'> = {
  builder: (y) =>
    y
      .option('instruments', {
        type: 'string',
        describe: 'Instruments (comma-separated) for signals, spreads and COT, e.g. EUR_USD,GBP_USD',
      })
      .option('currencies', {
        type: 'string',
        describe: 'Currencies (comma-separated) for the economic calendar, e.g. USD,EUR',
      })
      .option('labs', {
        type: 'string',
        describe: `Labs kinds to record (comma-separated: ${LABS_KINDS.join(', ')}); default calendar,signals, or none with --prices or --financing`,
      })
      .option('prices', {
        type: 'boolean',
        default: false,
        describe:
          'Record the pricing stream of --instruments: every tick with its receive time, to <catalog>/ticks/<INSTRUMENT>/<YYYY-MM-DD>.csv.gz',
      })
      .option('financing', {
        type: 'boolean',
        default: false,
        describe:
          'Record the financing and margin rates of --instruments once per trading day (17:00 New York), to <catalog>/financing/<YYYY>.jsonl (for backtest --financing-history)',
      })
      .option('account', {
        type: 'string',
        describe: 'v20 account for --prices and --financing (default: the first the token sees)',
      })
      .option('flush-ticks', {
        type: 'number',
        default: 1000,
        describe: 'Write the ticks that wait when this many do (bounded memory)',
      })
      .option('flush-ms', {
        type: 'number',
        default: 5000,
        describe: 'Write the ticks that wait at least this often (ms): what a crash can lose',
      })
      .option('allow-mismatch', {
        type: 'boolean',
        default: false,
        describe:
          "Record into a catalog whose recording.json names another account or instrument set (the earlier manifest is kept under 'previous')",
      })
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
      .option('once', {
        type: 'boolean',
        default: false,
        describe: 'Poll every requested labs kind once (and financing), write, and exit',
      })
      .option('every-ms', {
        type: 'number',
        describe:
          'Poll every labs kind, and check the financing day, this often (ms) instead of the defaults (calendar 60 s, signals 5 min, spreads 15 min, COT 6 h; financing 60 s)',
      })
      .option('requests-per-minute', { type: 'number', default: 20, describe: 'Labs request budget' })
      .example(
        '$0 record --currencies USD,EUR --instruments EUR_USD --labs calendar,signals',
        'Record the calendar for USD and EUR and EUR_USD Autochartist signals until stopped',
      )
      .example(
        '$0 record --instruments EUR_USD,GBP_USD --prices --financing',
        'Record ticks and the daily financing rates of two instruments until stopped',
      ) as never,
  handler: async (a) => {
    const kinds =
      a.labs !== undefined ? list(a.labs) : a.prices || a.financing ? [] : ['calendar', 'signals'];
    for (const k of kinds)
      if (!LABS_KINDS.includes(k as LabsKind))
        throw usage(`--labs '${k}' is not a labs kind: use ${LABS_KINDS.join(', ')}`);
    const instruments = list(a.instruments);
    const currencies = list(a.currencies);
    for (const i of instruments)
      if (!/^[A-Z0-9]+_[A-Z0-9]+$/.test(i))
        throw usage(`--instruments: '${i}' is not an instrument name like EUR_USD`);
    for (const c of currencies)
      if (!/^[A-Z]{3}$/.test(c)) throw usage(`--currencies: '${c}' is not a currency code like USD`);
    if (kinds.includes('calendar') && currencies.length === 0)
      throw usage('--labs calendar needs --currencies (e.g. --currencies USD,EUR)');
    if (kinds.some((k) => k !== 'calendar') && instruments.length === 0)
      throw usage(
        `--labs ${kinds.filter((k) => k !== 'calendar').join(',')} needs --instruments (e.g. --instruments EUR_USD)`,
      );
    if ((a.prices || a.financing) && instruments.length === 0)
      throw usage(`--${a.prices ? 'prices' : 'financing'} needs --instruments (e.g. --instruments EUR_USD)`);
    if (a.prices && a.once)
      throw usage(
        '--once records labs and financing once; --prices records the stream until stopped: leave one of them out',
      );
    if (kinds.length === 0 && !a.prices && !a.financing)
      throw usage('nothing to record: give --labs kinds, --prices or --financing');
    for (const k of ['flush-ticks', 'flush-ms'] as const)
      if (!(Number.isInteger(a[k]) && a[k] > 0))
        throw usage(`--${k} must be a whole number above 0 (got ${a[k]})`);

    const [{ environment }, { V20Labs }, { v20Client }] = await Promise.all([
      import('../adapters/v20/environments.ts'),
      import('../adapters/v20/labs.ts'),
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
      if (!(env.name === 'sandbox' && e instanceof AuthError && e.code === 'AUTH_NO_TOKEN')) throw e;
    }
    const log = createLogger({ level: process.env.FXFLOW_LOG_LEVEL ?? 'warn' });
    const { http, rest } = await v20Client(env, token, log);
    const root = catalogFolder(a.catalog);
    const every = a['every-ms'];
    const stamp = (): string => new Date().toISOString();
    try {
      // Prices and financing are an account's: the one named, or the first the token sees.
      let accountID: string | null = null;
      if (a.prices || a.financing) {
        accountID = a.account ?? (await rest.accounts())[0]?.id ?? null;
        if (accountID === null) throw usage(`the token sees no v20 account on ${env.name}: give --account`);
      }
      const recording = [...kinds, ...(a.prices ? ['prices'] : []), ...(a.financing ? ['financing'] : [])];
      const { replaced } = checkManifest(
        root,
        { environment: env.name, accountID, instruments, currencies, kinds: recording },
        a['allow-mismatch'] === true,
      );
      if (replaced)
        process.stderr.write(
          `record: ${root}/recording.json named another account or instrument set; replaced (--allow-mismatch), the earlier one kept under "previous"\n`,
        );

      const labsWriter = kinds.length > 0 ? await LabsWriter.open(root) : undefined;
      for (const r of labsWriter?.repaired ?? [])
        process.stderr.write(
          `repaired ${r.file}: dropped ${r.bytes} bytes of a line cut short (it is fetched again)\n`,
        );
      const ticks = a.prices ? TickWriter.open(root, instruments) : undefined;
      for (const r of ticks?.repaired ?? [])
        process.stderr.write(
          `repaired ${r.file}: cut ${r.bytes} bytes of a block cut short (the ticks of the complete blocks before it are kept)\n`,
        );
      const finWriter = a.financing ? FinancingWriter.open(root) : undefined;
      for (const r of finWriter?.repaired ?? [])
        process.stderr.write(
          `repaired ${r.file}: dropped ${r.bytes} bytes of a line cut short (the day's rates are read again)\n`,
        );

      const poller = labsWriter
        ? new LabsPoller({
            labs: new V20Labs(http),
            identity: labsWriter.identity,
            ...(kinds.includes('calendar') ? { calendar: currencies } : {}),
            ...(kinds.includes('signals') ? { signals: instruments } : {}),
            ...(kinds.includes('spreads') ? { spreads: instruments } : {}),
            ...(kinds.includes('cot') ? { cot: instruments } : {}),
            ...(every !== undefined
              ? { every: { calendar: every, signals: every, spreads: every, cot: every } }
              : {}),
            requestsPerMinute: a['requests-per-minute'],
          })
        : undefined;
      const financing = finWriter
        ? new FinancingRecorder({ rest, accountID: accountID!, instruments, writer: finWriter })
        : undefined;
      const checkFinancing = async (): Promise<void> => {
        if (!financing) return;
        try {
          const { day, written } = await financing.check();
          if (written.length > 0)
            process.stdout.write(
              `${stamp()} financing ${day}: recorded ${written.length} instrument${written.length === 1 ? '' : 's'} (${written.map((r) => `${r.instrument} long ${r.longRate} short ${r.shortRate}`).join(', ')})\n`,
            );
        } catch (e) {
          financing.stats.failures++;
          financing.stats.lastError = (e as Error).message;
        }
      };
      const report = (): void => {
        if (poller) {
          const s = poller.stats;
          process.stderr.write(
            `record: ${s.polls} polls, ${s.items} items, ${s.failures} failures${s.deferred ? `, ${s.deferred} deferred by the rate budget` : ''}${s.lastError ? ` (last: ${s.lastError})` : ''}\n`,
          );
        }
        if (prices) {
          const s = prices.stats;
          const st = prices.streamStats;
          process.stderr.write(
            `record: ${ticks!.written} ticks written in ${s.flushes} flushes, ${ticks!.stale} repeated or older ticks not recorded, ${s.heartbeats} heartbeats, ${st.reconnects} reconnects, ${st.malformed + s.malformed} malformed lines skipped\n`,
          );
        }
        if (financing) {
          const s = financing.stats;
          process.stderr.write(
            `record: financing ${s.days} days recorded (${s.records} records) in ${s.checks} checks, ${s.failures} failures${s.lastError ? ` (last: ${s.lastError})` : ''}\n`,
          );
        }
      };
      let prices: PriceRecorder | undefined;
      if (a.once) {
        if (poller) labsWriter!.append(await poller.poll());
        await checkFinancing();
        report();
        return;
      }
      let failed: Error | undefined;
      await new Promise<void>((done) => {
        const timers: NodeJS.Timeout[] = [];
        const stop = (): void => {
          poller?.stop();
          prices?.stop();
          for (const t of timers) clearInterval(t);
          clearInterval(hold);
          done();
        };
        // Nothing else holds the process (the timers are unref'd): this does, until a signal.
        const hold = setInterval(() => {}, 1 << 30);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        poller?.start(
          (items) => {
            labsWriter!.append(items);
            process.stdout.write(
              `${stamp()} recorded ${items.length} item${items.length === 1 ? '' : 's'} (${poller.stats.items} in all)\n`,
            );
          },
          Math.max(10, Math.min(every ?? 5000, 5000)),
        );
        if (ticks) {
          prices = new PriceRecorder({
            http,
            accountID: accountID!,
            instruments,
            writer: ticks,
            flushTicks: a['flush-ticks'],
            flushMs: a['flush-ms'],
            onFlush: (n) =>
              process.stdout.write(
                `${stamp()} flushed ${n} tick${n === 1 ? '' : 's'} (${ticks.written} in all)\n`,
              ),
            onError: (e) => {
              // A wrong account or token: the stream cannot go on; the rest stops with it.
              failed = e;
              stop();
            },
          });
          prices.start();
          process.stdout.write(
            `${stamp()} pricing stream of ${instruments.join(',')} (account ${accountID}) opened\n`,
          );
        }
        if (financing) {
          let busy = false;
          const tick = async (): Promise<void> => {
            if (busy) return;
            busy = true;
            try {
              await checkFinancing();
            } finally {
              busy = false;
            }
          };
          void tick();
          const t = setInterval(() => void tick(), Math.max(10, every ?? 60_000));
          t.unref();
          timers.push(t);
        }
      });
      report();
      if (failed) throw failed;
    } finally {
      await http.close();
      await flushLogger(log);
    }
  },
};
