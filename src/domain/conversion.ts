/**
 * Quote → home currency conversion, as v20 applies it to every fill.
 *
 * An amount in the instrument's quote currency is converted with the rate worse for the client:
 * gains with `gain`, losses with `loss` (`gainQuoteHomeConversionFactor`,
 * `lossQuoteHomeConversionFactor` on ORDER_FILL). With a pair QUOTE_HOME quoted bid/ask, a gain is
 * sold at the bid and a loss bought at the ask: gain = bid, loss = ask. With the inverse pair
 * HOME_QUOTE: gain = 1/ask, loss = 1/bid (e.g. EUR account, EUR_GBP 0.88890/0.88905: gain 1.124796,
 * loss 1.124986). Otherwise a cross through a third currency multiplies the two legs.
 */
export interface Quote {
  bid: number;
  ask: number;
}

export interface ConversionFactors {
  readonly gain: number;
  readonly loss: number;
}

const ONE: ConversionFactors = { gain: 1, loss: 1 };

/** Thrown when no price path from a currency to the home currency is known yet. */
export class ConversionError extends Error {
  readonly code = 'CONVERSION' as const;
  constructor(
    readonly from: string,
    readonly home: string,
  ) {
    super(
      `cannot convert ${from} to the account currency ${home}: no price of ${from}_${home} or ${home}_${from} ` +
        `(or a cross through USD) has been seen. Add one of these instruments to the run's data, ` +
        `or choose an account currency of ${from}.`,
    );
    this.name = 'ConversionError';
  }
}

const VIA = ['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'AUD', 'CAD', 'NZD'];

/**
 * Conversion factors from the latest quotes. `quotes` is shared with the broker and updated in
 * place, so factors always reflect the prices seen so far.
 */
export class HomeConversion {
  constructor(
    readonly home: string,
    private readonly quotes: ReadonlyMap<string, Quote>,
  ) {}

  /** Factors for a quote currency, or undefined when no path is known. */
  tryFactors(currency: string): ConversionFactors | undefined {
    if (currency === this.home) return ONE;
    const direct = this.#leg(currency, this.home);
    if (direct) return direct;
    for (const via of VIA) {
      if (via === currency || via === this.home) continue;
      const a = this.#leg(currency, via);
      if (!a) continue;
      const b = this.#leg(via, this.home);
      if (!b) continue;
      return { gain: a.gain * b.gain, loss: a.loss * b.loss };
    }
    return undefined;
  }

  factors(currency: string): ConversionFactors {
    const f = this.tryFactors(currency);
    if (!f) throw new ConversionError(currency, this.home);
    return f;
  }

  /** Mid-rate factor, for margin and position value. */
  mid(currency: string): number {
    const f = this.factors(currency);
    return (f.gain + f.loss) / 2;
  }

  #leg(from: string, to: string): ConversionFactors | undefined {
    if (from === to) return ONE;
    const d = this.quotes.get(`${from}_${to}`);
    if (d) return { gain: d.bid, loss: d.ask };
    const i = this.quotes.get(`${to}_${from}`);
    if (i) return { gain: 1 / i.ask, loss: 1 / i.bid };
    return undefined;
  }
}

/** Formats a factor as v20 does: a decimal string with up to 10 significant digits. */
export function formatFactor(x: number): string {
  if (x === 1) return '1';
  const s = String(Number(x.toPrecision(10)));
  return s.includes('e') ? x.toFixed(20).replace(/0+$/, '') : s;
}

/**
 * The extra instruments a run needs so that every traded quote currency converts to the home
 * currency: none when the traded pairs already give a path, else QUOTE_HOME or HOME_QUOTE, else a
 * cross through USD (or EUR). `available` says which instruments have data; `known` which exist.
 */
export function conversionInstruments(
  traded: readonly string[],
  home: string,
  known: (name: string) => boolean,
  available: (name: string) => boolean,
): string[] {
  const chosen = new Set(traded);
  const has = (name: string): boolean => chosen.has(name);
  const leg = (from: string, to: string): boolean =>
    from === to || has(`${from}_${to}`) || has(`${to}_${from}`);
  const pathExists = (q: string): boolean =>
    leg(q, home) || VIA.some((v) => v !== q && v !== home && leg(q, v) && leg(v, home));
  const pick = (from: string, to: string): string | undefined => {
    if (from === to) return undefined;
    for (const name of [`${from}_${to}`, `${to}_${from}`]) if (known(name) && available(name)) return name;
    return undefined;
  };
  const extra: string[] = [];
  for (const name of traded) {
    const quote = name.slice(name.lastIndexOf('_') + 1);
    if (quote === home || pathExists(quote)) continue;
    const direct = pick(quote, home);
    if (direct) {
      chosen.add(direct);
      extra.push(direct);
      continue;
    }
    for (const via of VIA) {
      if (via === quote || via === home) continue;
      const a = leg(quote, via) ? undefined : pick(quote, via);
      const b = leg(via, home) ? undefined : pick(via, home);
      if ((leg(quote, via) || a) && (leg(via, home) || b)) {
        for (const x of [a, b])
          if (x) {
            chosen.add(x);
            extra.push(x);
          }
        break;
      }
    }
  }
  return extra;
}
