import { Module } from '@nestjs/common';
import { BlockStorage, ProviderHealth } from './application/block-storage.port';
import { ProviderGateway } from './application/provider-gateway';
import { SeededDisks } from './application/seeded-disks.port';
import { AgentHosts } from '../../shared/agent-protocol/agent-hosts';
import { Settings } from '../../shared/config/settings';
import { AgentBlockStorage } from './infrastructure/agent-block-storage';
import { SimulatedBlockStorage, SimulatedSeededDisks } from './infrastructure/simulated-block-storage';

/**
 * The storage provider: the BlockStorage adapter chosen by COMPUTE_PROVIDER (the storage provider
 * follows the compute one: the simulated one by default, or the host agents' disks) behind the
 * ProviderGateway (circuit, failure classes), which is also the ProviderHealth that new actions and
 * GET /v1/ready consult. One gateway per process. Its own module: volumes' steps, a server's
 * deletion (its disks detached) and verification use it, none through another resource module.
 */
@Module({
  providers: [
    SimulatedBlockStorage,
    AgentHosts,
    AgentBlockStorage,
    {
      provide: BlockStorage,
      inject: [Settings, SimulatedBlockStorage, AgentBlockStorage],
      useFactory: (settings: Settings, simulated: SimulatedBlockStorage, agent: AgentBlockStorage) => (settings.computeProvider === 'agent' ? agent : simulated),
    },
    ProviderGateway,
    { provide: ProviderHealth, useExisting: ProviderGateway },
    { provide: SeededDisks, useClass: SimulatedSeededDisks },
  ],
  exports: [BlockStorage, ProviderGateway, ProviderHealth, SeededDisks],
})
export class StorageProviderModule {}
