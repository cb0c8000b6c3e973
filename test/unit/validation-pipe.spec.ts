import { ArgumentMetadata } from '@nestjs/common';
import { VolumeOptionsQuery } from '../../src/modules/options/interface/http/volume-options.dto';
import { ListVolumesQuery, UpdateVolumeBody } from '../../src/modules/volumes/interface/http/volumes.dto';
import { LoginDto } from '../../src/modules/auth/interface/http/auth.dto';
import { DomainError } from '../../src/shared/kernel/errors/domain-error';
import { RequestValidationPipe, VALIDATED_QUERIES_KEPT } from '../../src/shared/http/validation.pipe';

const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype, data: undefined });

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('expected the query to be refused');
}

describe('RequestValidationPipe on queries (validated once per distinct query)', () => {
  it('answers a repeated valid query with an instance of its own each time, holding only the declared members', async () => {
    const pipe = new RequestValidationPipe();
    const first = (await pipe.transform({ region: 'id-jkt', type: 'ssd', extra: 'ignored' }, query(VolumeOptionsQuery))) as VolumeOptionsQuery;
    expect(first).toBeInstanceOf(VolumeOptionsQuery);
    expect({ ...first }).toEqual({ region: 'id-jkt', type: 'ssd' });
    // A handler that changes its instance changes nobody else's.
    first.region = 'changed';
    const second = (await pipe.transform({ region: 'id-jkt', type: 'ssd', other: 'x' }, query(VolumeOptionsQuery))) as VolumeOptionsQuery;
    expect(second).toBeInstanceOf(VolumeOptionsQuery);
    expect(second).not.toBe(first);
    expect({ ...second }).toEqual({ region: 'id-jkt', type: 'ssd' });
  });

  it('refuses a repeated invalid query each time with the same 400 naming the field', async () => {
    const pipe = new RequestValidationPipe();
    const expected = { code: 'invalid_request', message: 'type must be premium or ssd', details: { field: 'type' } };
    expect(await refusal(pipe.transform({ region: 'id-jkt', type: 'floppy' }, query(VolumeOptionsQuery)))).toEqual(expected);
    expect(await refusal(pipe.transform({ region: 'id-jkt', type: 'floppy' }, query(VolumeOptionsQuery)))).toEqual(expected);
    expect(await refusal(pipe.transform({ type: 'ssd' }, query(VolumeOptionsQuery)))).toEqual({
      code: 'invalid_request',
      message: 'region is required',
      details: { field: 'region' },
    });
  });

  it('keeps the outcomes of two DTO classes apart for the same members', async () => {
    const pipe = new RequestValidationPipe();
    // Valid for the listing (every member optional), refused by the options (region is required).
    expect({ ...((await pipe.transform({ type: 'ssd' }, query(ListVolumesQuery))) as object) }).toEqual({ type: 'ssd' });
    expect((await refusal(pipe.transform({ type: 'ssd' }, query(VolumeOptionsQuery)))).details).toEqual({ field: 'region' });
  });

  it(`still validates correctly after more than ${VALIDATED_QUERIES_KEPT} distinct queries (the memory is bounded)`, async () => {
    const pipe = new RequestValidationPipe();
    for (let i = 0; i <= VALIDATED_QUERIES_KEPT + 10; i++) {
      expect({ ...((await pipe.transform({ region: `r-${i}` }, query(VolumeOptionsQuery))) as object) }).toEqual({ region: `r-${i}` });
    }
    expect((await refusal(pipe.transform({ region: 'r-1', type: 'floppy' }, query(VolumeOptionsQuery)))).details).toEqual({ field: 'type' });
    expect({ ...((await pipe.transform({ region: 'r-1' }, query(VolumeOptionsQuery))) as object) }).toEqual({ region: 'r-1' });
  });
});

describe('RequestValidationPipe on bodies: prototype-named members at any depth', () => {
  const body: ArgumentMetadata = { type: 'body', metatype: LoginDto, data: undefined };
  const bodies = [
    '{"email":{"constructor":1},"password":"x"}',
    '{"email":{"__proto__":{"a":1}},"password":"x"}',
    '{"email":{"prototype":1},"password":"x"}',
    '{"email":[{"constructor":1}],"password":"x"}',
    '{"email":{"a":{"constructor":1}},"password":"x"}',
    '{"email":{"constructor":{"prototype":{"__proto__":1}}},"password":"x"}',
    '{"email":"a@b.test","password":{"constructor":"x"}}',
  ];
  it.each(bodies)('%s: 400 naming the member, never a TypeError', async (raw) => {
    const pipe = new RequestValidationPipe();
    const refused = await refusal(pipe.transform(JSON.parse(raw), body));
    expect(refused.code).toBe('invalid_request');
    expect(['email', 'password']).toContain((refused.details as { field: string }).field);
  });

  it('labels holding an array of such objects: 400 naming labels (was a 500)', async () => {
    const pipe = new RequestValidationPipe();
    const raw = '{"labels":[{"prototype":{"constructor":{"__proto__":null}}}]}';
    expect(await refusal(pipe.transform(JSON.parse(raw), { type: 'body', metatype: UpdateVolumeBody, data: undefined }))).toEqual({
      code: 'invalid_request', message: 'labels must be an object of string values', details: { field: 'labels' },
    });
  });
});
