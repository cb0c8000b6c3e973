import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery workers' claim shares the slots between organizations: it walks the endpoints
 * that have pending deliveries and takes each one's oldest due deliveries. This index gives
 * an endpoint's pending deliveries in due order, so a claim reads only the few it may take of
 * each endpoint, whatever the backlog of another.
 */
export class WebhookDeliveriesDuePerEndpoint1764000000351 implements MigrationInterface {
  name = 'WebhookDeliveriesDuePerEndpoint1764000000351';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_endpoint_due_idx`);
  }
}
