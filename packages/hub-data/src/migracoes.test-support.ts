import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureDatabase, migrate, uuidv7 } from '@hub/database';
import { dropDatabase, unusedTestDatabase } from '@hub/database/test-support';
import { createDb, type Db, HUB_DATA_MIGRATIONS_DIR } from './index';

/** A temporary folder with a copy of the migrations numbered below `versao`. */
export async function migracoesAntesDe(versao: number): Promise<string> {
  const pasta = await mkdtemp(path.join(tmpdir(), 'hub-migracoes-'));
  for (const nome of await readdir(HUB_DATA_MIGRATIONS_DIR))
    if (Number(nome.slice(0, 3)) < versao)
      await copyFile(path.join(HUB_DATA_MIGRATIONS_DIR, nome), path.join(pasta, nome));
  return pasta;
}

/**
 * A test database migrated up to the migration before `versao`, for a test of that migration over
 * rows written before it: the test writes them with `db`, then `migrarAteOFim` applies the rest
 * (giving how many ran). `fechar` disconnects, drops the database and removes the folder.
 */
export async function bancoAntesDaMigracao(nome: string, versao: number) {
  const banco = unusedTestDatabase(nome);
  const antigas = await migracoesAntesDe(versao);
  await ensureDatabase(banco.url);
  await migrate(banco.url, antigas);
  const db = createDb(banco.url);
  return {
    url: banco.url,
    db,
    migrarAteOFim: () => migrate(banco.url, HUB_DATA_MIGRATIONS_DIR),
    fechar: async () => {
      await db.$disconnect();
      await dropDatabase(banco.name);
      await rm(antigas, { recursive: true, force: true });
    },
  };
}

/**
 * The registry rows deliveries need, written by hand: an application ("loja"), its event type
 * "pedido.criado" with version 1, and one active subscription of the type per URL. Gives their ids.
 */
export async function registroMinimo(db: Db, urls: string[]) {
  const aplicativoId = uuidv7();
  const tipoId = uuidv7();
  await db.$executeRaw`insert into aplicativo (id, nome, client_id, ativo, criado_em, atualizado_em)
    values (${aplicativoId}::uuid, 'Loja', 'loja', true, now(), now())`;
  await db.$executeRaw`insert into tipo_de_evento (id, nome, aplicativo_id, ativo, retencao_em_dias, criado_em, atualizado_em)
    values (${tipoId}::uuid, 'pedido.criado', ${aplicativoId}::uuid, true, 30, now(), now())`;
  await db.$executeRaw`insert into versao_de_esquema (id, tipo_de_evento_id, versao, esquema, ativa, criado_em, atualizado_em)
    values (${uuidv7()}::uuid, ${tipoId}::uuid, 1, '{}', true, now(), now())`;
  const assinaturas: string[] = [];
  for (const url of urls) {
    const id = uuidv7();
    assinaturas.push(id);
    await db.$executeRaw`insert into assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema,
        url_de_destino, maximo_de_tentativas, ativa, criado_em, atualizado_em)
      values (${id}::uuid, ${aplicativoId}::uuid, ${tipoId}::uuid, 1, ${url}, 3, true, now(), now())`;
  }
  return { aplicativoId, tipoId, assinaturas };
}
