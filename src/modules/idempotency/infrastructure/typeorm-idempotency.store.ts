import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { ClaimResult, IdempotencyStore } from '../application/idempotency.port';
import { IdempotencyScope, StoredResponse } from '../domain/idempotency';

@Injectable()
export class TypeOrmIdempotencyStore extends IdempotencyStore {
  constructor(private readonly db: Db) {
    super();
  }

  /** Records are keyed by (org_id, SHA-256 of the Idempotency-Key): the key itself is never stored. */
  async claim(scope: IdempotencyScope, now: Date, expiresAt: Date): Promise<ClaimResult> {
    // New key: inserted. Expired record: taken over in place. Live record: no row (and if its
    // writer has not committed yet, this statement waits for it on the primary key).
    const claimed = await this.db.query(
      `INSERT INTO idempotency_records (org_id, key_sha256, fingerprint, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (org_id, key_sha256) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, status_code = NULL, response_body = NULL,
              response_headers = '{}'::jsonb, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE idempotency_records.expires_at <= $4
       RETURNING 1 AS claimed`,
      [scope.orgId, scope.keyDigest, scope.fingerprint, now, expiresAt],
      'idempotency_claim',
    );
    if (claimed.length === 1) return { kind: 'claimed' };
    const row = await this.db.one<{ fingerprint: string; status_code: number | null; response_body: string | null; response_headers: Record<string, string> }>(
      `SELECT fingerprint, status_code, response_body, response_headers FROM idempotency_records WHERE org_id = $1 AND key_sha256 = $2`,
      [scope.orgId, scope.keyDigest],
    );
    if (!row) return { kind: 'vanished' };
    const response =
      row.status_code === null || row.response_body === null
        ? null
        : { status: row.status_code, body: row.response_body, headers: row.response_headers ?? {} };
    return { kind: 'existing', record: { fingerprint: row.fingerprint, response } };
  }

  async complete(scope: IdempotencyScope, response: StoredResponse): Promise<void> {
    const { affected } = await this.db.exec(
      `UPDATE idempotency_records SET status_code = $3, response_body = $4, response_headers = $5
        WHERE org_id = $1 AND key_sha256 = $2`,
      [scope.orgId, scope.keyDigest, response.status, response.body, JSON.stringify(response.headers)],
      'idempotency_complete',
    );
    if (affected !== 1) throw new Error('The idempotency record to complete does not exist');
  }

  async store(scope: IdempotencyScope, now: Date, expiresAt: Date, response: StoredResponse): Promise<boolean> {
    const { affected } = await this.db.exec(
      `INSERT INTO idempotency_records (org_id, key_sha256, fingerprint, status_code, response_body, response_headers, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (org_id, key_sha256) DO UPDATE
          SET fingerprint = EXCLUDED.fingerprint, status_code = EXCLUDED.status_code, response_body = EXCLUDED.response_body,
              response_headers = EXCLUDED.response_headers, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE idempotency_records.expires_at <= $7`,
      [scope.orgId, scope.keyDigest, scope.fingerprint, response.status, response.body, JSON.stringify(response.headers), now, expiresAt],
      'idempotency_store',
    );
    return affected === 1;
  }

  async purgeExpired(now: Date, limit: number): Promise<number> {
    // The outer condition is re-checked on a row taken over meanwhile, so a live record is never deleted.
    const { affected } = await this.db.exec(
      `DELETE FROM idempotency_records
        WHERE expires_at <= $1
          AND (org_id, key_sha256) IN (SELECT org_id, key_sha256 FROM idempotency_records WHERE expires_at <= $1 LIMIT $2)`,
      [now, limit],
    );
    return affected;
  }
}
