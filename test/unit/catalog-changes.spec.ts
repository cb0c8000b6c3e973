import { capacityValue, priceValue, switchValue } from '../../src/modules/options/domain/catalog-changes';
import { refusalOf } from '../support/assertions';

/** The forms of catalog changes the CLI (strings) and the admin API (JSON values) share. */
describe('catalog changes', () => {
  it('a capacity: a whole number 0 or more, a JSON number or a digit string; anything else names the caller\'s field', () => {
    expect(capacityValue(0, 'disk_capacity_gb', 'GB')).toBe(0);
    expect(capacityValue(20000, 'disk_capacity_gb', 'GB')).toBe(20000);
    expect(capacityValue('256', 'vcpus', 'vCPUs')).toBe(256);
    for (const raw of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, '1.5', '-5', '', '99999999999999999', null, true, {}, [], ' 5']) {
      expect(refusalOf(() => capacityValue(raw, 'gb', 'GB'))).toEqual({ code: 'invalid_request', message: 'gb must be a whole number of GB, 0 or more', details: { field: 'gb' } });
    }
  });

  it('a switch: true or false, as JSON or as the CLI\'s words', () => {
    expect([switchValue(true, 'available'), switchValue('false', 'available'), switchValue(false, 'x'), switchValue('true', 'x')]).toEqual([true, false, false, true]);
    for (const raw of ['yes', 1, 0, null, undefined, 'TRUE']) {
      expect(refusalOf(() => switchValue(raw, 'purchases_paused'))).toEqual({ code: 'invalid_request', message: 'purchases_paused must be true or false', details: { field: 'purchases_paused' } });
    }
  });

  it('a price pair: both currencies, each of its precision and more than 0, nothing else; the member at fault named', () => {
    const p = priceValue({ USD: '0.12', IDR: '1900' }, 'volumes.premium');
    expect([p.USD.minor, p.IDR.minor]).toEqual([12000n, 1900n]);
    const cases: [unknown, string][] = [
      ['0.12', 'volumes.premium'],
      [null, 'volumes.premium'],
      [[], 'volumes.premium'],
      [{ USD: '0.12' }, 'volumes.premium.IDR'],
      [{ IDR: '1900' }, 'volumes.premium.USD'],
      [{ USD: 0.12, IDR: '1900' }, 'volumes.premium.USD'],
      [{ USD: '0.000001', IDR: '1900' }, 'volumes.premium.USD'],
      [{ USD: '0.12', IDR: '19.5' }, 'volumes.premium.IDR'],
      [{ USD: '0', IDR: '1900' }, 'volumes.premium.USD'],
      [{ USD: '0.12', IDR: '0' }, 'volumes.premium.IDR'],
      [{ USD: '-1', IDR: '1900' }, 'volumes.premium.USD'],
      [{ USD: '0.12', IDR: '1900', EUR: '1' }, 'volumes.premium.EUR'],
    ];
    for (const [raw, field] of cases) {
      const refusal = refusalOf(() => priceValue(raw, 'volumes.premium'));
      expect([raw, refusal.code, refusal.details]).toEqual([raw, 'invalid_request', { field }]);
    }
  });
});
