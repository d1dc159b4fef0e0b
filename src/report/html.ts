import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { codeFile } from '../domain/package-root.ts';

const PAGE = codeFile('report/page');
const require = createRequire(import.meta.url);

let chartsBundle: string | undefined;

/**
 * TradingView Lightweight Charts' standalone production build (defines `LightweightCharts`), read
 * from the installed package and inlined: a report needs no network. Its licence header stays in it.
 */
export function lightweightChartsBundle(): string {
  // The package exports only its ES module; the standalone build sits beside package.json.
  const dir = dirname(require.resolve('lightweight-charts/package.json'));
  chartsBundle ??= readFileSync(join(dir, 'dist', 'lightweight-charts.standalone.production.js'), 'utf8');
  return chartsBundle;
}

/** The attribution the Lightweight Charts licence asks for (its NOTICE text and a link to TradingView). */
export const ATTRIBUTION =
  'Charts by <a href="https://www.tradingview.com/">TradingView</a> Lightweight Charts™, Copyright (c) 2025 TradingView, Inc. https://www.tradingview.com/ (Apache License 2.0)';

/**
 * A column of a page's packed data (pack.ts): `length` numbers, each computed by `at` as it is
 * written (from the columns a run folded: a report allocates no array per column), NaN where the
 * page reads null. It iterates as the numbers; JSON.stringify writes it as the array it stands for
 * (NaN as null, as for a number); writePage streams it.
 */
export class PackedColumn implements Iterable<number> {
  readonly #at: (i: number) => number;
  readonly #n: number;
  constructor(n: number, at: (i: number) => number) {
    this.#n = n;
    this.#at = at;
  }
  /** A column of the numbers of `xs` as they are when it is written. */
  static of(xs: ArrayLike<number>, n = xs.length): PackedColumn {
    return new PackedColumn(n, (i) => xs[i]!);
  }
  get length(): number {
    return this.#n;
  }
  at(i: number): number {
    return this.#at(i);
  }
  *[Symbol.iterator](): Iterator<number> {
    for (let i = 0; i < this.#n; i++) yield this.#at(i);
  }
  toJSON(): number[] {
    return Array.from(this);
  }
}

/** JSON that is safe inside a <script> element (no "</script>", no HTML comment openers). */
export function scriptJson(x: unknown): string {
  return JSON.stringify(x)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/**
 * `zone`: the IANA zone a run page says times in (its report.timeZone; absent: UTC). Every page
 * inlines human-time.cjs (the one time formatter, report.txt's too) before common.js; a zone other
 * than UTC is set on `fx.zone` right after common.js, before the page's scripts draw anything.
 */
type PageOptions = {
  title: string;
  data: unknown;
  scripts: readonly string[];
  charts?: boolean;
  zone?: string | undefined;
};

/** The page around its data block: what comes before the data's JSON, and what after. */
function shell(o: PageOptions): [string, string] {
  const css = readFileSync(join(PAGE, 'report.css'), 'utf8');
  const read = (f: string): string => readFileSync(join(PAGE, f), 'utf8');
  const inZone = o.zone !== undefined && o.zone !== 'UTC' ? [`fx.zone = ${scriptJson(o.zone)};`] : [];
  const js = [read('human-time.cjs'), read('common.js'), ...inZone, ...o.scripts.map(read)];
  const before = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(o.title)}</title>
<style>${css}</style>
</head>
<body>
<noscript><p class="warn">This report draws its charts and tables with JavaScript: allow scripts for this file.</p></noscript>
<main id="app"><p id="loading">Loading the report…</p></main>
<footer class="attribution">${o.charts === false ? '' : `${ATTRIBUTION}. `}Made by fxflow.</footer>
<script type="application/json" id="fxflow-data">`;
  const after = `</script>
${o.charts === false ? '' : `<script>${lightweightChartsBundle().replace(/<\/script/gi, '<\\/script')}</script>`}
${js.map((s) => `<script>${s.replace(/<\/script/gi, '<\\/script')}</script>`).join('\n')}
</body>
</html>
`;
  return [before, after];
}

/**
 * One self-contained page: the stylesheet, the chart library, the data (JSON) and the page's
 * scripts, all inline. `scripts` are files of src/report/page/.
 */
export function page(o: PageOptions): string {
  const [before, after] = shell(o);
  return before + scriptJson(o.data) + after;
}

/**
 * Writes the same page as `page` straight to a file, the data's JSON piece by piece (objects and
 * arrays down to `depth` levels are written a member at a time): the page is never one string in
 * memory, nor is its data. Returns the bytes written.
 */
export function writePage(path: string, o: PageOptions, depth = 3): number {
  const fd = openSync(path, 'w');
  let bytes = 0;
  // Small pieces are gathered into writes of about 64 KiB.
  let buf = '';
  const flush = (): void => {
    if (buf !== '') bytes += writeSync(fd, buf);
    buf = '';
  };
  const put = (s: string): void => {
    if (s.length > 65_536) {
      flush();
      bytes += writeSync(fd, s);
    } else if ((buf += s).length > 65_536) flush();
  };
  const json = (x: unknown, d: number): void => {
    if (x instanceof PackedColumn) {
      // A typed column (pack.ts PackedColumn) at any depth: its numbers as JSON.stringify writes
      // them (a non-finite one as null), a number at a time, never an array or a string of it all.
      put('[');
      for (let i = 0; i < x.length; i++) {
        const v = x.at(i);
        put(i === 0 ? (Number.isFinite(v) ? String(v) : 'null') : Number.isFinite(v) ? `,${v}` : ',null');
      }
      put(']');
    } else if (d > 0 && Array.isArray(x)) {
      put('[');
      x.forEach((v, i) => {
        if (i > 0) put(',');
        if (v === undefined || typeof v === 'function') put('null');
        else json(v, d - 1);
      });
      put(']');
    } else if (
      d > 0 &&
      typeof x === 'object' &&
      x !== null &&
      !(x instanceof Map) &&
      typeof (x as { toJSON?: unknown }).toJSON !== 'function'
    ) {
      put('{');
      let first = true;
      for (const [k, v] of Object.entries(x)) {
        if (v === undefined || typeof v === 'function') continue;
        put(`${first ? '' : ','}${scriptJson(k)}:`);
        first = false;
        json(v, d - 1);
      }
      put('}');
    } else put(scriptJson(x));
  };
  try {
    const [before, after] = shell(o);
    put(before);
    json(o.data, depth);
    put(after);
    flush();
  } finally {
    closeSync(fd);
  }
  return bytes;
}
