import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One unfinished vm.* or template.* operation per server (servers.md): a unique partial index on
 * operations (vm_id). Volume operations also name their server in vm_id and are not counted here
 * (they count only against DELETE /v1/servers/{id}, which reads operations_unfinished_vm_idx).
 */
export class OneUnfinishedServerOperation1764000000270 implements MigrationInterface {
  name = 'OneUnfinishedServerOperation1764000000270';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNIQUE INDEX operations_one_unfinished_server_op ON operations (vm_id)
        WHERE status IN ('pending', 'running') AND vm_id IS NOT NULL AND (type LIKE 'vm.%' OR type LIKE 'template.%')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX operations_one_unfinished_server_op`);
  }
}
