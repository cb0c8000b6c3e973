import { TemplateApps } from '../../src/modules/templates/application/template-apps.port';
import { BlockStorage } from '../../src/modules/storage-provider/application/block-storage.port';
import { ComputeProvider } from '../../src/modules/servers/application/compute-provider.port';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AdvanceOperations } from '../../src/modules/operations/application/advance-operations.use-case';
import { VerificationReport, VerifyInvariants } from '../../src/modules/verification/application/verify-invariants.use-case';
import { TypeOrmInvariantChecks } from '../../src/modules/verification/infrastructure/typeorm-invariant-checks';
import { Db } from '../../src/shared/database/transaction';
import { UnitOfWork } from '../../src/shared/database/unit-of-work';
import { SystemClock } from '../../src/shared/kernel/clock/clock';
import { usingPostgres } from '../support/database';
import { apiToken, bearer, organization, orgWithDetachedVolumes, region } from '../support/fixtures';
import { ROOT, runCli, tempDir } from '../support/processes';
import { TestApp, startTestApp } from '../support/test-app';
import { driftRegionCounter } from '../support/region-slots';

const CHECKS = [
  'wallet.available_matches_ledger',
  'wallet.reserved_matches_holds',
  'operations.succeeded_captured_once',
  'operations.failed_released_once',
  'operations.unfinished_not_settled',
  'operations.unfinished_leased',
  'servers.within_per_server_limit',
  'regions.used_gb_matches_volumes',
  'provider.disks_match_volumes',
  'access.keys_and_rules_canonical_within_limits',
  'accounts.organizations_per_user',
  'regions.vcpus_used_matches_servers',
  'servers.no_disk_on_deleted_server',
  'servers.deleted_by_succeeded_delete',
  'servers.deleting_has_operation',
  'servers.one_unfinished_operation',
  'servers.purchase_captured_once',
  'webhooks.deliveries_on_schedule',
  'wallet.ledger_chain',
  'top_ups.credited_once',
  'wallet.adjustments_once',
  'top_ups.refunds_debited_once',
  'top_ups.refunded_within_amount',
  'provider.instances_match_servers',
  'terms.deadlines_met',
  'terms.suspended_volume_detached',
  'terms.auto_renew_once_per_term',
  'snapshots.charged_once',
  'snapshots.counts_match',
  'provider.snapshots_match',
  'images.charged_once',
  'images.counts_match',
  'provider.images_match',
  'reserved_ips.held_once',
  'reserved_ips.charged_once',
  'reserved_ips.assignments_match',
  'resizes.reservations_in_flight',
  'servers.ipv6_unique_in_region_prefix',
  'networks.attachments_valid',
  'provider.addresses_match_servers',
  'provider.apps_match_deployments',
];

/** Organizations, one per invariant to break, each with two detached 100 GB volumes (2.00000 USD a month). */
const SUFFIXES = ['av', 'rs', 'sc', 'fr', 'us', 'ul', 'sv', 'pd', 'wd', 'ok'];

/**
 * `verify`: on a database left by real traffic (renewals succeeded, failed, pending) every check
 * holds; then each invariant is broken by direct SQL, in its own organization, so that it breaks
 * that invariant alone (balances adjusted where a ledger row is touched; triggers bypassed with
 * session_replication_role where the append-only ledger must be rewritten), and verify names each.
 */
