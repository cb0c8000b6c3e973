import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = join(__dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const importsOf = (path: string): string[] =>
  [...readFileSync(path, 'utf8').matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);

/**
 * The prepaid resource modules (architecture guide, "As the resources multiply"): what they share
 * (terms, their prices and renewal, the term lifecycle, quotes, labels) lives in modules/prepaid,
 * the storage provider in modules/storage-provider, the operations engine and the reconciliation
 * loop in modules/operations. A new prepaid resource module joins this list.
 */
const RESOURCE_MODULES = ['volumes', 'servers', 'snapshots', 'images', 'reserved-ips'];

/** The module (folder under src/modules) and layer (domain, application, ...) an import of `from` resolves to, if it is a module's. */
function targetOf(from: string, spec: string): { module: string; layer: string } | undefined {
  if (!spec.startsWith('.')) return undefined;
  const parts = relative(join(SRC, 'modules'), resolve(dirname(from), spec)).split('/');
  if (parts[0] === '..' || parts.length < 2) return undefined;
  return { module: parts[0], layer: parts[1] };
}

const moduleOf = (path: string): string | undefined => {
  const parts = relative(join(SRC, 'modules'), path).split('/');
  return parts[0] === '..' ? undefined : parts[0];
};

describe('dependency rules', () => {
  const all = files(SRC);

  it('domain/ and shared/kernel import no Nest, TypeORM, HTTP or infrastructure', () => {
    const pure = all.filter((f) => /\/domain\//.test(f) || f.includes('/shared/kernel/'));
    expect(pure.length).toBeGreaterThan(5);
    const offenders = pure.flatMap((f) =>
      importsOf(f)
        .filter((i) => /^@nestjs\/|^typeorm|^express|^pg$|\/infrastructure\/|\/interface\//.test(i))
        .map((i) => `${relative(SRC, f)} imports ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it('application/ imports no TypeORM, HTTP or infrastructure adapter (UnitOfWork comes from its port file)', () => {
    const app = all.filter((f) => f.includes('/application/'));
    const offenders = app.flatMap((f) =>
      importsOf(f)
        .filter((i) => /^typeorm|^express|\/infrastructure\/|\/interface\/|shared\/database\/(transaction|data-source|embedded)/.test(i))
        .map((i) => `${relative(SRC, f)} imports ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it('controllers reach ports only through use cases: no controller imports a *.port file', () => {
    const controllers = all.filter((f) => f.endsWith('.controller.ts'));
    expect(controllers.length).toBeGreaterThan(5);
    const offenders = controllers.flatMap((f) =>
      importsOf(f)
        .filter((i) => /\.port$/.test(i))
        .map((i) => `${relative(SRC, f)} imports ${i}`),
    );
    expect(offenders).toEqual([]);
  });

  it('no source file turns on synchronize or holds money in parseFloat/toFixed', () => {
    const offenders = all.filter((f) => /synchronize:\s*true|\bparseFloat\(|\.toFixed\(/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it("no resource module imports another resource module's domain; servers import nothing of volumes' domain or application", () => {
    const offenders = all.flatMap((f) => {
      const own = moduleOf(f);
      if (!own || !RESOURCE_MODULES.includes(own)) return [];
      return importsOf(f)
        .map((i) => ({ i, target: targetOf(f, i) }))
        .filter(({ target }) =>
          target !== undefined && target.module !== own && RESOURCE_MODULES.includes(target.module) &&
          (target.layer === 'domain' || (own === 'servers' && target.module === 'volumes' && target.layer === 'application')),
        )
        .map(({ i }) => `${relative(SRC, f)} imports ${i}`);
    });
    expect(offenders).toEqual([]);
    // The rule sees the imports it is about: a servers file that reached into volumes/domain would be found.
    expect(targetOf(join(SRC, 'modules/servers/domain/server.ts'), '../../volumes/domain/volume')).toEqual({ module: 'volumes', layer: 'domain' });
  });
});
