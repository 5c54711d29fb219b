-- A TRUNCATE of evento (an operator's `truncate evento cascade`, or of a table whose cascade reaches it:
-- aplicativo, tipo_de_evento, versao_de_esquema) fires no delete trigger, so eventos_guardados
-- (migration 005: GET /evento's exact total and its deep pages) kept the count of every event it
-- erased, for good: the total stayed at the old number over an empty table, and a deep page sought an
-- hour that no longer held anything. entrega has had its truncate trigger since migration 018 (and
-- zeroes entregas_guardadas since 023); the cascade truncates entrega too and runs it, so GET /entrega's
-- total was right and GET /evento's was not.
--
-- As entrega's: every slice of every hour back to 0, in the truncating statement's transaction (a
-- TRUNCATE holds evento's ACCESS EXCLUSIVE lock, so no event is written meanwhile). `eventos` (what
-- arrived in the hour, the summary's) is history, not what is stored: untouched.
-- (Numbered 025: 024 is reserved for another change under way.)
create function eventos_guardados_esvaziar() returns trigger language plpgsql as $$
begin
  update resumo_por_hora set eventos_guardados = 0 where eventos_guardados <> 0;
  return null;
end $$;

create trigger evento_truncado after truncate on evento
  for each statement execute function eventos_guardados_esvaziar();
