import { dados } from '../api';
import { useCarga } from '../carga';
import { Estado } from '../ui';
import { portal } from './sessao';

const CIRCUITO: Record<string, string> = {
  fechado: 'fechado (entregando)',
  aberto: 'aberto (entregas retidas)',
  meio_aberto: 'meio aberto (testando)',
};

const ms = (valor: number | null) => (valor === null ? '—' : `${valor.toLocaleString('pt-BR')} ms`);

/** GET /assinaturas/{id}/saude: the last 24 hours of a subscription and its destination's state. */
export function Saude(props: { assinaturaId: string; versao: number }) {
  const carga = useCarga(
    () => dados(portal.GET('/assinaturas/{id}/saude', { params: { path: { id: props.assinaturaId } } })),
    `${props.assinaturaId}|${props.versao}`,
  );
  return (
    <Estado carga={carga}>
      {(s) => (
        <span class="saude">
          {s.tentativas_nas_ultimas_24_horas.toLocaleString('pt-BR')} tentativas,{' '}
          {s.falhas_nas_ultimas_24_horas.toLocaleString('pt-BR')} falhas (24 h)
          <br />
          {s.destino ? (
            <>
              circuito {CIRCUITO[s.destino.circuito] ?? s.destino.circuito}
              {s.destino.pausado ? ' · pausado' : ''}
              <br />
              p50 {ms(s.destino.latencia_p50_ms)} · p99 {ms(s.destino.latencia_p99_ms)}
            </>
          ) : (
            'destino ainda sem entregas'
          )}
        </span>
      )}
    </Estado>
  );
}
