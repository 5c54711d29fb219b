import { assinaturaNomeada } from './payload';

describe('the subscription a verified body names', () => {
  test('When the body is the hub standard one, then assinatura_id; a CloudEvent, assinaturaid', () => {
    expect(assinaturaNomeada({ id: 'e', assinatura_id: 'sub-a', dados: {} })).toBe('sub-a');
    expect(assinaturaNomeada({ specversion: '1.0', id: 'e', assinaturaid: 'sub-b', data: {} })).toBe('sub-b');
  });

  test('When a body is not a CloudEvent, then assinaturaid is not read; anything else names none', () => {
    expect(assinaturaNomeada({ assinaturaid: 'sub-b' })).toBeUndefined();
    expect(assinaturaNomeada({ specversion: '0.3', assinaturaid: 'sub-b' })).toBeUndefined();
    expect(assinaturaNomeada(null)).toBeUndefined();
    expect(assinaturaNomeada(['sub-a'])).toBeUndefined();
  });
});
