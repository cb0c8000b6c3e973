import { Global, Module } from '@nestjs/common';
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
export class AuditModule {}
