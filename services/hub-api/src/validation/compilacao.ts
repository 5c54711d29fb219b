import { AppError } from '@hub/http';
import type { ErrorObject } from 'ajv';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { lentoDemais, pesadoDemais } from './erros-do-ajv';
import type { Draft } from './esquemas';

/**
 * ajv compiles the hub's schemas in worker threads only (compilacao.worker.cjs), each schema under a
 * time limit (HUB_SCHEMA_COMPILE_LIMIT): hub-api's event loop never runs ajv's compiler, so a schema
 * that takes long (10,000 patternProperties: minutes) holds no other request. A worker answers with
 * ajv's standalone code, which the main thread loads (standalone.ts).
 *
 * A few workers (`maxWorkers`) serve every compilation, one schema at a time each; others wait their
 * turn (the limit counts the compilation only, not the wait nor a worker's start-up). A worker past
 * the limit is terminated, another starts when needed; an idle one ends after `ociosoMs`.
 *
 * Two kinds of compilation share the workers. A `registro` (a schema being registered or checked,
 * an operator's request that stores nothing until it compiles) holds at most `maxRegistros` workers
 * at once (all but one), and at most `maxFilaDeRegistros` wait for one: more are refused with 503 and
 * Retry-After. A registration also waits no longer than its answer can still arrive in time
 * (`esperaMaximaMs`, its own compilation's limit included): past it, the same 503. Otherwise a few
 * slow schemas queued behind each other are answered 504 by the gateway (GATEWAY_UPSTREAM_TIMEOUT,
 * 30 s) while hub-api still compiles them, for nobody, holding the next operator's registration. A
 * `uso` (a version's first use by this process, which publications wait for) goes ahead
 * of every waiting registration and always finds a worker that no registration holds: slow schemas
 * sent again and again to /versao-de-esquema/verificar-compatibilidade never hold publications.
 */
export type Classe = 'registro' | 'uso';
export type Variante = 'rapido' | 'detalhado';

export interface Pedido {
  esquema: Record<string, unknown>;
  draft: Draft;
  /** `rapido` stops at the first error; `detalhado` keeps every error (allErrors). */
  variante: Variante;
  /** A schema being registered: checked against its meta-schema before it is compiled. */
  verificar?: boolean;
}

/** Past a worker's bounds: its time (HUB_SCHEMA_COMPILE_LIMIT) or its heap (`memoriaMb`). */
export interface Excedeu {
  compilou: false;
  excedeu: true;
  /** The bound passed, in the hub's words (erros-do-ajv.ts). */
  mensagem: string;
}

/** A worker's heap by default: a schema whose compilation needs more is refused, the worker ends. */
const MEMORIA_MB = 512;
const SEM_MEMORIA = 'ERR_WORKER_OUT_OF_MEMORY';

export type Geracao =
  /** `detalhado`: the code keeps every error (asked for, or the fast code overflowed ajv's stack). */
  | { compilou: true; codigo: string; detalhado: boolean; maiorFuncao: number; ms: number }
  | { compilou: false; mensagem: string; estourou: boolean; ms: number }
  /** Not valid against its draft's meta-schema (`verificar`): ajv's errors. */
  | { compilou: false; errosDoEsquema: ErrorObject[]; ms: number }
  | Excedeu;

export interface CompiladorOptions {
  limiteMs: number;
  maxWorkers?: number;
  ociosoMs?: number;
  /** Registrations compiling at once (all workers but one by default, at least one). */
  maxRegistros?: number;
  /** Registrations waiting for a worker; more are refused (503). */
  maxFilaDeRegistros?: number;
  /** A worker's heap (V8's old generation), in MB. */
  memoriaMb?: number;
  /** A registration's wait for a worker and its compilation together at most (ESPERA_MAXIMA_MS). */
  esperaMaximaMs?: number;
}

/** Below the gateway's GATEWAY_UPSTREAM_TIMEOUT (30 s): the 503 reaches the caller, not a 504. */
const ESPERA_MAXIMA_MS = 20_000;

type Espera = (vaga: Vaga | undefined) => void;

const ARQUIVO = path.join(__dirname, 'compilacao.worker.cjs');

