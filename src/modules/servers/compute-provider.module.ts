import { Module } from '@nestjs/common';
import { ComputeGateway } from './application/compute-gateway';
import { ComputeHealth, ComputeProvider } from './application/compute-provider.port';
import { SimulatedComputeProvider } from './infrastructure/simulated-compute-provider';

/**
 * The compute provider: the ComputeProvider adapter (the simulated one; a real provider's adapter
 * replaces it here) behind the ComputeGateway (circuit, failure classes), which is also the
 * ComputeHealth that purchases, power actions, deletes, consoles and GET /v1/ready consult. One
 * gateway per process. Seeded servers' instances are adopted by the database (migration
 * 1764000000272's trigger), not here.
 */
@Module({
  providers: [{ provide: ComputeProvider, useClass: SimulatedComputeProvider }, ComputeGateway, { provide: ComputeHealth, useExisting: ComputeGateway }],
  exports: [ComputeProvider, ComputeGateway, ComputeHealth],
})
export class ComputeProviderModule {}
