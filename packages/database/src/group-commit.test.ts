import pg from 'pg';
import { GroupCommit } from './group-commit';
import { SqlPool } from './sql';

const URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** A flush that records its batches and fails any batch holding 'mau'. */
function registrando() {
  const lotes: string[][] = [];
  const executar = async (itens: string[]) => {
    lotes.push(itens);
    await new Promise((resolve) => setImmediate(resolve));
    if (itens.includes('mau')) throw new Error(`recusado: ${itens.join(',')}`);
    return itens.map((i) => i.toUpperCase());
  };
  return { lotes, executar };
}

const saidas = (resultados: PromiseSettledResult<string>[]) =>
  resultados.map((r) => (r.status === 'fulfilled' ? r.value : 'falhou'));

describe('GroupCommit (a fake flush: the batching rules)', () => {
  it("When items arrive in one turn with inicio 'fim-do-turno', then they go in one batch; when it fails, each is tried alone and only the bad one fails", async () => {
    const { lotes, executar } = registrando();
    const grupo = new GroupCommit(executar, { inicio: 'fim-do-turno', repeticao: 'juntos' });
    const resultados = await Promise.allSettled(['a', 'mau', 'b'].map((i) => grupo.add(i)));
    expect(saidas(resultados)).toEqual(['A', 'falhou', 'B']);
    expect(lotes[0]).toEqual(['a', 'mau', 'b']);
    expect(lotes.slice(1).sort()).toEqual([['a'], ['b'], ['mau']]);
  });

  it("When items arrive together with inicio 'imediato', then the first goes at once and the rest wait for the next flush, at most `maximo` a flush", async () => {
    const { lotes, executar } = registrando();
    const grupo = new GroupCommit(executar, { paralelos: 1, maximo: 3 });
    const itens = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(await Promise.all(itens.map((i) => grupo.add(i)))).toEqual(itens.map((i) => i.toUpperCase()));
    expect(lotes).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f']]);
  });

  it("When a batch fails with repeticao 'em-ordem', then its items are tried alone one after the other, in their order of arrival", async () => {
    const emCurso: string[] = [];
    const sozinhos: string[] = [];
    const grupo = new GroupCommit<string, string>(
      async (itens) => {
        if (itens.length > 1) throw new Error('lote recusado');
        expect(emCurso).toEqual([]);
        emCurso.push(itens[0]!);
        await new Promise((resolve) => setImmediate(resolve));
        sozinhos.push(emCurso.pop()!);
        return itens;
      },
      { paralelos: 1 },
    );
    const itens = ['a', 'b', 'c', 'd'];
    expect(await Promise.all(itens.map((i) => grupo.add(i)))).toEqual(itens);
    expect(sozinhos).toEqual(itens);
  });

  it('When `paralelos` flushes are under way, then no other starts until one ends', async () => {
    let emCurso = 0;
    let maximo = 0;
    const grupo = new GroupCommit<number, number>(
      async (itens) => {
        maximo = Math.max(maximo, ++emCurso);
        await new Promise((resolve) => setTimeout(resolve, 1));
        emCurso--;
        return itens;
      },
      { paralelos: 2, maximo: 1 },
    );
    await Promise.all(Array.from({ length: 20 }, (_, i) => grupo.add(i)));
    expect(maximo).toBe(2);
  });

  it('When `escalonarApos` is set and each flush ends before it, then one flush is under way at a time and it carries what arrived during the one before', async () => {
    let emCurso = 0;
    let maximo = 0;
    const tamanhos: number[] = [];
    const grupo = new GroupCommit<number, number>(
      async (itens) => {
        maximo = Math.max(maximo, ++emCurso);
        tamanhos.push(itens.length);
        await new Promise((resolve) => setTimeout(resolve, 5));
        emCurso--;
        return itens;
      },
      { paralelos: 2, escalonarApos: 1_000 },
    );
    const pendentes: Promise<number>[] = [];
    for (let i = 0; i < 30; i++) {
      pendentes.push(grupo.add(i));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(await Promise.all(pendentes)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(maximo).toBe(1);
    expect(tamanhos.length).toBeLessThan(30);
  });

  it('When a flush stalls past `escalonarApos`, then the items behind it go in a second flush beside it and are answered before it ends', async () => {
    let soltar = () => {};
    const parado = new Promise<void>((resolve) => {
      soltar = resolve;
    });
    const lotes: string[][] = [];
    const grupo = new GroupCommit<string, string>(
      async (itens) => {
        lotes.push(itens);
        if (itens.includes('lento')) await parado;
        return itens;
      },
      { paralelos: 2, escalonarApos: 30 },
    );
    const lento = grupo.add('lento');
    const depois = Promise.all([grupo.add('a'), grupo.add('b')]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lotes).toEqual([['lento']]);
    expect(await depois).toEqual(['a', 'b']);
    expect(lotes).toEqual([['lento'], ['a', 'b']]);
    soltar();
    expect(await lento).toBe('lento');
  });

  it('When `espacamento` is set, then two flushes never start closer than it, the first of a quiet moment goes at once, and the items of the time between go together', async () => {
    const inicios: number[] = [];
    const lotes: number[][] = [];
    const grupo = new GroupCommit<number, number>(
      async (itens) => {
        inicios.push(performance.now());
        lotes.push(itens);
        return itens;
      },
      { paralelos: 1, espacamento: 20 },
    );
    const pendentes: Promise<number>[] = [];
    for (let i = 0; i < 40; i++) {
      pendentes.push(grupo.add(i));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(await Promise.all(pendentes)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(lotes[0]).toEqual([0]);
    // Timers never fire early; performance.now() and the timer clock may differ by a fraction of a ms.
    for (let i = 1; i < inicios.length; i++) expect(inicios[i]! - inicios[i - 1]!).toBeGreaterThanOrEqual(19);
    expect(lotes.flat()).toEqual(Array.from({ length: 40 }, (_, i) => i));
    // Items handed in together right after a flush started wait for the next one, all in it.
    const antes = lotes.length;
    await new Promise((resolve) => setTimeout(resolve, 25));
    const juntos = await Promise.all([100, 101, 102, 103].map((i) => grupo.add(i)));
    expect(juntos).toEqual([100, 101, 102, 103]);
    expect(lotes.slice(antes)).toEqual([[100], [101, 102, 103]]);
  });

  it('When an urgent item arrives while others wait for the spacing, then it goes at once and takes them with it', async () => {
    const lotes: string[][] = [];
    const grupo = new GroupCommit<string, string>(
      async (itens) => {
        lotes.push(itens);
        return itens;
      },
      { paralelos: 1, espacamento: 60_000 },
    );
    expect(await grupo.add('a')).toBe('a');
    const b = grupo.add('b');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lotes).toEqual([['a']]);
    expect(await Promise.all([b, grupo.add('urgente', true)])).toEqual(['b', 'urgente']);
    expect(lotes).toEqual([['a'], ['b', 'urgente']]);
    // The urgent item is gone: the next waits for the spacing again.
    const c = grupo.add('c');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lotes).toHaveLength(2);
    expect(await Promise.all([c, grupo.add('outro urgente', true)])).toEqual(['c', 'outro urgente']);
  });

  it('When `maximo` leaves an urgent item out of the flush that starts and a slot is free, then it starts beside that flush instead of waiting for it to end', async () => {
    const lotes: string[][] = [];
    let soltar!: () => void;
    const portao = new Promise<void>((resolve) => {
      soltar = resolve;
    });
    const grupo = new GroupCommit<string, string>(
      async (itens) => {
        lotes.push(itens);
        if (itens.includes('b')) await portao; // a flush that stalls
        return itens;
      },
      { paralelos: 2, maximo: 2, espacamento: 60_000 },
    );
    expect(await grupo.add('a')).toBe('a');
    const esperando = [grupo.add('b'), grupo.add('c')];
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Urgent: the flush starts at once, but holds two items: b and c.
    expect(await grupo.add('urgente', true)).toBe('urgente');
    expect(lotes).toEqual([['a'], ['b', 'c'], ['urgente']]);
    soltar();
    expect(await Promise.all(esperando)).toEqual(['b', 'c']);
  });

  it('When a wait set for `escalonarApos` is pending and the flush in flight ends, then the items wait only for the spacing, not the longer escalonarApos', async () => {
    const inicios: Record<string, number> = {};
    const grupo = new GroupCommit<string, string>(
      async (itens) => {
        for (const i of itens) inicios[i] = performance.now();
        if (itens.includes('a')) await new Promise((resolve) => setTimeout(resolve, 20));
        return itens;
      },
      { paralelos: 2, escalonarApos: 1_000, espacamento: 40 },
    );
    const a = grupo.add('a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Beside a flush in flight: it waits for escalonarApos; once that flush ends, the spacing alone.
    const b = grupo.add('b');
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(inicios.b! - inicios.a!).toBeLessThan(500);
  });

  it('When `semEspacamento` is called (a stop), then the items waiting for the spacing go at once, and the next ones wait for none', async () => {
    const lotes: string[][] = [];
    const grupo = new GroupCommit<string, string>(
      async (itens) => {
        lotes.push(itens);
        return itens;
      },
      { paralelos: 1, espacamento: 60_000, inicio: 'fim-do-turno' },
    );
    expect(await grupo.add('a')).toBe('a');
    const b = grupo.add('b');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lotes).toEqual([['a']]);
    grupo.semEspacamento();
    expect(await b).toBe('b');
    expect(await grupo.add('c')).toBe('c');
    expect(lotes).toEqual([['a'], ['b'], ['c']]);
  });

  it('When `executar` throws before returning a promise, in a batch and in its retries, then every item fails with it and none is left waiting', async () => {
    let chamadas = 0;
    const grupo = new GroupCommit<string, string>(
      (itens) => {
        // The first flush is under way a moment, so the others arrive behind it and go as a batch.
        if (chamadas++ === 0) return new Promise((_, reject) => setImmediate(() => reject(new Error('recusado'))));
        throw new Error(`recusado de imediato: ${itens.join(',')}`);
      },
      { paralelos: 1 },
    );
    const resultados = Promise.allSettled(['a', 'b', 'c', 'd'].map((i) => grupo.add(i)));
    const limite = new Promise<'esperando'>((resolve) => setTimeout(() => resolve('esperando'), 1_000).unref());
    const fim = await Promise.race([resultados, limite]);
    expect(fim === 'esperando' ? fim : fim.map((r) => r.status)).toEqual(Array(4).fill('rejected'));
  });

  it('When a batch fails with an error `naoRepetir` names (the database away), then every item fails with it at once, none tried alone', async () => {
    const lotes: string[][] = [];
    const fora = Object.assign(new Error('Query read timeout'), { fora: true });
    const grupo = new GroupCommit<string, string>(
      async (itens) => {
        lotes.push(itens);
        await new Promise((resolve) => setImmediate(resolve));
        throw fora;
      },
      { paralelos: 1, naoRepetir: (erro) => (erro as { fora?: boolean }).fora === true },
    );
    const resultados = await Promise.allSettled(['a', 'b', 'c', 'd'].map((i) => grupo.add(i)));
    expect(resultados.map((r) => (r.status === 'rejected' ? r.reason : r.value))).toEqual(Array(4).fill(fora));
    expect(lotes).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it("When flushes start, then `aoEsvaziar` is told each one's size, the retries of a failed batch one by one", async () => {
    const { executar } = registrando();
    const tamanhos: number[] = [];
    const grupo = new GroupCommit(executar, { paralelos: 1, maximo: 3, aoEsvaziar: (n) => tamanhos.push(n) });
    await Promise.allSettled(['a', 'b', 'c', 'd', 'mau', 'e'].map((i) => grupo.add(i)));
    // 'a' alone at once, then b c d, then d's batch-mates: 'mau' and 'e' together fail and go alone
    expect(tamanhos).toEqual([1, 3, 2, 1, 1]);
  });
});

describe('GroupCommit on PostgreSQL', () => {
  const tabela = `grupo_teste_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  let admin: pg.Client;
  let sql: SqlPool;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: URL });
    await admin.connect();
    await admin.query(`create table ${tabela} (id int primary key, valor int not null check (valor >= 0))`);
    sql = new SqlPool(URL, 2);
  });
  afterAll(async () => {
    await sql.fechar();
    await admin.query(`drop table if exists ${tabela}`);
    await admin.end();
  });

  it('When 200 rows are added at once, then far fewer statements write them all, each row in a statement with others; a row the table refuses fails alone', async () => {
    const statements: number[] = [];
    const grupo = new GroupCommit<{ id: number; valor: number }, number>(
      async (linhas) => {
        statements.push(linhas.length);
        const escritas = await sql.consultar<{ id: number }>(
          'grupo_teste_inserir',
          `insert into ${tabela} (id, valor) select * from unnest($1::int[], $2::int[]) returning id`,
          [linhas.map((l) => l.id), linhas.map((l) => l.valor)],
        );
        const ids = new Set(escritas.map((e) => e.id));
        return linhas.map((l) => (ids.has(l.id) ? l.id : -1));
      },
      { maximo: 50, paralelos: 2 },
    );
    // Row 77 breaks the check: its batch fails whole, then each of its rows is written alone.
    const linhas = Array.from({ length: 200 }, (_, id) => ({ id, valor: id === 77 ? -1 : id }));
    const resultados = await Promise.allSettled(linhas.map((l) => grupo.add(l)));

    expect(resultados.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(resultados[77]!.status).toBe('rejected');
    const { rows } = await admin.query<{ n: string }>(`select count(*) as n from ${tabela}`);
    expect(Number(rows[0]!.n)).toBe(199);
    // The first statement is alone; the others hold up to 50 rows, plus the failed batch's rows one by one.
    const emGrupo = statements.filter((n) => n > 1);
    expect(emGrupo.length).toBeLessThanOrEqual(5);
    expect(emGrupo.every((n) => n <= 50)).toBe(true);
  });
});
