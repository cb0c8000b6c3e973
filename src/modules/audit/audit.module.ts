import { Global, Module } from '@nestjs/common';
import { AuditTrail } from './application/audit-trail.port';
import { TypeOrmAuditTrail } from './infrastructure/typeorm-audit-trail';

@Global()
@Module({
  providers: [{ provide: AuditTrail, useClass: TypeOrmAuditTrail }],
  exports: [AuditTrail],
})
export class AuditModule {}
