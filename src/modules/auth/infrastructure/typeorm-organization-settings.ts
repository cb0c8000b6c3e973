import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { OrganizationSettings, StoredOrganizationLimits } from '../application/organization-settings.port';

@Injectable()
export class TypeOrmOrganizationSettings extends OrganizationSettings {
  constructor(private readonly db: Db) {
    super();
  }

  async limits(orgId: string): Promise<StoredOrganizationLimits | undefined> {
    const [row] = await this.db.query<{ server_limit: number | null; api_key_limit: number | null; firewall_rule_limit: number | null }>(
      'SELECT server_limit, api_key_limit, firewall_rule_limit FROM organizations WHERE id = $1',
      [orgId],
      'organization_limits',
    );
    return row && { serverLimit: row.server_limit, apiKeyLimit: row.api_key_limit, firewallRuleLimit: row.firewall_rule_limit };
  }

  async isSuspended(orgId: string): Promise<boolean> {
    const rows = await this.db.query<{ suspended: boolean }>('SELECT suspended_at IS NOT NULL AS suspended FROM organizations WHERE id = $1', [orgId], 'organization_suspended');
    return rows[0]?.suspended === true;
  }
}
