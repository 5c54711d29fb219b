import { todasAsPermissoes } from '@hub/contracts';
import { dentroDasPermissoes } from './delegacao';

const chamador = (permissoes: object, master = false) => ({ id: 'c', master, permissoes: permissoes as never });

describe('dentroDasPermissoes (the rule of delegation)', () => {
  it('When every granted action is also the caller’s, then it is within; absent and false actions grant nothing', () => {
    const proprio = chamador({ colaboradores: { ler: true, editar: true } });
    expect(dentroDasPermissoes({ colaboradores: { ler: true } }, proprio)).toBe(true);
    expect(dentroDasPermissoes({ colaboradores: { ler: true, criar: false }, monitoramento: {} }, proprio)).toBe(true);
    expect(dentroDasPermissoes(null, proprio)).toBe(true);
  });

  it('When one action is beyond the caller’s, then it is not within', () => {
    const proprio = chamador({ colaboradores: { ler: true, editar: true } });
    expect(dentroDasPermissoes({ colaboradores: { deletar: true } }, proprio)).toBe(false);
    expect(dentroDasPermissoes({ monitoramento: { ler: true } }, proprio)).toBe(false);
  });

  it('When the caller is a master, then everything is within', () => {
    expect(dentroDasPermissoes(todasAsPermissoes(), chamador({}, true))).toBe(true);
  });
});
