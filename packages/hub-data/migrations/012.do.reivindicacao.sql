-- Who holds a delivery, and until when its job is accounted for (issue 18, "The sweeper never
-- resends a job that is still travelling"; docs/decisions.md).
--
-- reivindicacao / reivindicada_ate: the claim of the worker attempting it (a random token and its
-- lease). Another claim takes an em_andamento delivery only once the lease has ended (its worker
-- died) or with the same token (the job that holds the claim, back from a deferral or a retry).
-- reivindicacoes_sem_tentativa: claims since the last recorded attempt; claims whose worker died
-- again and again mark a poison job, which goes to the error queue once.
-- retorno_ate: the latest moment the job can come back from its delay queue (the end of its step,
-- while proxima_tentativa_em is its own, earlier, expiry); the sweeper counts from it.
alter table entrega
  add column reivindicacao uuid,
  add column reivindicada_ate timestamptz(3),
  add column reivindicacoes_sem_tentativa integer not null default 0 check (reivindicacoes_sem_tentativa >= 0),
  add column retorno_ate timestamptz(3);

-- When the destination was last resumed: its jobs still cycle through the pause's delay queue for a
-- while, and the sweeper leaves its deliveries alone until they are back.
alter table destino add column retomado_em timestamptz(3);
