import { Template } from '../domain/template';

/** The operator's templates (the seed writes them; GET /v1/templates and deployments read them). */
export abstract class TemplateCatalog {
  /** By id (the id's bytes). */
  abstract list(): Promise<Template[]>;
  abstract find(id: string): Promise<Template | undefined>;
  /** A template whose id exists already: 409 conflict. */
  abstract create(template: Template): Promise<void>;
}
