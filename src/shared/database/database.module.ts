import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Settings } from '../config/settings';
import { OpenDatabase, openDatabase, openWorkerDataSource } from './data-source';
import { DatabaseNotifications } from './database-notifications';
import { OPEN_DATABASE } from './database-tokens';
import { Db, TypeOrmUnitOfWork, TypeOrmWorkerUnitOfWork, UnitOfWork, WorkerUnitOfWork } from './transaction';

export { OPEN_DATABASE } from './database-tokens';

@Global()
@Module({
  providers: [
    { provide: OPEN_DATABASE, inject: [Settings], useFactory: (settings: Settings) => openDatabase(settings) },
    { provide: DataSource, inject: [OPEN_DATABASE], useFactory: (db: OpenDatabase) => db.dataSource },
    Db,
    { provide: UnitOfWork, useClass: TypeOrmUnitOfWork },
    {
      provide: WorkerUnitOfWork,
      inject: [Db, OPEN_DATABASE, Settings],
      useFactory: (db: Db, open: OpenDatabase, settings: Settings) =>
        new TypeOrmWorkerUnitOfWork(db, open.engine === 'postgresql' ? () => openWorkerDataSource(settings, open.url) : undefined),
    },
    DatabaseNotifications,
  ],
  exports: [DataSource, Db, UnitOfWork, WorkerUnitOfWork, OPEN_DATABASE, DatabaseNotifications],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(OPEN_DATABASE) private readonly database: OpenDatabase,
    @Inject(WorkerUnitOfWork) private readonly worker: TypeOrmWorkerUnitOfWork,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.worker.close();
    await this.database.close();
  }
}
