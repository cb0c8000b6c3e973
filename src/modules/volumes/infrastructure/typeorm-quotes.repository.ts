import { Injectable } from '@nestjs/common';
import { Db } from '../../../shared/database/transaction';
import { Currency, Money, pricePairOfMinor } from '../../../shared/kernel/money/money';
import { VolumeType } from '../../options/domain/catalog';
import { QuoteRepository } from '../application/quotes.port';
import { Quote } from '../domain/quote';
import { TermMonths } from '../../prepaid/domain/term';

interface QuoteRow {
  id: string;
  org_id: string;
  region_id: string;
  type: VolumeType;
  size_gb: number;
  term_months: TermMonths;
  currency: Currency;
  price_usd_minor: string;
  price_idr_minor: string;
  amount: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  kind: 'volume' | 'server';
}

const QUOTE_COLUMNS = `id, org_id, region_id, type, size_gb, term_months, currency, price_usd_minor::text, price_idr_minor::text,
  amount::text, created_at, expires_at, used_at, kind`;

const toQuote = (r: QuoteRow): Quote => ({
  id: r.id,
  orgId: r.org_id,
  regionId: r.region_id,
  type: r.type,
  sizeGb: r.size_gb,
  termMonths: r.term_months,
  currency: r.currency,
  price: pricePairOfMinor(r.price_usd_minor, r.price_idr_minor),
  amount: Money.ofMinor(r.currency, BigInt(r.amount)),
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
  kind: r.kind,
});

@Injectable()
export class TypeOrmQuoteRepository extends QuoteRepository {
  constructor(private readonly db: Db) {
    super();
  }

  async create(q: Quote): Promise<void> {
    await this.db.query(
      `INSERT INTO quotes (id, org_id, region_id, type, size_gb, term_months, currency, price_usd_minor, price_idr_minor, amount,
                           created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        q.id, q.orgId, q.regionId, q.type, q.sizeGb, q.termMonths, q.currency, q.price.USD.minor.toString(), q.price.IDR.minor.toString(),
        q.amount.minor.toString(), q.createdAt, q.expiresAt,
      ],
    );
  }

  async findInOrg(orgId: string, id: string): Promise<Quote | undefined> {
    const row = await this.db.one<QuoteRow>(`SELECT ${QUOTE_COLUMNS} FROM quotes WHERE org_id = $1 AND id = $2`, [orgId, id]);
    return row && toQuote(row);
  }

  async markUsed(id: string, volumeId: string, at: Date): Promise<boolean> {
    const { affected } = await this.db.exec(`UPDATE quotes SET used_at = $3, volume_id = $2 WHERE id = $1 AND used_at IS NULL`, [id, volumeId, at]);
    return affected === 1;
  }
}
