import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery workers' claim counts an endpoint's deliveries in flight (pending, under a lease
 * that has not ended) to keep it at 4 at once. With the index on `endpoint_id` alone that count
 * read every pending delivery of the endpoint, so a claim grew slower as the backlog it was
 * meant to work off grew; with `locked_until` in the key it reads the ones in flight only.
 */
export class WebhookDeliveriesInFlight1764000000330 implements MigrationInterface {
  name = 'WebhookDeliveriesInFlight1764000000330';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX webhook_deliveries_pending_endpoint_idx;
      CREATE INDEX webhook_deliveries_pending_endpoint_idx ON webhook_deliveries (endpoint_id, locked_until) WHERE status = 'pending';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX webhook_deliveries_pending_endpoint_idx;
      CREATE INDEX webhook_deliveries_pending_endpoint_idx ON webhook_deliveries (endpoint_id) WHERE status = 'pending';
    `);
  }
}
