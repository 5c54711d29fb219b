-- tentativa.assinatura_id stays a copy of its delivery's subscription after the insert (docs/decisions.md
-- "Review of migration 026"). Migration 026 filled it on insert only: an operator who moved a delivery to
-- another subscription (`update entrega set assinatura_id = …`), or an attempt to another delivery
-- (`update tentativa set entrega_id = …`), or who wrote the column by hand, left attempts under the old
-- subscription: GET /tentativa?assinatura_id listed them there, and its total no longer equalled the
-- count through entrega. entrega_nao_concluida's copy already follows such a move (migration 018's
-- triggers); now the attempts' copy does too.
--
-- No application code updates entrega.assinatura_id or tentativa.entrega_id/assinatura_id: both triggers
-- are `update of` those columns, so the workers' updates of entrega (situacao, claims, counters) and
-- updates of tentativa's iniciada_em or sucesso (migration 024's trigger) do not even evaluate them,
-- and inserts are untouched (the worker's record costs what it cost). An insert that writes a wrong
-- assinatura_id is not checked: the one writer that sets it, the worker's record, copies it from the
-- delivery in the same statement, and checking every insert would cost a lookup per attempt
-- (docs/decisions.md).
--
-- Two transactions, as in 026 (postgrator sends the file as one query): the triggers (CREATE TRIGGER
-- holds SHARE ROW EXCLUSIVE on entrega and tentativa for a moment), then the repair of any copy that
-- diverged before them, under ROW EXCLUSIVE only (inserts and reads go on): with nothing to fix, a
-- hash join of the two tables, 0.9-1.5 s at 800,000 deliveries and 800,000 attempts (16 batches in
-- work_mem), so some 5-8 s at the read benchmark's 3 million and 3.75 million. Both can run again.

begin;
-- A delivery moved to another subscription: its attempts (a few, by tentativa_numero_unico) follow.
create or replace function entrega_assinatura_movida() returns trigger language plpgsql as $$
begin
  update tentativa set assinatura_id = new.assinatura_id
   where entrega_id = new.id and assinatura_id is distinct from new.assinatura_id;
  return null;
end $$;

drop trigger if exists entrega_assinatura_movida on entrega;
create trigger entrega_assinatura_movida after update of assinatura_id on entrega for each row
  when (old.assinatura_id is distinct from new.assinatura_id) execute function entrega_assinatura_movida();

-- An attempt moved to another delivery, or its copy written by hand: it takes its delivery's
-- subscription (026's insert function, which sets new.assinatura_id from the delivery; a delivery that
-- does not exist leaves it null, refused by NOT NULL as the insert is).
drop trigger if exists tentativa_assinatura_mantida on tentativa;
create trigger tentativa_assinatura_mantida before update of entrega_id, assinatura_id on tentativa for each row
  when (old.entrega_id is distinct from new.entrega_id or old.assinatura_id is distinct from new.assinatura_id)
  execute function tentativa_assinatura_da_entrega();
commit;

begin;
update tentativa t set assinatura_id = e.assinatura_id
  from entrega e
 where e.id = t.entrega_id and t.assinatura_id <> e.assinatura_id;
commit;
