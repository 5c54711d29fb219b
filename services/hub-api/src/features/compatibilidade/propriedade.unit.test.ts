import fc from 'fast-check';
import { ValidadorDeEsquemas } from '../../validation/esquemas';
import { type Compatibilidade, verificarCompatibilidade } from './compatibilidade';
import { FAMILIAS_DO_CORPUS, par } from './corpus.test-support';
import { documentos } from './documentos.test-support';

/**
 * Soundness, by documents: for every pair the checker calls compatible, documents valid under the
 * source side (ajv with the hub's settings, the validator publication uses) are valid on the other
 * side. COMPAT_SEED replays a run; COMPAT_RUNS draws more pairs.
 */
const SEED = Number(process.env.COMPAT_SEED ?? 20261201);
const RUNS = Number(process.env.COMPAT_RUNS ?? 400);
const DOCUMENTOS_POR_LADO = 40;

const validador = new ValidadorDeEsquemas({ limiteMs: 60_000 });
afterAll(() => validador.encerrar());
let ids = 0;
const valida = async (id: string, esquema: unknown, dados: unknown) =>
  (await validador.validarDados({ id, esquema }, dados)).valido;

interface Contagem {
  pares: number;
  compativeis: number;
  recusados: number;
  documentos: number;
  porFamilia: Record<string, { pares: number; compativeis: number; recusados: number }>;
}

async function registrar(esquema: Record<string, unknown>): Promise<string | undefined> {
  const { validador: compilado } = await validador.verificarEsquema(esquema);
  if (!compilado) return undefined;
  ids += 1;
  const id = `par-${ids}`;
  validador.lembrar(id, compilado);
  return id;
}

/** Documents drawn from `origem`, kept when ajv accepts them there, must be accepted by `destino`. */
async function conferir(
  origem: [string, Record<string, unknown>],
  destino: [string, Record<string, unknown>],
  semente: number,
) {
  const amostra = fc.sample(documentos(origem[1]), { seed: semente, numRuns: DOCUMENTOS_POR_LADO });
  const validos: unknown[] = [];
  for (const d of amostra) if (await valida(origem[0], origem[1], d)) validos.push(d);
  for (const documento of validos) {
    if (!(await valida(destino[0], destino[1], documento))) {
      throw new Error(
        `called compatible, but ${JSON.stringify(documento)} is valid under ${JSON.stringify(origem[1])} and not under ${JSON.stringify(destino[1])}`,
      );
    }
  }
  return validos.length;
}

test('When the checker calls a pair compatible, then no document valid under the source side breaks the other side', async () => {
  const contagem: Contagem = { pares: 0, compativeis: 0, recusados: 0, documentos: 0, porFamilia: {} };
  for (const f of FAMILIAS_DO_CORPUS) contagem.porFamilia[f] = { pares: 0, compativeis: 0, recusados: 0 };
  await fc.assert(
    fc.asyncProperty(par, fc.integer(), async ({ familia, anterior, nova }, semente) => {
      const idAnterior = await registrar(anterior);
      const idNova = await registrar(nova);
      if (!idAnterior || !idNova) return;
      contagem.pares += 1;
      contagem.porFamilia[familia]!.pares += 1;
      for (const regra of ['backward', 'forward'] as Compatibilidade[]) {
        const { compativel, erros } = verificarCompatibilidade(anterior, nova, regra);
        if (!compativel) {
          expect(erros.length).toBeGreaterThan(0);
          contagem.recusados += 1;
          contagem.porFamilia[familia]!.recusados += 1;
          continue;
        }
        contagem.compativeis += 1;
        contagem.porFamilia[familia]!.compativeis += 1;
        const velho: [string, Record<string, unknown>] = [idAnterior, anterior];
        const novo: [string, Record<string, unknown>] = [idNova, nova];
        contagem.documentos +=
          regra === 'backward' ? await conferir(velho, novo, semente) : await conferir(novo, velho, semente);
      }
    }),
    { seed: SEED, numRuns: RUNS },
  );
  if (process.env.COMPAT_REPORT) console.log(JSON.stringify(contagem, null, 1));
  // The corpus is what it claims: enough valid pairs, every family both compatible and refused.
  expect(contagem.pares).toBeGreaterThanOrEqual(200);
  expect(contagem.documentos).toBeGreaterThanOrEqual(2000);
  for (const [familia, c] of Object.entries(contagem.porFamilia)) {
    expect({ familia, algumCompativel: c.compativeis > 0, algumRecusado: c.recusados > 0 }).toEqual({
      familia,
      algumCompativel: true,
      algumRecusado: true,
    });
  }
});
