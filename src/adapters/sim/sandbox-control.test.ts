import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../domain/v20/index.ts';
import { simBroker } from './factory.ts';
import { SandboxSim } from './sandbox-control.ts';
import { instruments, T0 } from './testkit.ts';

const settings = {
  instruments: instruments(),
  account: { currency: 'USD', balance: '10000', marginRate: '0.02' },
};

describe('SandboxSim: the sandbox-only controls, out of the broker every mode uses', () => {
  it('the one factory makes both; only the sandbox kind has the controls', () => {
    const plain = simBroker(settings);
    expect('configure' in plain).toBe(false);
    expect('trailingStopValue' in plain).toBe(false);
    expect(simBroker(settings, SandboxSim)).toBeInstanceOf(SandboxSim);
  });

  it('configure emits one CLIENT_CONFIGURE with the alias and margin rate, and refuses a rate outside (0, 1]', () => {
    const sim = simBroker(settings, SandboxSim);
    sim.start(T0);
    const seen: Transaction[] = [];
    sim.listen((tx) => seen.push(tx));
    sim.configure({ alias: 'Main', marginRate: '0.05' });
    expect(seen.map((t) => t.type)).toEqual(['CLIENT_CONFIGURE']);
    expect(seen[0]).toMatchObject({ alias: 'Main', marginRate: '0.05' });
    expect(() => sim.configure({ marginRate: '1.5' })).toThrow(
      /marginRate must be a decimal in \(0, 1\], got '1.5'/,
    );
    expect(sim.trailingStopValue('999')).toBeUndefined();
  });
});
