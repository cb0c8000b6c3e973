import { Injectable } from '@nestjs/common';
import { Db, UNIQUE_VIOLATION, sqlState } from '../../../shared/database/transaction';
import { conflict } from '../../../shared/kernel/errors/domain-error';
import { TemplateCatalog } from '../application/template-catalog.port';
import { Template, TemplateSimulation, TemplateVariable } from '../domain/template';

interface TemplateRow {
  id: string;
  name: string;
  versions: string[];
  variables: TemplateVariable[];
  simulate: TemplateSimulation | null;
}

const toTemplate = (r: TemplateRow): Template => ({ id: r.id, name: r.name, versions: r.versions, variables: r.variables, simulate: r.simulate });

@Injectable()
export class TypeOrmTemplateCatalog extends TemplateCatalog {
  constructor(private readonly db: Db) {
    super();
  }

  async list(): Promise<Template[]> {
    const rows = await this.db.query<TemplateRow>('SELECT id, name, versions, variables, simulate FROM templates ORDER BY id COLLATE "C"');
    return rows.map(toTemplate);
  }

  async find(id: string): Promise<Template | undefined> {
    const row = await this.db.one<TemplateRow>('SELECT id, name, versions, variables, simulate FROM templates WHERE id = $1', [id], 'templates_find');
    return row && toTemplate(row);
  }

  async create(t: Template): Promise<void> {
    try {
      await this.db.query('INSERT INTO templates (id, name, versions, variables, simulate) VALUES ($1, $2, $3::text[], $4::jsonb, $5::jsonb)', [
        t.id, t.name, t.versions, JSON.stringify(t.variables), t.simulate && JSON.stringify(t.simulate),
      ]);
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw conflict(`Template ${t.id} exists already`);
      throw err;
    }
  }
}
