import { Module } from '@nestjs/common';
import { AgentHosts } from '../../shared/agent-protocol/agent-hosts';
import { Settings } from '../../shared/config/settings';
import { ComputeGateway } from './application/compute-gateway';
import { ComputeHealth, ComputeProvider, ServableImages } from './application/compute-provider.port';
import { AgentComputeProvider } from './infrastructure/agent-compute-provider';
import { SimulatedComputeProvider } from './infrastructure/simulated-compute-provider';

/**
 * The compute provider: the ComputeProvider adapter chosen by COMPUTE_PROVIDER (the simulated one
 * by default, or host agents) behind the ComputeGateway (circuit, failure classes), which is also
 * the ComputeHealth that purchases, power actions, deletes, consoles and GET /v1/ready consult, and
 * the ServableImages that server-options and purchases offer. One gateway per process. Seeded
 * servers' instances are adopted by the database (migration 1764000000272's trigger), not here.
 */
@Module({
  providers: [
    SimulatedComputeProvider,
    AgentHosts,
    AgentComputeProvider,
    {
      provide: ComputeProvider,
      inject: [Settings, SimulatedComputeProvider, AgentComputeProvider],
      useFactory: (settings: Settings, simulated: SimulatedComputeProvider, agent: AgentComputeProvider) => (settings.computeProvider === 'agent' ? agent : simulated),
    },
    ComputeGateway,
    { provide: ComputeHealth, useExisting: ComputeGateway },
    { provide: ServableImages, useExisting: ComputeGateway },
  ],
  exports: [ComputeProvider, ComputeGateway, ComputeHealth, ServableImages],
})
export class ComputeProviderModule {}
