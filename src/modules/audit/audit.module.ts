import { Global, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { requestContextMiddleware } from '../../shared/http/request-context';
import { AuditLogReader } from './application/audit-log.port';
import { AuditTrail } from './application/audit-trail.port';
import { ListAuditLog } from './application/list-audit-log.use-case';
import { TypeOrmAuditLogReader, TypeOrmAuditTrail } from './infrastructure/typeorm-audit-trail';
import { AuditLogController } from './interface/http/audit-log.controller';

@Global()
@Module({
  controllers: [AuditLogController],
  providers: [{ provide: AuditTrail, useClass: TypeOrmAuditTrail }, { provide: AuditLogReader, useClass: TypeOrmAuditLogReader }, ListAuditLog],
  exports: [AuditTrail],
})
export class AuditModule implements NestModule {
  /** Every request runs in a context holding its request id, which the audit trail records. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(requestContextMiddleware).forRoutes('{*path}');
  }
}
