import { CIRCUIT_THRESHOLD, ProviderGateway } from '../../src/modules/storage-provider/application/provider-gateway';
import { ComputeGateway } from '../../src/modules/servers/application/compute-gateway';
import { TestApp } from './test-app';

/**
 * Takes the simulated storage provider of a test app down (PROVIDER_DOWN, read at every call) and
 * probes it until the circuit is open, or brings it back and probes until the circuit closes:
 * what the process's own probe does within seconds, at once.
 */
export async function setProviderDown(t: TestApp, down: boolean): Promise<void> {
  t.settings.providerDown = down;
  const gateway = t.app.get(ProviderGateway);
  for (let i = 0; i < CIRCUIT_THRESHOLD && gateway.isDown() !== down; i++) await gateway.probeOnce();
  if (gateway.isDown() !== down) throw new Error(`the provider's circuit did not ${down ? 'open' : 'close'}`);
}

/**
 * The same for the simulated compute provider (it reads the same PROVIDER_DOWN): its circuit
 * (ComputeGateway) probed until it opens or closes.
 */
export async function setComputeProviderDown(t: TestApp, down: boolean): Promise<void> {
  t.settings.providerDown = down;
  const gateway = t.app.get(ComputeGateway);
  for (let i = 0; i < CIRCUIT_THRESHOLD && gateway.isDown() !== down; i++) await gateway.probeOnce();
  if (gateway.isDown() !== down) throw new Error(`the compute provider's circuit did not ${down ? 'open' : 'close'}`);
}
