import { type Recebido, RecebidosStore } from './recebidos.store';

const recebido = (webhook_id: string): Recebido => ({
  webhook_id,
  assinado_em: '2026-11-21T21:00:00.000Z',
  recebido_em: '2026-11-21T21:00:00.000Z',
  chave_id: 'k',
  corpo: {},
});

describe('RecebidosStore', () => {
  it('When more than the limit arrive, then only the newest are kept, newest first', () => {
    const store = new RecebidosStore(3);
    for (const id of ['a', 'b', 'c', 'd']) expect(store.add(recebido(id))).toBe(true);
    expect(store.list().map((r) => r.webhook_id)).toEqual(['d', 'c', 'b']);
  });

  it('When an id no longer kept arrives again, then it is still recognised as a repeat', () => {
    const store = new RecebidosStore(1, 10);
    store.add(recebido('a'));
    store.add(recebido('b'));
    expect(store.add(recebido('a'))).toBe(false);
    expect(store.list().map((r) => r.webhook_id)).toEqual(['b']);
  });

  it('When more ids than it remembers have arrived, then the oldest id is forgotten', () => {
    const store = new RecebidosStore(5, 2);
    for (const id of ['a', 'b', 'c']) store.add(recebido(id));
    expect(store.add(recebido('c'))).toBe(false);
    expect(store.add(recebido('a'))).toBe(true);
  });
});
