import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Templates (one-click applications) and their deployments on servers (servers.md "Templates and
 * deployments"), and the simulated compute provider's apps.
 *
 * - `templates`: the operator's catalog (seed member `templates`): versions oldest first, the
 *   variables declared, and `simulate` (read by the simulator only).
 * - `deployments`: one template on one server. Non-secret variable values in `variables`; the
 *   secret ones only in `secrets_sealed` (AES-256-GCM, deployment-secrets.ts), never in clear.
 *   An accepted update's target (`pending_*`) is applied when it succeeds and dropped when it
 *   fails (the old version and variables stay). One deployment of a template per server that is
 *   not removed: the unique partial index `deployments_one_per_server_template` (409 conflict).
 * - `provider_apps`, `provider_app_calls`: the simulated provider's apps and the record of each
 *   changing call (idempotent by deployment and `<operation id>/<step>`), as provider_disks and
 *   provider_calls are for disks. The provider keeps the names of the variables it was given,
 *   never their values.
 */
export class TemplatesAndDeployments1764000000310 implements MigrationInterface {
  name = 'TemplatesAndDeployments1764000000310';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE templates (
        id          text PRIMARY KEY,
        name        text NOT NULL,
        versions    text[] NOT NULL CHECK (cardinality(versions) > 0),
        variables   jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(variables) = 'array'),
        simulate    jsonb,
        created_at  timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE deployments (
        id                      text PRIMARY KEY,
        org_id                  text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        server_id               text NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
        template_id             text NOT NULL REFERENCES templates(id),
        version                 text NOT NULL,
        status                  text NOT NULL
          CHECK (status IN ('deploying', 'active', 'failed', 'updating', 'removing', 'removed')),
        health                  text NOT NULL DEFAULT 'unknown' CHECK (health IN ('unknown', 'healthy', 'unhealthy')),
        health_checked_at       timestamptz,
        variables               jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(variables) = 'object'),
        secrets_sealed          text,
        pending_version         text,
        pending_variables       jsonb,
        pending_secrets_sealed  text,
        created_at              timestamptz NOT NULL DEFAULT now(),
        removed_at              timestamptz,
        CONSTRAINT deployments_removed_at CHECK ((status = 'removed') = (removed_at IS NOT NULL))
      );
      CREATE UNIQUE INDEX deployments_one_per_server_template ON deployments (server_id, template_id) WHERE status <> 'removed';
      CREATE INDEX deployments_org_created_idx ON deployments (org_id, created_at DESC, id DESC);
      CREATE INDEX deployments_server_idx ON deployments (server_id) WHERE status <> 'removed';
      CREATE INDEX operations_deployment_idx ON operations (deployment_id, created_at DESC) WHERE deployment_id IS NOT NULL;

      CREATE TABLE provider_apps (
        deployment_id   text PRIMARY KEY,
        server_id       text NOT NULL,
        template_id     text NOT NULL,
        version         text NOT NULL,
        state           text NOT NULL CHECK (state IN ('installed', 'running', 'stopped')),
        variable_names  text[] NOT NULL DEFAULT '{}',
        created_at      timestamptz NOT NULL DEFAULT now(),
        removed_at      timestamptz
      );
      CREATE INDEX provider_apps_live_idx ON provider_apps (server_id) WHERE removed_at IS NULL;

      CREATE TABLE provider_app_calls (
        deployment_id  text NOT NULL,
        step           text NOT NULL,
        action         text NOT NULL,
        response       jsonb,
        created_at     timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (deployment_id, step)
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE IF EXISTS provider_app_calls, provider_apps, deployments, templates;
      DROP INDEX IF EXISTS operations_deployment_idx;
    `);
  }
}
