import { describe, expect, it } from 'vitest';
import { conversionInstruments, formatFactor, HomeConversion, type Quote } from './conversion.ts';

const KNOWN = new Set(['EUR_USD', 'GBP_USD', 'USD_JPY', 'EUR_GBP', 'EUR_JPY', 'AUD_USD', 'XAU_USD']);
const known = (n: string): boolean => KNOWN.has(n);

describe('conversionInstruments', () => {
  it('needs nothing when the quote is the home currency or a traded pair converts it', () => {
    expect(conversionInstruments(['EUR_USD'], 'USD', known, known)).toEqual([]);
    expect(conversionInstruments(['USD_JPY'], 'USD', known, known)).toEqual([]);
    expect(conversionInstruments(['EUR_GBP', 'EUR_USD'], 'EUR', known, known)).toEqual([]);
  });

  it('adds the direct or inverse pair when it has data, else a cross through USD', () => {
    expect(conversionInstruments(['GBP_USD'], 'EUR', known, known)).toEqual(['EUR_USD']);
    expect(conversionInstruments(['USD_JPY'], 'EUR', known, known)).toEqual(['EUR_JPY']);
    const noEurJpy = (n: string): boolean => known(n) && n !== 'EUR_JPY';
    expect(conversionInstruments(['USD_JPY'], 'EUR', known, noEurJpy)).toEqual(['EUR_USD']);
    expect(conversionInstruments(['AUD_USD', 'XAU_USD'], 'GBP', known, known)).toEqual(['GBP_USD']);
  });
});

describe('HomeConversion', () => {
  const quotes = new Map<string, Quote>([
    ['EUR_GBP', { bid: 0.8889, ask: 0.88905 }],
    ['EUR_USD', { bid: 1.1, ask: 1.1002 }],
    ['USD_JPY', { bid: 150, ask: 150.02 }],
  ]);

  it('uses the rate worse for the client: the recorded EUR account / EUR_GBP factors', () => {
    const f = new HomeConversion('EUR', quotes).factors('GBP');
    expect(f.gain).toBeCloseTo(1.124796, 6);
    expect(f.loss).toBeCloseTo(1.124986, 6);
  });

  it('crosses through a third currency', () => {
    const f = new HomeConversion('EUR', quotes).factors('JPY');
    expect(f.gain).toBeCloseTo((1 / 150.02) * (1 / 1.1002), 12);
    expect(f.loss).toBeCloseTo((1 / 150) * (1 / 1.1), 12);
  });

  it('names what is missing', () => {
    expect(() => new HomeConversion('CHF', quotes).factors('JPY')).toThrow(
      /cannot convert JPY to the account currency CHF/,
    );
  });

  it('formats factors without exponents', () => {
    expect(formatFactor(1)).toBe('1');
    expect(formatFactor(1 / 0.88905)).toBe('1.124796131');
    expect(formatFactor(1e-7 / 3)).not.toMatch(/e/);
  });
});
