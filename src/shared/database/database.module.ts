import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Settings } from '../config/settings';
import { OpenDatabase, openDatabase } from './data-source';
import { Db, TypeOrmUnitOfWork, UnitOfWork } from './transaction';

export const OPEN_DATABASE = 'OPEN_DATABASE';

@Global()
@Module({
  providers: [
    { provide: OPEN_DATABASE, inject: [Settings], useFactory: (settings: Settings) => openDatabase(settings) },
    { provide: DataSource, inject: [OPEN_DATABASE], useFactory: (db: OpenDatabase) => db.dataSource },
    Db,
    { provide: UnitOfWork, useClass: TypeOrmUnitOfWork },
  ],
  exports: [DataSource, Db, UnitOfWork, OPEN_DATABASE],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(OPEN_DATABASE) private readonly database: OpenDatabase) {}

  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}
