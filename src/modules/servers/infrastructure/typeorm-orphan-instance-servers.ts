import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { OrphanInstanceServers } from '../application/orphan-instances.port';

@Injectable()
export class TypeOrmOrphanInstanceServers extends OrphanInstanceServers {
  constructor(private readonly db: Db) {
    super();
  }

  async goneAmong(serverIds: readonly string[]): Promise<string[]> {
    if (serverIds.length === 0) return [];
    const rows = await this.db.query<{ id: string }>(
      `SELECT x.id FROM unnest($1::text[]) AS x(id)
         LEFT JOIN servers s ON s.id = x.id
        WHERE (s.id IS NULL OR s.deleted_at IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.vm_id = x.id AND o.status IN ('pending', 'running'))
        ORDER BY x.id`,
      [serverIds],
    );
    return rows.map((r) => r.id);
  }
}
