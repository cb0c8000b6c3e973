import { Module } from '@nestjs/common';
import { ServerQueries } from './application/server-queries';
import { ServerReads, ServerWrites } from './application/servers.port';
import { UpdateServer } from './application/update-server.use-case';
import { TypeOrmServerWrites } from './infrastructure/typeorm-server-writes';
import { TypeOrmServerReads } from './infrastructure/typeorm-server-reads';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { CreateServerConsole } from './application/create-console.use-case';
import { ComputeProviderModule } from './compute-provider.module';
import { ConsoleController } from './interface/http/console.controller';
import { ServersController } from './interface/http/servers.controller';

/** Servers (VPS): reads and edits of the organization's servers, bought or seeded. */
@Module({
  imports: [ComputeProviderModule, IdempotencyModule],
  controllers: [ServersController, ConsoleController],
  providers: [{ provide: ServerReads, useClass: TypeOrmServerReads }, { provide: ServerWrites, useClass: TypeOrmServerWrites }, ServerQueries, UpdateServer, CreateServerConsole],
  exports: [ServerReads, ComputeProviderModule],
})
export class ServersModule {}
