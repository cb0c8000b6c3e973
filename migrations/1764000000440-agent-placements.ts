import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * With COMPUTE_PROVIDER=agent, which host agent holds each server's instance and each volume's
 * disk (docs/explanation/host-agent.md "Placement"). A row is written, once, before the first
 * creating call to that agent, so a call retried after a lost answer goes to the same host and
 * never makes a second instance or disk elsewhere. `firewall_pushes` holds the servers whose
 * firewall rules changed and have not yet been applied at their provider (written in the rule's
 * transaction, removed once applied).
 */
export class AgentPlacements1764000000440 implements MigrationInterface {
  name = 'AgentPlacements1764000000440';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_placements (
        resource_id text PRIMARY KEY,
        agent text NOT NULL CHECK (agent <> ''),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE firewall_pushes (
        server_id text PRIMARY KEY REFERENCES servers (id) ON DELETE CASCADE,
        requested_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX firewall_pushes_requested_idx ON firewall_pushes (requested_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE firewall_pushes; DROP TABLE agent_placements;');
  }
}
