import { Injectable } from '@nestjs/common';
import { goneAmong } from '../../../shared/database/gone-among';
import { Db } from '../../../shared/database/transaction';
import { OrphanInstanceServers } from '../application/orphan-instances.port';

@Injectable()
export class TypeOrmOrphanInstanceServers extends OrphanInstanceServers {
  constructor(private readonly db: Db) {
    super();
  }

  goneAmong(serverIds: readonly string[]): Promise<string[]> {
    return goneAmong(this.db, 'servers', 'o.vm_id = x.id', serverIds);
  }
}
