import fc from 'fast-check';
import { MAX_BODY_DEPTH, MAX_BODY_MEMBERS, bodyShapeProblem, rawJsonShapeProblem } from '../../src/shared/http/body-parsing';

const jsonMembersExceed = (text: Uint8Array, max: number): boolean => rawJsonShapeProblem(text, 1000, max) === 'members';

/** Members of a parsed JSON value: object members and array elements, at every level. */
function members(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.length + children.reduce<number>((n, child) => n + members(child), 0);
}

describe('counting the members of a JSON body', () => {
  it('counts on the raw text exactly what the parsed body holds (any JSON, any whitespace, strings with brackets and escapes)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 60 }), fc.boolean(), (value, max, pretty) => {
        const text = Buffer.from(JSON.stringify(value, null, pretty ? 2 : undefined));
        const n = members(value);
        expect(jsonMembersExceed(text, max)).toBe(n > max);
        expect(bodyShapeProblem(value, 1000, max) === 'members').toBe(n > max);
      }),
      { numRuns: 2000, seed: 9 },
    );
  });

  it('handles strings holding quotes, backslashes, colons, commas and brackets', () => {
    const text = Buffer.from(JSON.stringify({ a: 'x\\",:[{', b: ['\\', '"', ']', ','], c: { d: '\u00e9:,' } }));
    // a, b, c; the 4 elements of b; c.d: 8 members.
    expect(jsonMembersExceed(text, 8)).toBe(false);
    expect(jsonMembersExceed(text, 7)).toBe(true);
  });

  it('gives up on a 70,000-member body after its first members: far cheaper than parsing it', () => {
    const text = Buffer.from(`{${Array.from({ length: 70_000 }, (_, i) => `"m${i}":${i}`).join(',')}}`);
    expect(jsonMembersExceed(text, MAX_BODY_MEMBERS)).toBe(true);
    expect(jsonMembersExceed(Buffer.from(`[${Array.from({ length: 1000 }, () => '0').join(',')}]`), MAX_BODY_MEMBERS)).toBe(false);
    expect(jsonMembersExceed(Buffer.from(`[${Array.from({ length: 1001 }, () => '0').join(',')}]`), MAX_BODY_MEMBERS)).toBe(true);
    expect(jsonMembersExceed(Buffer.from('[ ]'), 0)).toBe(false);
    expect(jsonMembersExceed(Buffer.from('{ }'), 0)).toBe(false);
  });

  it('reports nesting deeper than 64 levels before the members it holds, as the parsed check does', () => {
    for (const depth of [MAX_BODY_DEPTH, MAX_BODY_DEPTH + 1, 10_000]) {
      const text = `{"extra": ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
      const expected = depth > MAX_BODY_DEPTH ? 'depth' : undefined;
      expect(rawJsonShapeProblem(Buffer.from(text))).toBe(expected);
      if (depth < 1000) expect(bodyShapeProblem(JSON.parse(text))).toBe(expected);
    }
  });
});
