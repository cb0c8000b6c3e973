import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = join(__dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const importsOf = (path: string): string[] =>
  [...readFileSync(path, 'utf8').matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);

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
});
