import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Settings } from '../../../../shared/config/settings';
import { PeriodicJob } from '../../../../shared/jobs/periodic-job';
import { FirewallEnforcement } from '../../application/firewall-enforcement';

/**
 * Every FIREWALL_SYNC_INTERVAL_MS (5 s), in worker processes: pushes to the compute provider the
 * firewall rules of servers whose change was not applied after its commit (the provider was
 * unreachable, or the process stopped in between).
 */
@Injectable()
export class FirewallPushJob extends PeriodicJob {
  protected readonly removed = 'servers whose firewall rules were applied at the provider';

  constructor(
    settings: Settings,
    scheduler: SchedulerRegistry,
    private readonly enforcement: FirewallEnforcement,
  ) {
    super('firewall-push-sweep', settings.firewallSyncIntervalMs, settings, scheduler);
  }

  protected runOnce(stopping: () => boolean): Promise<number> {
    return this.enforcement.pushPending(100, undefined, stopping);
  }
}
