import { Module } from '@nestjs/common';
import { ReconcileReservedIpsJob } from './interface/reconcile-reserved-ips.job';
import { ReservedIpsModule } from './reserved-ips.module';

/** The reserved addresses' reconciliation sweep, in worker processes (needs ScheduleModule.forRoot() in the application; the CLI does not import it). */
@Module({
  imports: [ReservedIpsModule],
  providers: [ReconcileReservedIpsJob],
})
export class ReservedIpsJobsModule {}