interface Vaga {
  worker: Worker;
  pronta: Promise<void>;
  ocioso?: NodeJS.Timeout;
}

export class Compilador {
  readonly limiteMs: number;
  private readonly maxWorkers: number;
  private readonly ociosoMs: number;
  private readonly livres: Vaga[] = [];
  private readonly maxRegistros: number;
  private readonly maxFilaDeRegistros: number;
  private readonly memoriaMb: number;
  private readonly esperaMaximaMs: number;
  private ocupadas = 0;
  private executando = 0;
  /** Registrations holding a worker. */
  private registros = 0;
  private readonly filaDeUsos: Espera[] = [];
  private readonly filaDeRegistros: Espera[] = [];

  constructor({
    limiteMs,
    maxWorkers = 2,
    ociosoMs = 10_000,
    maxRegistros,
    maxFilaDeRegistros = 16,
    memoriaMb = MEMORIA_MB,
    esperaMaximaMs = ESPERA_MAXIMA_MS,
  }: CompiladorOptions) {
    this.memoriaMb = memoriaMb;
    this.esperaMaximaMs = esperaMaximaMs;
    this.limiteMs = limiteMs;
    this.maxWorkers = maxWorkers;
    this.ociosoMs = ociosoMs;
    this.maxRegistros = Math.max(1, Math.min(maxRegistros ?? maxWorkers - 1, maxWorkers));
    this.maxFilaDeRegistros = maxFilaDeRegistros;
  }

  /** ajv's standalone code for one variant of a schema, made in a worker under the limit. */
  async compilar(pedido: Pedido, classe: Classe = 'uso'): Promise<Geracao> {
    const vaga = await this.tomar(classe);
    let devolver = false;
    this.executando += 1;
    try {
      const geracao = await this.executar(vaga, pedido);
      devolver = !('excedeu' in geracao);
      return geracao;
    } finally {
      this.executando -= 1;
      if (classe === 'registro') this.registros -= 1;
      // A worker past a bound (or broken) is terminated: its compilation may still be running.
      if (!devolver) void this.terminar(vaga);
      this.liberar(devolver ? vaga : undefined);
    }
  }

  /** Ends the idle workers (one busy ends when its compilation does). */
  async encerrar(): Promise<void> {
    const livres = this.livres.splice(0);
    await Promise.all(livres.map((vaga) => this.terminar(vaga)));
  }

  /** How many compilations run in workers now (tests wait for one to be under way). */
  get emAndamento(): number {
    return this.executando;
  }

  private executar(vaga: Vaga, pedido: Pedido): Promise<Geracao> {
    return new Promise((resolve, reject) => {
      const { worker } = vaga;
      const acabar = (fazer: () => void) => {
        clearTimeout(relogio);
        worker.off('message', resposta);
        worker.off('error', falha);
        worker.off('exit', saida);
        fazer();
      };
      const resposta = (geracao: Geracao) => acabar(() => resolve(geracao));
      const falha = (error: Error & { code?: string }) =>
        acabar(() =>
          error.code === SEM_MEMORIA
            ? resolve({ compilou: false, excedeu: true, mensagem: pesadoDemais(this.memoriaMb) })
            : reject(error),
        );
      const saida = (code: number) => acabar(() => reject(new Error(`the compilation worker exited (${code})`)));
      const relogio = setTimeout(
        () => acabar(() => resolve({ compilou: false, excedeu: true, mensagem: lentoDemais(this.limiteMs) })),
        this.limiteMs,
      );
      worker.on('message', resposta);
      worker.once('error', falha);
      worker.once('exit', saida);
      worker.postMessage(pedido);
    });
  }

