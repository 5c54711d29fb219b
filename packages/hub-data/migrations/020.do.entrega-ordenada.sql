-- Ordered delivery per entity (docs/decisions.md "Ordered delivery per entity"; architecture §5).
-- A subscription with entrega_ordenada attempts the deliveries of one entidade_id one at a time, in
-- the order their events were accepted. A delivery that must wait is written with em_espera and its
-- job is NOT published: it holds no worker and no place in any queue. Whoever makes the delivery
-- holding the turn final releases the next one (liberar_seguintes below) and publishes its job; the
-- sweeper releases what such a process left behind.

alter table assinatura add column entrega_ordenada boolean not null default false;

-- 1, 2, 3… per (subscription, entity), assigned at publication; null for an unordered subscription.
alter table entrega add column sequencia bigint;
-- Waiting for an earlier delivery of its entity: pendente with no job anywhere. Not indexed (the
-- worker's updates of entrega stay HOT); entrega_nao_concluida keeps such a row out of the sweeper's
-- reach (its copy of proxima_tentativa_em is 'infinity', below).
alter table entrega add column em_espera boolean not null default false;

-- The next delivery of a chain, and the one at a given sequencia: columns that never change after
-- publication, so this index costs the worker's updates nothing (they stay HOT).
create index entrega_sequencia on entrega (assinatura_id, entidade_id, sequencia) where sequencia is not null;

-- One row per (subscription, entity) that ever had an ordered delivery. `ultima`: the last sequencia
-- assigned. `pronta`: the sequencia whose turn it is (its delivery released, not final yet), or
-- ultima + 1 when the chain is idle (the next one published goes at once). Every change of a chain
-- goes through this row's lock: publication's upsert and liberar_seguintes.
create table sequencia_de_entidade (
  assinatura_id uuid   not null references assinatura (id) on delete cascade,
  entidade_id   text   not null,
  ultima        bigint not null,
  pronta        bigint not null,
  primary key (assinatura_id, entidade_id)
);
-- The chains with a delivery released or waiting: where the sweeper looks for a turn left behind.
create index sequencia_de_entidade_ativa on sequencia_de_entidade (assinatura_id, entidade_id) where pronta <= ultima;

-- The copy in entrega_nao_concluida (migration 018) of a waiting delivery is due at 'infinity': the
-- sweeper's scan by due time never meets it. entrega.proxima_tentativa_em keeps a real instant.
create function vencimento_da_entrega(proxima_tentativa_em timestamptz, em_espera boolean) returns timestamptz
  language sql immutable strict parallel safe
  return case when em_espera then 'infinity'::timestamptz else proxima_tentativa_em end;

create or replace function entrega_nao_concluida_inserir() returns trigger language plpgsql as $$
begin
  insert into entrega_nao_concluida (entrega_id, fase, proxima_tentativa_em, criada_em, assinatura_id,
                                     tipo_de_evento_id, aplicativo_assinante_id)
  select id, fase_da_entrega(situacao), vencimento_da_entrega(proxima_tentativa_em, em_espera), criada_em,
         assinatura_id, tipo_de_evento_id, aplicativo_assinante_id
    from novas where situacao <> 'concluida';
  return null;
end $$;

create or replace function entrega_nao_concluida_atualizar() returns trigger language plpgsql as $$
begin
  delete from entrega_nao_concluida c using novas n
   where c.entrega_id = n.id and n.situacao = 'concluida';
  insert into entrega_nao_concluida as c (entrega_id, fase, proxima_tentativa_em, criada_em, assinatura_id,
                                          tipo_de_evento_id, aplicativo_assinante_id)
  select n.id, fase_da_entrega(n.situacao), vencimento_da_entrega(n.proxima_tentativa_em, n.em_espera), n.criada_em,
         n.assinatura_id, n.tipo_de_evento_id, n.aplicativo_assinante_id
    from novas n join velhas v on v.id = n.id
   where n.situacao <> 'concluida'
     and (v.situacao = 'concluida'
          or (fase_da_entrega(n.situacao), vencimento_da_entrega(n.proxima_tentativa_em, n.em_espera), n.criada_em,
              n.assinatura_id, n.tipo_de_evento_id, n.aplicativo_assinante_id)
             is distinct from
             (fase_da_entrega(v.situacao), vencimento_da_entrega(v.proxima_tentativa_em, v.em_espera), v.criada_em,
              v.assinatura_id, v.tipo_de_evento_id, v.aplicativo_assinante_id))
  on conflict (entrega_id) do update
    set fase = excluded.fase, proxima_tentativa_em = excluded.proxima_tentativa_em, criada_em = excluded.criada_em,
        assinatura_id = excluded.assinatura_id, tipo_de_evento_id = excluded.tipo_de_evento_id,
        aplicativo_assinante_id = excluded.aplicativo_assinante_id;
  return null;
end $$;

-- The turn of each chain whose delivery `sequencia` became final (concluida, fila_de_erro,
-- cancelada) passes to the chain's next delivery not final; a waiting one is released (em_espera
-- false, due now) and its job's content answered, for the caller to publish after its commit. A
-- chain whose turn is not at that sequencia (another process passed it already, or the delivery
-- was a resend of an earlier one) is left alone, so passing a turn twice is harmless. With no
-- delivery left the chain becomes idle (pronta = ultima + 1).
--
-- Two statements on purpose (a function in READ COMMITTED gives each its own snapshot): the first
-- locks the chains' rows, in key order as publication does; the second, whose snapshot is taken
-- after, sees every delivery of a publication that held a row before (it committed) while any later
-- one waits for this transaction. One statement could miss a delivery committed between its
-- snapshot and its lock, and that delivery would wait for ever.
create function liberar_seguintes(finais jsonb)
  returns table (entrega_id text, evento_id text, assinatura_id text, url_de_destino text, evento_tipo text,
                 versao_do_esquema int, entidade_id text, ocorrido_em timestamptz, recebido_em timestamptz,
                 aplicativo_publicador_id text, dados text, teste boolean, tentativas_no_ciclo_atual int,
                 ultimo_erro text, sequencia bigint)
  language plpgsql volatile as $$
