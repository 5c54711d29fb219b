import { bancoIndisponivel } from './unavailable';

test('When a write reaches a read-only server (25006: a standby, during a failover), then it is "database unavailable", from node-postgres and through Prisma\'s adapter', () => {
  expect(bancoIndisponivel({ code: '25006', message: 'cannot execute INSERT in a read-only transaction' })).toBe(true);
  expect(bancoIndisponivel({ code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: '25006' } } } })).toBe(
    true,
  );
});

test('When a statement is wrong (a unique violation, a syntax error), then it is not "database unavailable"', () => {
  expect(bancoIndisponivel({ code: '23505' })).toBe(false);
  expect(bancoIndisponivel({ code: '42601' })).toBe(false);
  expect(bancoIndisponivel({ code: '25P02' })).toBe(false);
});

test('When a read on a replica is canceled by a recovery conflict, then it is "database unavailable"; a serialization failure alone (40001) is not', () => {
  const conflito = {
    code: '40001',
    message: 'canceling statement due to conflict with recovery',
  };
  expect(bancoIndisponivel(conflito)).toBe(true);
  expect(bancoIndisponivel({ code: 'P2010', meta: { driverAdapterError: { cause: conflito } } })).toBe(true);
  expect(bancoIndisponivel({ code: '40001', message: 'could not serialize access due to concurrent update' })).toBe(
    false,
  );
});
