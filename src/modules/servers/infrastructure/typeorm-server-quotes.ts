import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Currency, Money, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { TermMonths } from '../../prepaid/domain/term';
import { ServerQuotes } from '../application/server-quotes.port';
import { ServerQuote } from '../domain/server-quote';

interface Row {
  id: string;
  org_id: string;
  kind: 'volume' | 'server';
  region_id: string;
  plan_id: string | null;
  term_months: TermMonths;
  currency: Currency;
  price_usd_minor: string;
  price_idr_minor: string;
  amount: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

@Injectable()
export class TypeOrmServerQuotes extends ServerQuotes {
  constructor(private readonly db: Db) {
    super();
  }

  async create(q: ServerQuote): Promise<void> {
    await this.db.query(
      `INSERT INTO quotes (id, org_id, kind, region_id, plan_id, term_months, currency, price_usd_minor, price_idr_minor, amount, created_at, expires_at)
       VALUES ($1, $2, 'server', $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        q.id, q.orgId, q.regionId, q.planId, q.termMonths, q.currency, q.price.USD.minor.toString(), q.price.IDR.minor.toString(),
        q.amount.minor.toString(), q.createdAt, q.expiresAt,
      ],
    );
  }

  async findAnyInOrg(orgId: string, id: string): Promise<ServerQuote | { kind: 'volume'; id: string } | undefined> {
    const r = await this.db.one<Row>(
      `SELECT id, org_id, kind, region_id, plan_id, term_months, currency, price_usd_minor::text, price_idr_minor::text, amount::text,
              created_at, expires_at, used_at
         FROM quotes WHERE org_id = $1 AND id = $2`,
      [orgId, id],
    );
    if (!r) return undefined;
    if (r.kind !== 'server' || r.plan_id === null) return { kind: 'volume', id: r.id };
    return {
      kind: 'server',
      id: r.id,
      orgId: r.org_id,
      regionId: r.region_id,
      planId: r.plan_id,
      termMonths: r.term_months,
      currency: r.currency,
      price: pricePairOfMinor(r.price_usd_minor, r.price_idr_minor),
      amount: Money.ofMinor(r.currency, BigInt(r.amount)),
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      usedAt: r.used_at,
    };
  }

  async markUsedByServer(id: string, serverId: string, at: Date): Promise<boolean> {
    const { affected } = await this.db.exec(`UPDATE quotes SET used_at = $3, server_id = $2 WHERE id = $1 AND kind = 'server' AND used_at IS NULL`, [id, serverId, at]);
    return affected === 1;
  }
}
