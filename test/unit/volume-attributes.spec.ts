import fc from 'fast-check';
import { refusalOf } from '../support/assertions';
import { checkVolumeName } from '../../src/modules/volumes/domain/volume-attributes';
import { checkLabels, parseLabelSelector, sameLabels } from '../../src/modules/prepaid/domain/labels';
import { Volume, matchesFilter } from '../../src/modules/volumes/domain/volume';
import { Money } from '../../src/shared/kernel/money/money';


/** The refusal with the field it names. */
function refusal(fn: () => unknown): { code: string; message: string; field: unknown } {
  const { code, message, details } = refusalOf(fn);
  return { code, message, field: (details as { field?: unknown } | undefined)?.field };
}

describe('volume names', () => {
  it.each(['a', 'A', '0', 'data-1', 'pg_data.v2', `a${'b'.repeat(63)}`, '9-_.'])('accepts %p', (name) => {
    expect(checkVolumeName(name)).toBe(name);
  });

  it.each([
    ['', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    ['-data', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    ['.hidden', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    ['has space', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    ['slash/no', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    ['dätä', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    [`a${'b'.repeat(64)}`, 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    ['nul\u0000', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'],
  ])('refuses %p naming the field', (name, message) => {
    expect(refusal(() => checkVolumeName(name))).toEqual({ code: 'invalid_request', message, field: 'name' });
  });

  it('refuses a non-string', () => {
    expect(refusal(() => checkVolumeName(5))).toEqual({
      code: 'invalid_request',
      message: 'name must be a string: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
      field: 'name',
    });
  });

  it('accepts exactly the strings of the rule (property)', () => {
    const allowed = 'abcXYZ019._-';
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...allowed.split('')), minLength: 1, maxLength: 64 }), (name) => {
        const ok = /^[A-Za-z0-9]/.test(name);
        if (ok) expect(checkVolumeName(name)).toBe(name);
        else expect(refusal(() => checkVolumeName(name)).field).toBe('name');
      }),
    );
  });
});

describe('labels', () => {
  it('accepts up to 32 labels, keys of [a-z0-9._/-] up to 63, values up to 255 (empty too)', () => {
    const many = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, `v${i}`]));
    expect(checkLabels(many)).toEqual(many);
    const edge = { [`${'k'.repeat(63)}`]: 'v'.repeat(255), 'app.kubernetes.io/name': 'x', e: '' };
    expect(checkLabels(edge)).toEqual(edge);
    expect(checkLabels({})).toEqual({});
  });

  it('keeps a "__proto__" key as a label of its own', () => {
    const labels = checkLabels(JSON.parse('{"__proto__": "x", "a": "b"}'));
    expect(Object.keys(labels)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(labels)).toBe('{"__proto__":"x","a":"b"}');
  });

  it.each([
    [null, 'labels must be an object of string values', 'labels'],
    [[], 'labels must be an object of string values', 'labels'],
    ['a=b', 'labels must be an object of string values', 'labels'],
    [Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])), 'labels may hold at most 32 labels, got 33', 'labels'],
    [{ Env: 'prod' }, 'labels: key "Env" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"', 'labels.Env'],
    [{ '': 'x' }, 'labels: key "" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"', 'labels.'],
    [{ ['k'.repeat(64)]: 'x' }, `labels: key "${'k'.repeat(64)}" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"`, `labels.${'k'.repeat(64)}`],
    [{ 'a b': 'x' }, 'labels: key "a b" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"', 'labels.a b'],
    [{ env: 5 }, 'labels.env must be a string', 'labels.env'],
    [{ env: null }, 'labels.env must be a string', 'labels.env'],
    [{ env: 'v'.repeat(256) }, 'labels.env must be at most 255 characters', 'labels.env'],
    [{ env: 'a\u0000b' }, 'labels.env must not contain NUL (\\u0000) characters', 'labels.env'],
  ])('refuses %p naming the member', (labels, message, field) => {
    expect(refusal(() => checkLabels(labels))).toEqual({ code: 'invalid_request', message, field });
  });

  it('compares maps regardless of order', () => {
    expect(sameLabels({ a: '1', b: '2' }, { b: '2', a: '1' })).toBe(true);
    expect(sameLabels({ a: '1' }, { a: '1', b: '' })).toBe(false);
    expect(sameLabels({ a: '1' }, { a: '2' })).toBe(false);
    expect(sameLabels({}, {})).toBe(true);
  });

  it('parses label selectors key=value (the value may be empty or hold "=")', () => {
    expect(parseLabelSelector('env=prod')).toEqual(['env', 'prod']);
    expect(parseLabelSelector('env=')).toEqual(['env', '']);
    expect(parseLabelSelector('a=b=c')).toEqual(['a', 'b=c']);
    expect(refusal(() => parseLabelSelector('env'))).toEqual({ code: 'invalid_request', message: 'label must be key=value, got "env"', field: 'label' });
    expect(refusal(() => parseLabelSelector('Env=x'))).toEqual({
      code: 'invalid_request',
      message: 'label: key "Env" must be 1 to 63 of a-z, 0-9, ".", "_", "/", "-"',
      field: 'label',
    });
  });
});

describe('volume filters', () => {
  const base: Volume = {
    id: 'vol_1', orgId: 'org_1', name: 'data', status: 'attached', type: 'premium', regionId: 'id-jkt', zoneId: 'id-jkt-a', sizeGb: 10,
    server: { id: 'vm_1', name: 'web' }, mountPath: '/mnt/data', mounted: true, termMonths: 1, billing: Money.parse('0.2', 'USD'),
    price: { USD: Money.parse('0.02', 'USD'), IDR: Money.parse('320', 'IDR') }, expiresAt: new Date('2026-12-01T00:00:00Z'), note: null,
    labels: { env: 'prod', team: '' }, deleteProtection: false, createdAt: new Date('2026-11-01T00:00:00Z'), deletedAt: null,
  };
  const deleted: Volume = { ...base, status: 'deleted', server: null, deletedAt: new Date('2026-11-02T00:00:00Z') };

  it('lists every status but deleted without a status filter; status=deleted only the deleted', () => {
    expect(matchesFilter(base, {})).toBe(true);
    expect(matchesFilter(deleted, {})).toBe(false);
    expect(matchesFilter(deleted, { status: 'deleted' })).toBe(true);
    expect(matchesFilter(base, { status: 'deleted' })).toBe(false);
    expect(matchesFilter(base, { status: 'attached' })).toBe(true);
    expect(matchesFilter(base, { status: 'available' })).toBe(false);
  });

  it('needs every filter and every label pair to match', () => {
    expect(matchesFilter(base, { regionId: 'id-jkt', zoneId: 'id-jkt-a', type: 'premium', serverId: 'vm_1', name: 'data' })).toBe(true);
    expect(matchesFilter(base, { regionId: 'id-jkt', zoneId: 'id-jkt-b' })).toBe(false);
    expect(matchesFilter(base, { labels: [['env', 'prod'], ['team', '']] })).toBe(true);
    expect(matchesFilter(base, { labels: [['env', 'prod'], ['team', 'x']] })).toBe(false);
    expect(matchesFilter(base, { labels: [['toString', '']] })).toBe(false);
    expect(matchesFilter(base, { expiresBefore: new Date('2026-12-01T00:00:00.001Z') })).toBe(true);
    expect(matchesFilter(base, { expiresBefore: new Date('2026-12-01T00:00:00Z') })).toBe(false);
  });
});
