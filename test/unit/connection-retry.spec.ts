import { isConnectionLost, retryOnLostConnection } from '../../src/shared/database/connection-retry';

describe('lost database connections', () => {
  it('recognises a dead connection by SQLSTATE, driver message or TypeORM released runner, and nothing else', () => {
    expect(isConnectionLost({ code: '57P01', message: 'terminating connection due to administrator command' })).toBe(true);
    expect(isConnectionLost({ driverError: { code: '08006' } })).toBe(true);
    expect(isConnectionLost(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionLost(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isConnectionLost(Object.assign(new Error('Query runner already released.'), { name: 'QueryRunnerAlreadyReleasedError' }))).toBe(true);
    expect(isConnectionLost({ code: '23505', message: 'duplicate key value violates unique constraint' })).toBe(false);
    expect(isConnectionLost({ code: '40001', message: 'could not serialize access' })).toBe(false);
    expect(isConnectionLost(new Error('boom'))).toBe(false);
    expect(isConnectionLost(undefined)).toBe(false);
  });

  it('runs the work again only after a lost connection, three attempts at most', async () => {
    let n = 0;
    await expect(retryOnLostConnection(async () => (++n < 3 ? Promise.reject(new Error('Connection terminated')) : 'done'))).resolves.toBe('done');
    expect(n).toBe(3);
    n = 0;
    await expect(retryOnLostConnection(async () => Promise.reject(new Error(`Connection terminated ${++n}`)))).rejects.toThrow('Connection terminated 3');
    n = 0;
    await expect(retryOnLostConnection(async () => Promise.reject(new Error(`unique ${++n}`)))).rejects.toThrow('unique 1');
  });

  it('does not run the work again after a CHECK violation: the constraint is the last word', async () => {
    const refusal = Object.assign(new Error('new row for relation "wallet_balances" violates check constraint "wallet_available_not_negative"'), { code: '23514' });
    let calls = 0;
    await expect(
      retryOnLostConnection(async () => {
        calls++;
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(calls).toBe(1);
  });
});
