import { uuidv7 } from '@hub/database';
import type { AppError } from '@hub/http';
import type { Logger } from '@hub/log';
import { type Db, transacao } from '../../db';
import type { PublicacaoRepository } from './publicacao.repository';

/** How much of a refused body is kept. */
export const CORPO_MAX_BYTES = 64 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT4_MAX = 2_147_483_647;

/** Who sent a refused publication, as far as it is known. */
export interface Remetente {
  aplicativoId?: string | null;
  clientId?: string | null;
  email?: string | null;
}

export interface Recusa {
  erro: AppError;
  /** The body as received (bytes or text); absent when there was none. */
  corpo?: Buffer | string;
  /** The parsed body, to read which type and version it named. */
  valor?: unknown;
  remetente: Remetente;
  recebidoEm?: Date;
}

/** The body as text, cut at 64 KiB on a character boundary; NUL (which text cannot hold) escaped. */
export function corpoTruncado(corpo: Buffer | string): { texto: string; truncado: boolean } {
  const bytes = typeof corpo === 'string' ? Buffer.from(corpo, 'utf8') : corpo;
  let fim = Math.min(bytes.length, CORPO_MAX_BYTES);
  // Back off to the start of a UTF-8 character (continuation bytes are 10xxxxxx).
  if (fim < bytes.length) while (fim > 0 && (bytes[fim]! & 0xc0) === 0x80) fim -= 1;
  return { texto: bytes.subarray(0, fim).toString('utf8').replaceAll('\0', '\\u0000'), truncado: fim < bytes.length };
}

function nomeados(valor: unknown): { tipoDeEventoId: string | null; versaoDoEsquema: number | null } {
  const corpo = typeof valor === 'object' && valor !== null ? (valor as Record<string, unknown>) : {};
  const tipo = corpo.tipo_de_evento_id;
  const versao = corpo.versao_do_esquema;
  return {
    tipoDeEventoId: typeof tipo === 'string' && UUID.test(tipo) ? tipo.toLowerCase() : null,
    versaoDoEsquema:
      Number.isInteger(versao) && (versao as number) >= 1 && (versao as number) <= INT4_MAX ? (versao as number) : null,
  };
}

/**
 * Stores a refused publication as an evento recusado and counts it in the hour's tally. A failure
 * to store is logged and swallowed: the client still gets its 4xx, never a 500 because of this.
 */
export function registradorDeRecusas(
  db: Db,
  repo: PublicacaoRepository,
  logger: Logger,
  contar: (codigo: string) => void = () => undefined,
) {
  return async function registrar(recusa: Recusa): Promise<void> {
    contar(recusa.erro.codigo);
    const recebidoEm = recusa.recebidoEm ?? new Date();
    const corpo = recusa.corpo === undefined ? undefined : corpoTruncado(recusa.corpo);
    try {
      await transacao(db, async (tx) => {
        await repo.inserirRecusado(
          {
            id: uuidv7(recebidoEm.getTime()),
            codigo: recusa.erro.codigo,
            statusHttp: recusa.erro.status,
            detalhe: recusa.erro.detail,
            erros: (recusa.erro.erros ?? []).map(({ caminho, mensagem }) => ({ caminho, mensagem })),
            corpo: corpo?.texto ?? null,
            corpoTruncado: corpo?.truncado ?? false,
            ...nomeados(recusa.valor),
            aplicativoId: recusa.remetente.aplicativoId ?? null,
            clientId: recusa.remetente.clientId ?? null,
            publicadoPeloEmail: recusa.remetente.email ?? null,
            recebidoEm,
          },
          tx,
        );
        await repo.contarRecusa(recebidoEm, tx);
      });
    } catch (error) {
      logger.error({ err: error, codigo: recusa.erro.codigo }, 'could not store a refused publication');
    }
  };
}
export type RegistrarRecusa = ReturnType<typeof registradorDeRecusas>;
