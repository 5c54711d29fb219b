/** Types of itens-unicos.cjs (its comments say what each does). */
export declare class Identidades {
  de(valor: unknown): number;
}
export declare function primeiroRepetido(numeros: Identidades, itens: unknown[]): [number, number] | undefined;
