/** The database as readiness sees it: reachable, and with every migration of this build applied. */
export abstract class DatabaseHealth {
  /** Resolves when the database answers `SELECT 1`; rejects otherwise. */
  abstract ping(): Promise<void>;
  /** Names of this build's migrations the database has not applied (empty when up to date). */
  abstract pendingMigrations(): Promise<string[]>;
}

/** Redis (shared rate-limit counters), when REDIS_URL configures one. */
export abstract class RedisHealth {
  abstract configured(): boolean;
  /** Resolves when Redis answers PING; rejects otherwise. */
  abstract ping(): Promise<void>;
}
