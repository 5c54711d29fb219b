-- Half of PostgreSQL's work per delivery (issue 19; docs/decisions.md "PostgreSQL's work per
-- delivery"). A delivery row is written three times (publication, the worker's claim, its record);
-- `situacao` and `proxima_tentativa_em` were in five indexes of entrega and in the predicates of four
-- more, so none of those updates could be HOT and each wrote an entry in every one of its 12 indexes.
--
-- The indexes that find deliveries by where they are in their life move to a narrow table of the
-- deliveries NOT concluded, kept by triggers on entrega (every writer, whoever it is: the hub, the
-- worker, a test, an operator's SQL): a concluded delivery (the bulk) has no row there, so a
-- delivery that succeeds costs that table one small insert and one delete. entrega keeps only
-- indexes on columns that never change after publication, so the claim and the record of an attempt
-- are HOT updates (no index entry), given room on the page (fillfactor below).

-- The queue (pendente, em_andamento, aguardando_nova_tentativa: one value, so a claim changes nothing
-- here), the error queue, or cancelled. entrega.situacao stays the truth; this is its index.
create function fase_da_entrega(situacao text) returns text
  language sql immutable strict parallel safe
  return case when situacao in ('pendente', 'em_andamento', 'aguardando_nova_tentativa') then 'fila' else situacao end;

create table entrega_nao_concluida (
  entrega_id              uuid primary key,
  fase                    text not null check (fase in ('fila', 'fila_de_erro', 'cancelada')),
  -- copies of the delivery's columns, kept by the triggers below
  proxima_tentativa_em    timestamptz(3) not null,
  criada_em               timestamptz(3) not null,
  assinatura_id           uuid not null,
  tipo_de_evento_id       uuid not null,
  aplicativo_assinante_id uuid not null
);
-- GET /entrega?situacao=… (not concluida), newest first; the summary's counts.
create index entrega_nao_concluida_fase on entrega_nao_concluida (fase, criada_em desc, entrega_id desc);
-- What the sweeper reads: the queue by due time.
create index entrega_nao_concluida_vencimento on entrega_nao_concluida (proxima_tentativa_em) where fase = 'fila';
-- The error queue by subscription, type and subscriber, oldest first (reprocessing batches walk them
-- forward, GET /entrega?situacao=fila_de_erro&… backwards): entrega_erro_* of migration 006, moved.
create index entrega_nao_concluida_erro_assinatura on entrega_nao_concluida (assinatura_id, criada_em, entrega_id)
  where fase = 'fila_de_erro';
create index entrega_nao_concluida_erro_tipo on entrega_nao_concluida (tipo_de_evento_id, criada_em, entrega_id)
  where fase = 'fila_de_erro';
create index entrega_nao_concluida_erro_assinante on entrega_nao_concluida (aplicativo_assinante_id, criada_em, entrega_id)
  where fase = 'fila_de_erro';

-- Statement-level, over transition tables (as the counts of migration 005): one set-based statement
-- per writing statement, whatever its size. No foreign key: checking one would lock the delivery's row
-- (a WAL record) on every insert; the delete trigger removes the row instead.
create function entrega_nao_concluida_inserir() returns trigger language plpgsql as $$
begin
  insert into entrega_nao_concluida (entrega_id, fase, proxima_tentativa_em, criada_em, assinatura_id,
                                     tipo_de_evento_id, aplicativo_assinante_id)
  select id, fase_da_entrega(situacao), proxima_tentativa_em, criada_em, assinatura_id, tipo_de_evento_id,
         aplicativo_assinante_id
    from novas where situacao <> 'concluida';
  return null;
end $$;

-- Only what changes the copy is written: a claim (pendente → em_andamento, the same fase) writes
-- nothing here; a success deletes the row; a failure moves its due time.
create function entrega_nao_concluida_atualizar() returns trigger language plpgsql as $$
begin
  delete from entrega_nao_concluida c using novas n
   where c.entrega_id = n.id and n.situacao = 'concluida';
  insert into entrega_nao_concluida as c (entrega_id, fase, proxima_tentativa_em, criada_em, assinatura_id,
                                          tipo_de_evento_id, aplicativo_assinante_id)
  select n.id, fase_da_entrega(n.situacao), n.proxima_tentativa_em, n.criada_em, n.assinatura_id,
         n.tipo_de_evento_id, n.aplicativo_assinante_id
    from novas n join velhas v on v.id = n.id
   where n.situacao <> 'concluida'
     and (v.situacao = 'concluida'
          or (fase_da_entrega(n.situacao), n.proxima_tentativa_em, n.criada_em, n.assinatura_id, n.tipo_de_evento_id,
              n.aplicativo_assinante_id)
             is distinct from
             (fase_da_entrega(v.situacao), v.proxima_tentativa_em, v.criada_em, v.assinatura_id, v.tipo_de_evento_id,
              v.aplicativo_assinante_id))
  on conflict (entrega_id) do update
    set fase = excluded.fase, proxima_tentativa_em = excluded.proxima_tentativa_em, criada_em = excluded.criada_em,
        assinatura_id = excluded.assinatura_id, tipo_de_evento_id = excluded.tipo_de_evento_id,
        aplicativo_assinante_id = excluded.aplicativo_assinante_id;
  return null;
end $$;

create function entrega_nao_concluida_apagar() returns trigger language plpgsql as $$
begin
  delete from entrega_nao_concluida c using velhas v where c.entrega_id = v.id and v.situacao <> 'concluida';
  return null;
end $$;

create function entrega_nao_concluida_esvaziar() returns trigger language plpgsql as $$
begin
  truncate entrega_nao_concluida;
  return null;
end $$;

create trigger entrega_inserida after insert on entrega
  referencing new table as novas for each statement execute function entrega_nao_concluida_inserir();
create trigger entrega_atualizada after update on entrega
  referencing old table as velhas new table as novas for each statement execute function entrega_nao_concluida_atualizar();
create trigger entrega_apagada after delete on entrega
  referencing old table as velhas for each statement execute function entrega_nao_concluida_apagar();
create trigger entrega_truncada after truncate on entrega
  for each statement execute function entrega_nao_concluida_esvaziar();

-- The deliveries not concluded before this migration, copied while no one can write entrega.
lock table entrega in share row exclusive mode;
insert into entrega_nao_concluida (entrega_id, fase, proxima_tentativa_em, criada_em, assinatura_id, tipo_de_evento_id,
                                   aplicativo_assinante_id)
select id, fase_da_entrega(situacao), proxima_tentativa_em, criada_em, assinatura_id, tipo_de_evento_id,
       aplicativo_assinante_id
  from entrega where situacao <> 'concluida';

-- Every index of entrega on situacao or proxima_tentativa_em (their work now done by the table above),
-- and entrega_evento, which entrega_evento_criada (evento_id, criada_em desc, id desc) makes redundant
-- (the cascade from evento and the lists of one event's deliveries use that one).
drop index entrega_evento;
drop index entrega_em_aberto;
drop index entrega_situacao;
drop index entrega_erro_assinatura;
drop index entrega_erro_tipo;
drop index entrega_erro_assinante;

-- Room on each page for the new versions of its rows: a HOT update must find space on the same page.
-- The deliveries of one publication batch fill a few pages together, and the worker claims them in a
-- batch too, in ONE statement, within milliseconds: every row of a page gets its new version at once,
-- before the old ones can be pruned (the claiming statement itself still sees them). So half of each
-- page is left for that; the record, later, finds the claimed-away versions pruned. At 70 % a third
-- of the updates still left their page (measured: 64 % HOT). New pages only.
alter table entrega set (fillfactor = 50);
