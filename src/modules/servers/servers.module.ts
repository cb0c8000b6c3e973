import { Module } from '@nestjs/common';
import { ServerQueries } from './application/server-queries';
import { ServerReads, ServerWrites } from './application/servers.port';
import { UpdateServer } from './application/update-server.use-case';
import { TypeOrmServerWrites } from './infrastructure/typeorm-server-writes';
import { TypeOrmServerReads } from './infrastructure/typeorm-server-reads';
import { ComputeProviderModule } from './compute-provider.module';
import { ServersController } from './interface/http/servers.controller';

/** Servers (VPS): reads and edits of the organization's servers, bought or seeded. */
@Module({
  imports: [ComputeProviderModule],
  controllers: [ServersController],
  providers: [{ provide: ServerReads, useClass: TypeOrmServerReads }, { provide: ServerWrites, useClass: TypeOrmServerWrites }, ServerQueries, UpdateServer],
  exports: [ServerReads, ComputeProviderModule],
})
export class ServersModule {}
