import { Module } from '@nestjs/common';
import { BlockStorage, ProviderHealth } from './application/block-storage.port';
import { ProviderGateway } from './application/provider-gateway';
import { SeededDisks } from './application/seeded-disks.port';
import { SimulatedBlockStorage, SimulatedSeededDisks } from './infrastructure/simulated-block-storage';

/**
 * The storage provider: the BlockStorage adapter (the simulated one; a real provider's adapter
 * replaces it here) behind the ProviderGateway (circuit, failure classes), which is also the
 * ProviderHealth that new actions and GET /v1/ready consult. One gateway per process. Its own
 * module: volumes' steps, a server's deletion (its disks detached) and verification use it, none
 * through another resource module.
 */
@Module({
  providers: [
    { provide: BlockStorage, useClass: SimulatedBlockStorage },
    ProviderGateway,
    { provide: ProviderHealth, useExisting: ProviderGateway },
    { provide: SeededDisks, useClass: SimulatedSeededDisks },
  ],
  exports: [BlockStorage, ProviderGateway, ProviderHealth, SeededDisks],
})
export class StorageProviderModule {}
