let ligado = false;

/** True once the SDK was started in this process (spans are recorded and exported). */
export const rastreamentoLigado = (): boolean => ligado;

export function marcarLigado(): void {
  ligado = true;
}