describe('verify: invariants of money, operations and servers', () => {
  let t: TestApp;
  let verify: VerifyInvariants;
  const ops: Record<string, string> = {};

  /** Writes as a superuser session with triggers off (the ledger's append-only trigger included). */
  const tamper = (statements: string[]) =>
    t.app.get(DataSource).transaction(async (m) => {
      await m.query(`SET LOCAL session_replication_role = replica`);
      for (const s of statements) await m.query(s);
    });
  const renew = async (suffix: string, volume: string) => {
    const res = await t.http.post(`/v1/volumes/${volume}/renew`).set(bearer(apiToken(suffix, 'rw'))).send({ term_months: 1 });
    expect(res.status).toBe(202);
    return res.body.operation.id as string;
  };
  const checkSummary = (violations: Record<string, number> = {}) => CHECKS.map((name) => ({ name, description: expect.any(String), violations: violations[name] ?? 0 }));

  beforeAll(async () => {
    t = await startTestApp();
    verify = new VerifyInvariants(t.app.get(UnitOfWork), new TypeOrmInvariantChecks(t.app.get(Db), t.app.get(BlockStorage), t.app.get(ComputeProvider), undefined, t.app.get(TemplateApps)), new SystemClock());
    await t.seed({ regions: [region()], organizations: SUFFIXES.map((s) => orgWithDetachedVolumes(s, 2, { USD: '100.00000', IDR: '1500000' })) });
  });
  afterAll(async () => t?.close());

  it('a freshly seeded database passes every check', async () => {
    const report = await verify.execute();
    expect(report).toEqual({ ok: true, checked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), checks: checkSummary(), violations: [] });
  });

  it('after renewals that succeeded, failed and are still pending, every check still holds', async () => {
    for (const s of ['av', 'rs', 'sc', 'ok']) ops[`${s}_succeeded`] = await renew(s, `vol_${s}v1`);
    ops.fr_failed = await renew('fr', 'vol_frv1');
    await t.sql(`UPDATE volumes SET status = 'deleted', deleted_at = now() WHERE id = 'vol_frv1'`);
    await t.sql(`UPDATE provider_disks SET deleted_at = now() WHERE volume_id = 'vol_frv1'`);
    await t.app.get(AdvanceOperations).runUntilIdle();
    for (const s of ['us', 'ul', 'ok']) ops[`${s}_pending`] = await renew(s, `vol_${s}v2`);
    expect(await t.sql(`SELECT status, count(*)::int AS n FROM operations GROUP BY status ORDER BY status`)).toEqual([
      { status: 'failed', n: 1 },
      { status: 'pending', n: 3 },
      { status: 'succeeded', n: 4 },
    ]);
    const report = await verify.execute();
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('names each broken invariant, with the organization, operation or server that breaks it', async () => {
    await tamper([
      // Money appears from nowhere.
      `UPDATE wallet_balances SET available = available + 1 WHERE org_id = 'org_av' AND currency = 'USD'`,
      // Reserved money no hold accounts for.
      `UPDATE wallet_balances SET reserved = reserved + 5 WHERE org_id = 'org_rs' AND currency = 'IDR'`,
      // A succeeded renewal whose capture vanished (the hold is then outstanding: reserved follows).
      `DELETE FROM wallet_ledger WHERE operation_id = '${ops.sc_succeeded}' AND kind = 'capture'`,
      `UPDATE wallet_balances SET reserved = reserved + 200000 WHERE org_id = 'org_sc' AND currency = 'USD'`,
      // A failed renewal charged instead of released (available follows).
      `UPDATE wallet_ledger SET kind = 'capture' WHERE operation_id = '${ops.fr_failed}' AND kind = 'release'`,
      `UPDATE wallet_balances SET available = available - 200000 WHERE org_id = 'org_fr' AND currency = 'USD'`,
      // A pending renewal whose hold was already given back (balance moved as a release does).
      `INSERT INTO wallet_ledger (org_id, currency, kind, amount, operation_id, memo, public_id, seq, available_after, reserved_after)
         SELECT 'org_us', 'USD', 'release', 200000, '${ops.us_pending}', 'tampered', 'wtx_tampered', max(seq) + 1, 0, 0 FROM wallet_ledger WHERE org_id = 'org_us'`,
      `UPDATE wallet_balances SET available = available + 200000, reserved = reserved - 200000 WHERE org_id = 'org_us' AND currency = 'USD'`,
      // A running operation whose worker's lease ended long ago.
      `UPDATE operations SET status = 'running', locked_by = 'gone:1:x', locked_until = now() - interval '5 minutes',
              started_at = now() - interval '6 minutes', attempts = 1 WHERE id = '${ops.ul_pending}'`,
      // The region's vCPU counter drifts from its servers.
      `UPDATE regions SET vcpu_capacity = 8 WHERE id = 'id-jkt'`,
      `UPDATE region_slots SET vcpu_share = CASE slot WHEN 0 THEN 8 ELSE 0 END, vcpus_used = CASE slot WHEN 0 THEN 3 ELSE 0 END WHERE region_id = 'id-jkt'`,
    ]);
    // The region's capacity counter drifts from its volumes.
    await driftRegionCounter(t, 'id-jkt', 'used_gb', 7);
    // A second server holding five ssd disks; the ssd offer allows four per server.
    await t.sql(`INSERT INTO servers (id, org_id, name, region_id, zone_id) VALUES ('vm_svfull', 'org_sv', 'full', 'id-jkt', 'id-jkt-a')`);
    for (let i = 1; i <= 5; i++) {
      await t.sql(
        `INSERT INTO volumes (id, org_id, name, status, type, region_id, zone_id, size_gb, server_id, mount_path, mounted, term_months,
                              billing_currency, billing_amount, price_usd_minor, price_idr_minor, expires_at)
         VALUES ($1, 'org_sv', $2, 'attached', 'ssd', 'id-jkt', 'id-jkt-a', 20, 'vm_svfull', $3, true, 1, 'USD', 25000, 1250, 200, now() + interval '1 month')`,
        [`vol_svssd${i}`, `ssd-${i}`, `/mnt/ssd${i}`],
      );
      await t.sql(
        `INSERT INTO provider_disks (disk_id, volume_id, zone_id, size_gb, type, server_id, mount_path, mounted)
         VALUES ($1, $2, 'id-jkt-a', 20, 'ssd', 'vm_svfull', $3, true)`,
        [`disk_svssd${i}`, `vol_svssd${i}`, `/mnt/ssd${i}`],
      );
    }
    // A webhook delivery still pending two days after it was created (the schedule allows 30.4 hours).
    await t.sql(`INSERT INTO webhook_endpoints (id, org_id, url, events, status, secret_sealed, created_at, updated_at)
                 VALUES ('we_wdlost', 'org_wd', 'https://example.com/hook', '{*}', 'enabled', 'sealed:v1:x', now(), now())`);
    await t.sql(`INSERT INTO webhook_events (id, org_id, type, created_at, body) VALUES ('evt_wdlost', 'org_wd', 'volume.deleted', now() - interval '2 days', '{}')`);
    await t.sql(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, attempts, created_at, next_attempt_at)
                 VALUES ('dlv_wdlost', 'we_wdlost', 'evt_wdlost', 'volume.deleted', 'pending', 3, now() - interval '2 days', '2026-01-01T00:00:00Z')`);
    // The provider holds a detached volume's disk attached to a server.
    await t.sql(`UPDATE provider_disks SET server_id = 'vm_pdweb1' WHERE volume_id = 'vol_pdv1'`);
    const [{ disk_id: pdDisk }] = await t.sql<{ disk_id: string }>(`SELECT disk_id FROM provider_disks WHERE volume_id = 'vol_pdv1'`);
    // A firewall rule stored with its host bits set (not in canonical form).
    await t.sql(`INSERT INTO firewall_rules (id, org_id, direction, protocol, port, sources, destinations, rule_digest)
                 VALUES ('fwr_okbroken', 'org_ok', 'in', 'tcp', '22', ARRAY['10.1.2.3/8'], ARRAY[]::text[], 'x')`);

    const [{ live }] = await t.sql<{ live: string }>(`SELECT sum(size_gb)::text AS live FROM volumes WHERE region_id = 'id-jkt' AND deleted_at IS NULL`);
    const used = String(BigInt(live) + 7n);

    const report = await verify.execute();
    expect(report.ok).toBe(false);
    // accounts.organizations_per_user is broken (and named) in organizations-invitations.e2e-spec,
    // provider.instances_match_servers in verify-instances.e2e-spec.
    // Money tampered with also breaks the ledger's chain of after-values: the last row against the
    // balance (av, rs; fr and us also), the changed or forged row against its predecessor (fr, us).
    // The capture deleted with its reserved amount restored (sc) leaves a consistent chain.
    const chain = report.violations.filter((v) => v.check === 'wallet.ledger_chain');
    expect(chain.map((v) => v.subject.split('/').slice(0, 2).join('/'))).toEqual(['org_av/USD', 'org_fr/USD', 'org_fr/USD', 'org_rs/IDR', 'org_us/USD', 'org_us/USD']);
    expect(report.checks).toEqual(
      checkSummary({
        ...Object.fromEntries(CHECKS.map((c) => [c, 1])), 'wallet.ledger_chain': 6, 'top_ups.credited_once': 0, 'wallet.adjustments_once': 0, 'accounts.organizations_per_user': 0,
        // Broken in admin-refunds.e2e-spec.
        'top_ups.refunds_debited_once': 0, 'top_ups.refunded_within_amount': 0,
        // Broken in server-actions.e2e-spec (a server's ipv4); the unique index keeps the other from breaking.
        'servers.one_unfinished_operation': 0, 'servers.purchase_captured_once': 0, 'provider.instances_match_servers': 0,
        'servers.no_disk_on_deleted_server': 0, 'servers.deleted_by_succeeded_delete': 0, 'servers.deleting_has_operation': 0, 'provider.apps_match_deployments': 0,
        // Broken in terms.e2e-spec.
        'terms.deadlines_met': 0, 'terms.suspended_volume_detached': 0,
        // Broken in auto-renew.e2e-spec.
        'terms.auto_renew_once_per_term': 0,
        // Broken in snapshots.e2e-spec (a snapshot missing at the provider; the counters and charges are held by the database).
        'snapshots.charged_once': 0, 'snapshots.counts_match': 0, 'provider.snapshots_match': 0,
        // Broken in images.e2e-spec (an image missing at the provider; the counter and charges are held by the database).
        'images.charged_once': 0, 'images.counts_match': 0, 'provider.images_match': 0,
        // Broken in reserved-ips.e2e-spec (an address routed at the provider only); the unique indexes and the charges' checks hold the others.
        'reserved_ips.held_once': 0, 'reserved_ips.charged_once': 0, 'reserved_ips.assignments_match': 0,
        // Broken in resize.e2e-spec.
        'resizes.reservations_in_flight': 0,
        // Broken in networks.e2e-spec (an attachment at the provider only); the unique indexes hold the others.
        'servers.ipv6_unique_in_region_prefix': 0, 'networks.attachments_valid': 0, 'provider.addresses_match_servers': 0,
      }),
    );
    expect(report.violations.filter((v) => v.check !== 'wallet.ledger_chain')).toEqual([
      {
        check: 'wallet.available_matches_ledger',
        subject: 'org_av/USD',
        message: 'available is 9800001 but credits 10000000 - captures 200000 - outstanding holds 0 = 9800000 (minor units)',
        details: { org_id: 'org_av', currency: 'USD', available: '9800001', credits: '10000000', captures: '200000', outstanding_holds: '0' },
      },
      {
        check: 'wallet.reserved_matches_holds',
        subject: 'org_rs/IDR',
        message: 'reserved is 5 but the outstanding holds add up to 0 (minor units)',
        details: { org_id: 'org_rs', currency: 'IDR', reserved: '5', outstanding_holds: '0' },
      },
      {
        check: 'operations.succeeded_captured_once',
        subject: ops.sc_succeeded,
        message: 'succeeded volume.renew operation has 1 hold(s), 0 capture(s) and 0 release(s); expected 1, 1, 0',
        details: { org_id: 'org_sc', type: 'volume.renew', status: 'succeeded', holds: 1, captures: 0, releases: 0 },
      },
      {
        check: 'operations.failed_released_once',
        subject: ops.fr_failed,
        message: 'failed volume.renew operation has 1 hold(s), 0 release(s) and 1 capture(s); expected 1, 1, 0',
        details: { org_id: 'org_fr', type: 'volume.renew', status: 'failed', holds: 1, captures: 1, releases: 0 },
      },
      {
        check: 'operations.unfinished_not_settled',
        subject: ops.us_pending,
        message: 'pending volume.renew operation has 1 hold(s), 0 capture(s) and 1 release(s) before it ended',
        details: { org_id: 'org_us', type: 'volume.renew', status: 'pending', holds: 1, captures: 0, releases: 1 },
      },
      {
        check: 'operations.unfinished_leased',
        subject: ops.ul_pending,
        message: expect.stringMatching(/^running volume\.renew operation's lease ended at \d{4}-.*Z \(worker gone:1:x\) and no worker took it over$/),
        details: { org_id: 'org_ul', type: 'volume.renew', locked_by: 'gone:1:x', locked_until: expect.any(String) },
      },
      {
        check: 'servers.within_per_server_limit',
        subject: 'vm_svfull',
        message: 'server holds 5 data disks, over its per_server_limit of 4',
        details: { org_id: 'org_sv', disks: 5, per_server_limit: 4 },
      },
      {
        check: 'regions.used_gb_matches_volumes',
        subject: 'id-jkt',
        message: `used_gb is ${used} but its live volumes hold ${live} GB`,
        details: { used_gb: used, live_gb: live },
      },
      {
        check: 'provider.disks_match_volumes',
        subject: 'vol_pdv1',
        message: 'volume names server none but its disk is attached to vm_pdweb1',
        details: { org_id: 'org_pd', status: 'available', server_id: null, disk_id: pdDisk, disk_server_id: 'vm_pdweb1' },
      },
      {
        check: 'access.keys_and_rules_canonical_within_limits',
        subject: 'fwr_okbroken',
        message: 'firewall rule is not stored in canonical form',
        details: { org_id: 'org_ok', sources: '10.1.2.3/8', destinations: '' },
      },
      {
        check: 'regions.vcpus_used_matches_servers',
        subject: 'id-jkt',
        message: 'vcpus_used is 3 but its live servers hold 0 vCPUs',
        details: { vcpus_used: '3', live_vcpus: '0' },
      },
      {
        check: 'webhooks.deliveries_on_schedule',
        subject: 'dlv_wdlost',
        message: expect.stringMatching(/^delivery created at \d{4}-.*Z is still pending after 3 attempt\(s\), past its schedule$/),
        details: { org_id: 'org_wd', endpoint_id: 'we_wdlost', attempts: 3, next_attempt_at: '2026-01-01T00:00:00.000Z' },
      },
    ]);
    // Verify wrote nothing: the organization that was left alone is as it was.
    expect(await t.sql(`SELECT available::text AS a, reserved::text AS r FROM wallet_balances WHERE org_id = 'org_ok' AND currency = 'USD'`)).toEqual([
      { a: '9600000', r: '200000' },
    ]);
  });

  it('the snapshot is read-only: a check that tried to write would be refused', async () => {
    await expect(t.app.get(UnitOfWork).readSnapshot(() => t.app.get(Db).query(`UPDATE regions SET capacity_gb = 1`))).rejects.toThrow(
      /read-only transaction/,
    );
    expect(await t.sql(`SELECT capacity_gb::int AS c FROM regions`)).toEqual([{ c: 20000 }]);
  });
});

/** The command itself, as an operator runs it: JSON report on stdout, exit 0, or exit 1 naming each violation. */
describe('npm run cli -- verify', () => {
  const EXAMPLE = join(ROOT, 'test/fixtures/seed-example.json');

  (usingPostgres() ? it.skip : it)('embedded: passes on a migrated and seeded data dir (exit 0, the report on stdout)', () => {
    const dir = tempDir('cds-verify-');
    try {
      const env = { DATA_DIR: join(dir.path, 'data') };
      expect(runCli(['seed', EXAMPLE], env).status).toBe(0); // migrates first
      const r = runCli(['verify'], env);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ ok: true, checked_at: expect.any(String), checks: CHECKS.map((name) => ({ name, description: expect.any(String), violations: 0 })), violations: [] });
    } finally {
      dir.remove();
    }
  });

  (usingPostgres() ? it : it.skip)('PostgreSQL: exit 0 on a sound database, exit 1 naming each violation after tampering', async () => {
    const t = await startTestApp();
    try {
      await t.seed({ regions: [region()], organizations: [organization('cli')] });
      const env = { DATABASE_URL: t.settings.databaseUrl };
      const ok = runCli(['verify'], env);
      expect({ status: ok.status, stderr: ok.stderr }).toEqual({ status: 0, stderr: '' });
      expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, violations: [] });

      await t.sql(`UPDATE wallet_balances SET available = available + 7, reserved = reserved + 3 WHERE org_id = 'org_cli' AND currency = 'IDR'`);
      const bad = runCli(['verify'], env);
      expect(bad.status).toBe(1);
      expect(JSON.parse(bad.stderr)).toEqual({
        error: { code: 'invariant_violated', message: '3 violation(s) of wallet.available_matches_ledger, wallet.reserved_matches_holds, wallet.ledger_chain' },
      });
      const report = JSON.parse(bad.stdout) as VerificationReport;
      expect(report.ok).toBe(false);
      expect(report.violations.map((v) => [v.check, v.subject])).toEqual([
        ['wallet.available_matches_ledger', 'org_cli/IDR'],
        ['wallet.reserved_matches_holds', 'org_cli/IDR'],
        ['wallet.ledger_chain', expect.stringMatching(/^org_cli\/IDR\/wtx_[0-9a-f]{32}$/)],
      ]);
    } finally {
      await t.close();
    }
  });
});