  /**
   * A ready worker: an idle one, a new one while fewer than `maxWorkers` run, or the next freed. A
   * registration takes one only while fewer than `maxRegistros` registrations hold one.
   */
  private async tomar(classe: Classe): Promise<Vaga> {
    // A registration must start by then to be answered within esperaMaximaMs.
    const prazo = Date.now() + Math.max(0, this.esperaMaximaMs - this.limiteMs);
    for (;;) {
      if (classe === 'uso' || this.registros < this.maxRegistros) {
        const livre = this.livres.pop();
        if (livre) {
          clearTimeout(livre.ocioso);
          this.ocupadas += 1;
          if (classe === 'registro') this.registros += 1;
          return livre;
        }
        if (this.ocupadas < this.maxWorkers) {
          this.ocupadas += 1;
          if (classe === 'registro') this.registros += 1;
          const vaga = this.iniciar();
          try {
            await vaga.pronta;
            return vaga;
          } catch (error) {
            this.ocupadas -= 1;
            if (classe === 'registro') this.registros -= 1;
            this.acordar(undefined);
            throw error;
          }
        }
      }
      if (classe === 'registro' && this.filaDeRegistros.length >= this.maxFilaDeRegistros)
        throw this.ocupada(`${this.filaDeRegistros.length} schemas are waiting to be compiled already`);
      // Woken with a worker handed over (counted already), or with none when a slot was freed.
      const entregue = await (classe === 'uso'
        ? new Promise<Vaga | undefined>((resolve) => this.filaDeUsos.push(resolve))
        : this.esperarAte(prazo));
      if (entregue) return entregue;
    }
  }

  private ocupada(motivo: string): AppError {
    return new AppError(503, 'compilacao_ocupada', `${motivo}; send it again later`, undefined, {
      'Retry-After': String(Math.max(1, Math.ceil(this.limiteMs / 1000))),
    });
  }

  /** A registration's place in line until `prazo`: then it leaves the line, refused (503). */
  private esperarAte(prazo: number): Promise<Vaga | undefined> {
    return new Promise((resolve, reject) => {
      const vez: Espera = (vaga) => {
        clearTimeout(relogio);
        resolve(vaga);
      };
      const relogio = setTimeout(
        () => {
          const i = this.filaDeRegistros.indexOf(vez);
          if (i >= 0) this.filaDeRegistros.splice(i, 1);
          reject(this.ocupada(`no worker was free to compile it within ${this.esperaMaximaMs} ms`));
        },
        Math.max(0, prazo - Date.now()),
      );
      this.filaDeRegistros.push(vez);
    });
  }

  /** Wakes the next in line that may take a worker (first uses first): true when one was. */
  private acordar(vaga: Vaga | undefined): boolean {
    const uso = this.filaDeUsos.shift();
    if (uso) {
      uso(vaga);
      return true;
    }
    if (this.registros < this.maxRegistros) {
      const registro = this.filaDeRegistros.shift();
      if (registro) {
        if (vaga) this.registros += 1;
        registro(vaga);
        return true;
      }
    }
    return false;
  }

  /** Gives a worker back (to the next in line, or idle), or frees its slot after terminating it. */
  private liberar(vaga: Vaga | undefined): void {
    if (!vaga) {
      this.ocupadas -= 1;
      this.acordar(undefined);
      return;
    }
    if (this.acordar(vaga)) return;
    this.ocupadas -= 1;
    vaga.ocioso = setTimeout(() => {
      const i = this.livres.indexOf(vaga);
      if (i >= 0) this.livres.splice(i, 1);
      void this.terminar(vaga);
    }, this.ociosoMs);
    vaga.ocioso.unref();
    this.livres.push(vaga);
  }

  private iniciar(): Vaga {
    // The main thread's stack (V8's ~1 MB), not a worker's 4 MB: a schema too wide for ajv to nest a
    // block per keyword overflows it soon and gets the every-error code, as on the event loop before;
    // with 4 MB ajv went on nesting for minutes (3,000 properties) before overflowing.
    const worker = new Worker(ARQUIVO, { resourceLimits: { maxOldGenerationSizeMb: this.memoriaMb, stackSizeMb: 1 } });
    // A worker never keeps the process alive (a test's end, a shutdown).
    worker.unref();
    const vaga: Vaga = { worker, pronta: Promise.resolve() };
    // An idle worker that ends (killed, out of memory) is not handed out again.
    worker.on('exit', () => {
      const i = this.livres.indexOf(vaga);
      if (i >= 0) this.livres.splice(i, 1);
    });
    const pronta = new Promise<void>((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the compilation worker exited (${code})`)));
    });
    vaga.pronta = pronta;
    return vaga;
  }

  private async terminar(vaga: Vaga): Promise<void> {
    clearTimeout(vaga.ocioso);
    await vaga.worker.terminate();
  }
}
