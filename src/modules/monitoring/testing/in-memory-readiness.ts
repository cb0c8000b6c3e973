import { DatabaseHealth, RedisHealth } from '../application/readiness.port';

/** A dependency's state for unit tests: up, down (rejects), or hanging (never answers). */
export type FakeState = 'up' | 'down' | 'hanging';

function answer(state: FakeState): Promise<void> {
  if (state === 'up') return Promise.resolve();
  if (state === 'down') return Promise.reject(new Error('connection refused'));
  return new Promise<void>(() => undefined);
}

export class InMemoryDatabaseHealth extends DatabaseHealth {
  state: FakeState = 'up';
  pending: string[] = [];

  ping(): Promise<void> {
    return answer(this.state);
  }

  async pendingMigrations(): Promise<string[]> {
    await answer(this.state);
    return [...this.pending];
  }
}

export class InMemoryRedisHealth extends RedisHealth {
  state: 'up' | 'down' | 'not_configured' = 'not_configured';

  configured(): boolean {
    return this.state !== 'not_configured';
  }

  reachable(): boolean {
    return this.state === 'up';
  }
}
