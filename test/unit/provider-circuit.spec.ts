import { StepUnavailable } from '../../src/modules/operations/application/operation-executors';
import { CIRCUIT_THRESHOLD, ProviderCircuit } from '../../src/modules/operations/application/provider-circuit';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';

class Unreachable extends Error {}

/** The circuit every provider gateway shares: failure classes, opening and closing. */
describe('ProviderCircuit', () => {
  let pingFails = false;
  let circuit: ProviderCircuit;
  const fail = () => circuit.call(() => Promise.reject(new Unreachable('compute provider timed out')));

  beforeEach(() => {
    pingFails = false;
    circuit = new ProviderCircuit({
      context: 'ComputeProvider',
      label: 'compute provider',
      unavailable: Unreachable,
      ping: () => (pingFails ? Promise.reject(new Unreachable('down')) : Promise.resolve()),
    });
  });

  it('passes answers through; the adapter\'s unavailable error becomes StepUnavailable with its message', async () => {
    await expect(circuit.call(() => Promise.resolve(42))).resolves.toBe(42);
    const err = await fail().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepUnavailable);
    expect((err as Error).message).toBe('compute provider timed out');
  });

  it('an unclassified error is StepUnavailable naming the provider; a DomainError is a final answer and counts as a success', async () => {
    const err = await circuit.call(() => Promise.reject(new TypeError('socket hang up'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepUnavailable);
    expect((err as Error).message).toBe('The compute provider could not be reached: socket hang up');
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) await fail().catch(() => undefined);
    expect(circuit.isDown()).toBe(true);
    const final = new DomainError('invalid_state', 'the guest did not halt');
    await expect(circuit.call(() => Promise.reject(final))).rejects.toBe(final);
    expect(circuit.isDown()).toBe(false);
  });

  it(`opens after ${CIRCUIT_THRESHOLD} consecutive failures, probes included, and closes at the first success`, async () => {
    for (let i = 0; i < CIRCUIT_THRESHOLD - 2; i++) await fail().catch(() => undefined);
    pingFails = true;
    await circuit.probeOnce();
    expect(circuit.isDown()).toBe(false);
    await circuit.probeOnce();
    expect(circuit.isDown()).toBe(true);
    pingFails = false;
    await circuit.probeOnce();
    expect(circuit.isDown()).toBe(false);
    // A success in between starts the count again.
    for (let i = 0; i < CIRCUIT_THRESHOLD - 1; i++) await fail().catch(() => undefined);
    await circuit.call(() => Promise.resolve());
    await fail().catch(() => undefined);
    expect(circuit.isDown()).toBe(false);
  });
});
