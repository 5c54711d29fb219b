-- The destinations with a queue of their own, read every refresh by each worker and at every change
-- by hub-api's relay cache: an index of those few rows instead of a scan of every destination the
-- platform ever met (architecture §5, fair scheduling).
create index destino_isolado on destino (origem) where isolamento is not null;