#variable_conflict use_column
begin
  perform 1
     from sequencia_de_entidade s
     join (select distinct f.assinatura_id, f.entidade_id
             from jsonb_to_recordset(finais) as f(assinatura_id uuid, entidade_id text)) f
       on f.assinatura_id = s.assinatura_id and f.entidade_id = s.entidade_id
    order by s.assinatura_id, s.entidade_id
      for update of s;
  return query
    with f as (
      select distinct f.assinatura_id, f.entidade_id, f.sequencia
        from jsonb_to_recordset(finais) as f(assinatura_id uuid, entidade_id text, sequencia bigint)
    ),
    vez as (
      select s.assinatura_id, s.entidade_id, s.pronta, s.ultima
        from sequencia_de_entidade s join f
          on f.assinatura_id = s.assinatura_id and f.entidade_id = s.entidade_id and f.sequencia = s.pronta
    ),
    proxima as (
      select v.assinatura_id, v.entidade_id, v.ultima, n.id, n.sequencia
        from vez v
        left join lateral (
          select e.id, e.sequencia from entrega e
           where e.assinatura_id = v.assinatura_id and e.entidade_id = v.entidade_id and e.sequencia is not null
             and e.sequencia > v.pronta and e.situacao not in ('concluida', 'fila_de_erro', 'cancelada')
           order by e.sequencia limit 1
        ) n on true
    ),
    passadas as (
      update sequencia_de_entidade s set pronta = coalesce(p.sequencia, p.ultima + 1)
        from proxima p where s.assinatura_id = p.assinatura_id and s.entidade_id = p.entidade_id
    ),
    marcadas as (
      update entrega e set em_espera = false, proxima_tentativa_em = now(), atualizada_em = now()
        from proxima p where e.id = p.id and e.em_espera and e.situacao = 'pendente'
      returning e.id, e.evento_id, e.assinatura_id, e.url_de_destino, e.tentativas_no_ciclo_atual, e.ultimo_erro,
                e.sequencia
    )
    select m.id::text, m.evento_id::text, m.assinatura_id::text, m.url_de_destino, t.nome::text,
           ev.versao_do_esquema, ev.entidade_id, ev.ocorrido_em, ev.recebido_em, ev.aplicativo_publicador_id::text,
           ev.dados::text, ev.publicado_pelo_email is not null, m.tentativas_no_ciclo_atual, m.ultimo_erro,
           m.sequencia
      from marcadas m
      join evento ev on ev.id = m.evento_id
      join tipo_de_evento t on t.id = ev.tipo_de_evento_id;
end $$;
