import { Injectable } from '@nestjs/common';
import { DatabaseHealth, RedisHealth } from './readiness.port';

export type DatabaseCheck = 'ok' | 'error';
export type MigrationsCheck = 'ok' | 'pending' | 'error';
export type RedisCheck = 'ok' | 'error' | 'not_configured';

export interface Readiness {
  ready: boolean;
  checks: { database: DatabaseCheck; migrations: MigrationsCheck; redis: RedisCheck };
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
 * Whether this process can serve traffic: the database answers, its schema has every migration
 * of this build, and Redis answers when configured. Each check is bounded in time, so a probe
 * never hangs on a dependency that does not answer.
 */
@Injectable()
export class CheckReadiness {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly redis: RedisHealth,
  ) {}

  async execute(): Promise<Readiness> {
    const [database, migrations, redis] = await Promise.all([this.checkDatabase(), this.checkMigrations(), this.checkRedis()]);
    return {
      ready: database === 'ok' && migrations === 'ok' && (redis === 'ok' || redis === 'not_configured'),
      checks: { database, migrations, redis },
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

  private async checkRedis(): Promise<RedisCheck> {
    if (!this.redis.configured()) return 'not_configured';
    try {
      await within(this.redis.ping(), CHECK_TIMEOUT_MS);
      return 'ok';
    } catch {
      return 'error';
    }
  }
}
