import type { DataSource } from 'typeorm';
import { Db } from '../../src/shared/database/transaction';

describe('Db.statementName: a prepared statement per SQL text', () => {
  const db = new Db({} as DataSource);
  const live = 'SELECT id FROM servers WHERE org_id = $1 AND deleted_at IS NULL LIMIT $2';
  const inZone = 'SELECT id FROM servers WHERE org_id = $1 AND deleted_at IS NULL AND zone_id = $2 LIMIT $3';

  it('gives one text one name, the same every time and in every Db', () => {
    const name = db.statementName('servers_list', live);
    expect(name).toMatch(/^servers_list_[A-Za-z0-9_-]{16}$/);
    expect(db.statementName('servers_list', live)).toBe(name);
    expect(new Db({} as DataSource).statementName('servers_list', live)).toBe(name);
  });

  it('gives another text (another combination of filters) another name, within the 63 bytes of an identifier', () => {
    const names = new Set([live, inZone, `${inZone} `].map((sql) => db.statementName('wallet_history_list', sql)));
    expect(names.size).toBe(3);
    for (const name of names) {
      expect(name).toMatch(/^wallet_history_list_/);
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
    }
  });
});
