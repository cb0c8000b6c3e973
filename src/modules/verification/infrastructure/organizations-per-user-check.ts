import { Db } from '../../../shared/database/transaction';
import { MAX_ORGANIZATIONS_PER_USER } from '../../auth/domain/invitation';
import { Finding, InvariantCheck } from '../application/invariant-checks.port';

/** accounts.md: a user belongs to at most 10 organizations, however they joined (counted under a lock on the user). */
export class OrganizationsPerUserCheck implements InvariantCheck {
  readonly name = 'accounts.organizations_per_user';
  readonly description = `No user belongs to more than ${MAX_ORGANIZATIONS_PER_USER} organizations`;

  constructor(private readonly db: Db) {}

  async findViolations(): Promise<Finding[]> {
    const rows = await this.db.query<{ user_id: string; n: number }>(
      'SELECT user_id, count(*)::int AS n FROM memberships GROUP BY user_id HAVING count(*) > $1 ORDER BY user_id',
      [MAX_ORGANIZATIONS_PER_USER],
    );
    return rows.map((r) => ({
      subject: r.user_id,
      message: `user belongs to ${r.n} organizations, over the limit of ${MAX_ORGANIZATIONS_PER_USER}`,
      details: { organizations: r.n, limit: MAX_ORGANIZATIONS_PER_USER },
    }));
  }
}
