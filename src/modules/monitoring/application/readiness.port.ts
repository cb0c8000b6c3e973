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
  /**
   * Whether the rate limiter counts in Redis right now. False while Redis is unreachable or hangs:
   * requests are then limited in each process's memory (degraded, still serving). No I/O: the
   * rate limiter's circuit is the one judge of Redis, so a probe never waits on a hung Redis.
   */
  abstract reachable(): boolean;
}
