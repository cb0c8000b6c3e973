import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { DatabaseHealth } from '../application/readiness.port';

@Injectable()
export class TypeOrmDatabaseHealth extends DatabaseHealth {
  constructor(private readonly db: Db) {
    super();
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async pendingMigrations(): Promise<string[]> {
    const dataSource = this.db.dataSource;
    const table = dataSource.options.migrationsTableName ?? 'migrations';
    const applied = new Set((await this.db.query<{ name: string }>(`SELECT name FROM "${table}"`)).map((r) => r.name));
    return dataSource.migrations.map((m) => m.name ?? m.constructor.name).filter((name) => !applied.has(name));
  }
}
