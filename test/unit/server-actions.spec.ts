import { refusalOf } from '../support/assertions';
import { Money, pricePairOfMinor } from '../../src/shared/kernel/money/money';
import { renewalParams } from '../../src/modules/prepaid/application/renewal-params';
import { createServerParams } from '../../src/modules/servers/application/server-operation-params';
import { POWER_ACTIONS, checkUserData, powerSteps } from '../../src/modules/servers/domain/server-actions';
import { applyServerQuote, checkServerQuoteMatches, makeServerQuote } from '../../src/modules/servers/domain/server-quote';

describe('server actions (domain)', () => {
  it('user_data: "" is none; NUL and more than 32768 bytes of UTF-8 are 400 naming it', () => {
    expect(checkUserData(undefined)).toBeNull();
    expect(checkUserData('')).toBeNull();
    expect(checkUserData('é'.repeat(16384))).toBe('é'.repeat(16384));
    expect(refusalOf(() => checkUserData('é'.repeat(16385)))).toEqual({
      code: 'invalid_request', message: 'user_data must be at most 32768 bytes of UTF-8; got 32770', details: { field: 'user_data' },
    });
    expect(refusalOf(() => checkUserData('a\u0000'))).toMatchObject({ code: 'invalid_request', details: { field: 'user_data' } });
  });

  it('power steps and statuses follow servers.md', () => {
    expect(powerSteps('vm.start', false)).toEqual([{ name: 'powering_on', status: 'pending' }, { name: 'booting', status: 'pending' }]);
    expect(powerSteps('vm.stop', false).map((s) => s.name)).toEqual(['shutting_down']);
    expect(powerSteps('vm.stop', true).map((s) => s.name)).toEqual(['powering_off']);
    expect(powerSteps('vm.reboot', false).map((s) => s.name)).toEqual(['rebooting', 'booting']);
    expect(powerSteps('vm.reboot', true).map((s) => s.name)).toEqual(['resetting', 'booting']);
    expect(POWER_ACTIONS['vm.start']).toMatchObject({ from: 'stopped', during: 'starting', success: 'running', failure: 'stopped' });
    expect(POWER_ACTIONS['vm.stop']).toMatchObject({ from: 'running', during: 'stopping', success: 'stopped', failure: 'running' });
    expect(POWER_ACTIONS['vm.reboot']).toMatchObject({ from: 'running', during: 'rebooting', success: 'running', failure: 'running' });
  });

  it('a server quote prices price_per_month[currency] × term exactly; a differing member is 400 naming it; expired then used are 409', () => {
    const now = new Date('2026-11-23T10:00:00.000Z');
    const order = { regionId: 'id-jkt', planId: 'cx1', termMonths: 12 as const, currency: 'USD' as const };
    const q = makeServerQuote('quo_x', 'org_x', order, pricePairOfMinor('450001', '72000'), now);
    expect(q.amount.format()).toBe('54.00012');
    expect(refusalOf(() => checkServerQuoteMatches(q, { ...order, currency: 'IDR' }))).toMatchObject({ code: 'invalid_request', details: { field: 'currency' } });
    expect(applyServerQuote(q, order, new Date(now.getTime() + 600_000)).amount.format()).toBe('54.00012');
    expect(refusalOf(() => applyServerQuote(q, order, new Date(now.getTime() + 600_001)))).toMatchObject({ code: 'quote_expired' });
    expect(refusalOf(() => applyServerQuote({ ...q, usedAt: now }, order, now))).toMatchObject({ code: 'invalid_state' });
  });

  it('vm.create params keep the keys and user_data; a missing user_data (forgotten) reads as null; malformed params never echo their content', () => {
    const p = {
      zoneId: 'z', planId: 'cx1', vcpus: 1, memoryGb: 2, diskGb: 40, image: 'debian-12', termMonths: 1 as const, amount: Money.parse('4.5', 'USD'),
      sshKeys: [{ id: 'ssh_a', fingerprint: 'SHA256:x', publicKey: 'ssh-ed25519 AAAA' }], userData: 'secret-script',
    };
    const written = createServerParams.write(p);
    expect(createServerParams.read(written)).toEqual(p);
    const { user_data: _dropped, ...forgotten } = written;
    expect(createServerParams.read(forgotten).userData).toBeNull();
    expect(() => createServerParams.read({ ...written, vcpus: 'x' })).toThrow(/^vm\.create parameters are malformed$/);
    expect(renewalParams.read(renewalParams.write({ termMonths: 3, amount: Money.parse('216000', 'IDR') }))).toEqual({ termMonths: 3, amount: Money.parse('216000', 'IDR') });
  });
});
