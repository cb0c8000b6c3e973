import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OperationsModule } from '../operations/operations.module';
import { ServersModule } from '../servers/servers.module';
import { WalletModule } from '../wallet/wallet.module';
import { EventOutboxModule } from '../webhooks/event-outbox.module';
import { ReconcileReservedIps } from './application/reconcile-reserved-ips.use-case';
import { AssignIpExecutor, ReleaseIpExecutor, RenewIpExecutor, ReserveIpExecutor, UnassignIpExecutor } from './application/reserved-ip-executors';
import { ReservedIpTerms } from './application/reserved-ip-terms.use-case';
import { AssignIp, ReleaseIp, RenewIp, ReserveIp, ReservedIpQueries, UnassignIp, UpdateIp } from './application/reserved-ip.use-cases';
import { ReservedIpRepository } from './application/reserved-ips.port';
import { TypeOrmReservedIpRepository } from './infrastructure/typeorm-reserved-ips.repository';
import { ReservedIpsController } from './interface/http/reserved-ips.controller';

/**
 * Reserved IPv4 addresses: addresses of a region's pool, prepaid for a term, assigned to one
 * server at a time and kept after it. The compute provider routes them (assign, unassign); the
 * term sweep suspends and releases them (ReservedIpTerms); the reconciliation sweep repairs an
 * assignment the database and the provider disagree on (ReconcileReservedIps).
 */
@Module({
  imports: [OperationsModule, WalletModule, IdempotencyModule, AuditModule, ServersModule, EventOutboxModule],
  controllers: [ReservedIpsController],
  providers: [
    { provide: ReservedIpRepository, useClass: TypeOrmReservedIpRepository },
    ReserveIp,
    AssignIp,
    UnassignIp,
    RenewIp,
    ReleaseIp,
    UpdateIp,
    ReservedIpQueries,
    ReserveIpExecutor,
    AssignIpExecutor,
    UnassignIpExecutor,
    RenewIpExecutor,
    ReleaseIpExecutor,
    ReservedIpTerms,
    ReconcileReservedIps,
  ],
  exports: [ReservedIpRepository, ReservedIpTerms, ReconcileReservedIps],
})
export class ReservedIpsModule {}
