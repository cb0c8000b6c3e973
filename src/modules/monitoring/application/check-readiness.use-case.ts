import { Injectable } from '@nestjs/common';
import { ComputeHealth } from '../../servers/application/compute-provider.port';
import { ProviderHealth } from '../../storage-provider/application/block-storage.port';
import { DatabaseHealth, RedisHealth } from './readiness.port';

export type DatabaseCheck = 'ok' | 'error';
export type MigrationsCheck = 'ok' | 'pending' | 'error';
/** degraded: configured but unreachable or hanging; requests are served, rate limited in each process's memory. */
export type RedisCheck = 'ok' | 'degraded' | 'not_configured';
/** down: the storage provider's circuit is open in this process (new disk actions answer 503); reported, never decides. */
export type ProviderCheck = 'ok' | 'down';

export interface Readiness {
  ready: boolean;
  checks: { database: DatabaseCheck; migrations: MigrationsCheck; redis: RedisCheck; provider: ProviderCheck; compute_provider: ProviderCheck };
}

/** How long one dependency may take to answer before readiness counts it as down. */
export const CHECK_TIMEOUT_MS = 2000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether this process can serve traffic: the database answers and its schema has every migration
 * of this build. Each check is bounded in time, so a probe never hangs on a dependency that does
 * not answer. Redis is reported but does not decide: without it requests are still served (rate
 * limited in each process's memory), and a load balancer must not pull every instance at once.
 * The storage provider is reported the same way (lifecycle.md: GET /v1/ready reports it but stays
 * 200): its outage stops new disk actions, not the service; and the compute provider likewise
 * (servers.md: `checks.compute_provider`), whose outage stops new server purchases, power actions,
 * deletes and consoles.
 */
@Injectable()
export class CheckReadiness {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly redis: RedisHealth,
    private readonly provider: ProviderHealth,
    private readonly compute: ComputeHealth,
  ) {}

  async execute(): Promise<Readiness> {
    const [database, migrations] = await Promise.all([this.checkDatabase(), this.checkMigrations()]);
    const redis = this.checkRedis();
    return {
      ready: database === 'ok' && migrations === 'ok',
      checks: { database, migrations, redis, provider: this.provider.isDown() ? 'down' : 'ok', compute_provider: this.compute.isDown() ? 'down' : 'ok' },
    };
  }

  private async checkDatabase(): Promise<DatabaseCheck> {
    try {
      await within(this.database.ping(), CHECK_TIMEOUT_MS);
      return 'ok';
    } catch {
      return 'error';
    }
  }

  private async checkMigrations(): Promise<MigrationsCheck> {
    try {
      const pending = await within(this.database.pendingMigrations(), CHECK_TIMEOUT_MS);
      return pending.length === 0 ? 'ok' : 'pending';
    } catch {
      return 'error';
    }
  }

  private checkRedis(): RedisCheck {
    if (!this.redis.configured()) return 'not_configured';
    return this.redis.reachable() ? 'ok' : 'degraded';
  }
}
