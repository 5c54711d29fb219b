-- Every attempt carries its delivery's subscription (docs/decisions.md "A subscription's attempts"):
-- GET /tentativa?assinatura_id= read `entrega_id in (select id from entrega where assinatura_id = …)`,
-- and its total probed tentativa_numero_unico once per delivery of the subscription (~50,000 of them
-- at 3,000,000 deliveries: 339 ms at p99). With the column and an index that leads with it, the page
-- and the total read only the subscription's attempts, in the list's order.
--
-- tentativa is large and written all the time (every record of every worker), so this file is six
-- transactions, not one (explicit BEGIN/COMMIT: postgrator sends the file as one query, which would
-- otherwise be one implicit transaction holding tentativa's locks for the whole backfill). Each step
-- can run again if a later one fails (the migration is recorded only after the last).

-- 1. The column, nullable, and what fills it on insert. Adding a nullable column without a default
-- only changes the catalog: ACCESS EXCLUSIVE for a moment. From this commit on every attempt inserted
-- carries its subscription: the new worker's record writes it (it has e.assinatura_id in the same
-- statement); an insert that leaves it out (a worker of the previous version during a rolling deploy,
-- an operator, a test) gets it from its delivery through the trigger below, which stays: a worker
-- that writes the column pays only the WHEN (one null test per attempt), the function never runs.
-- No foreign key to assinatura: it would query and lock the subscription's row for each attempt
-- recorded (what migration 022 took off entrega.aplicativo_assinante_id). The column is a copy of
-- entrega.assinatura_id, which entrega_assinatura_id_fkey keeps pointing at a subscription, and
-- which nothing changes (subscriptions are deleted softly, excluida_em; an operator who moves a
-- delivery to another subscription must move its attempts too).
begin;
alter table tentativa add column if not exists assinatura_id uuid;

create or replace function tentativa_assinatura_da_entrega() returns trigger language plpgsql as $$
begin
  select e.assinatura_id into new.assinatura_id from entrega e where e.id = new.entrega_id;
  return new;
end $$;

drop trigger if exists tentativa_sem_assinatura on tentativa;
create trigger tentativa_sem_assinatura before insert on tentativa for each row
  when (new.assinatura_id is null) execute function tentativa_assinatura_da_entrega();
commit;

-- 2. The backfill: one UPDATE of the attempts stored before step 1, in a transaction of its own. It
-- holds ROW EXCLUSIVE on tentativa and the locks of the rows it updates: the workers' records
-- (inserts) and the reads go on meanwhile; only a delete of those same attempts (retention's cascade)
-- waits for its commit. Measured on the read benchmark's database (bench/entregas-leitura.ts --manter:
-- 3,751,437 attempts of 3,000,000 deliveries, 2 CPUs shared with other runs, load average 4.6):
-- 67.6 s and 4.2 GiB of WAL (every row gets a new version and five index entries: the heap went from
-- 701 to 1,460 MB until autovacuum reuses the dead half); an insert of an attempt in a loop beside it
-- took 1.4 ms at p50, 436 ms at most. Run again over filled rows it only scans: 5.9 s, no WAL.
-- Batches were considered: they cannot commit from a loop here (a DO block or a procedure cannot
-- COMMIT inside the implicit transaction block of a multi-statement query), and a fixed list of
-- batches would not fit every table's size; the one UPDATE blocks no insert, which is what a live
-- table needs. It leaves one dead version per attempt for autovacuum, as any rewrite of every row
-- would.
-- The update sets assinatura_id only: migration 024's row trigger tentativa_movida fires on `update
-- of iniciada_em, sucesso`, so it is not even evaluated, and tentativa has no statement trigger on
-- update (its counts are insert/delete/truncate). The foreign key's check on entrega_id is skipped
-- because the key does not change. The new index is created after, so the rows are not indexed twice.
begin;
update tentativa t set assinatura_id = e.assinatura_id
  from entrega e
 where e.id = t.entrega_id and t.assinatura_id is null;
commit;

-- 3. NOT NULL, cheap and safe now that every row and every insert carries it. SET NOT NULL alone
-- would scan the table under ACCESS EXCLUSIVE (no read nor write meanwhile). Instead, three short
-- transactions: a CHECK added NOT VALID (ACCESS EXCLUSIVE for a moment, no scan); its validation,
-- which scans under SHARE UPDATE EXCLUSIVE (reads and writes go on); then SET NOT NULL, which uses
-- the validated CHECK instead of scanning (PostgreSQL 12 and later), and the CHECK is dropped. In one
-- transaction the first lock would be held through the scan.
begin;
alter table tentativa drop constraint if exists tentativa_assinatura_presente;
alter table tentativa add constraint tentativa_assinatura_presente check (assinatura_id is not null) not valid;
commit;
begin;
alter table tentativa validate constraint tentativa_assinatura_presente;
commit;
begin;
alter table tentativa alter column assinatura_id set not null;
alter table tentativa drop constraint tentativa_assinatura_presente;
commit;

-- 4. GET /tentativa?assinatura_id='s index: the subscription's attempts in the list's order, so its
-- first page reads 10 entries and its total counts the subscription's entries only (an index-only
-- scan once the visibility map covers them). sucesso and status_http are INCLUDEd (5 bytes, 8 with
-- the alignment, on a 40-byte key) because the panel combines them with the subscription: without
-- them `assinatura_id = … and sucesso = false` counted through the heap, one page read per attempt
-- of the subscription (50,359 pages, 287 ms in the plan for ~62,000 attempts); with them the count is
-- index-only and the page tests them in the index. One more index entry per attempt recorded, beside
-- the five tentativa has (docs/decisions.md). Not CONCURRENTLY: that cannot run in a multi-statement
-- query either; the build holds SHARE on tentativa, so the workers' records wait for it while the
-- reads go on: 3.1 s on the same database (244 MB, 222 MiB of WAL; the insert beside it waited 3.1 s).
-- Step 3's validation took 2.0 s and blocked nothing.
begin;
create index if not exists tentativa_assinatura on tentativa (assinatura_id, iniciada_em desc, id desc)
  include (sucesso, status_http);
commit;
