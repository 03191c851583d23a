-- Audits start in the log: the owner appends an opening entry, naming the auditor's verifier key,
-- the SHA-256 of the auditor's secret nonce, a checkpoint the log signed before, and either how many
-- nights to draw or the nights the owner names. Only then does the auditor reveal the nonce, and the
-- draw is made from it and the named checkpoint's root; so every audit ever begun is witnessed with
-- the rest of the log, and nobody learns a draw before its audit is in the log. The entry, RFC 8785
-- canonical JSON like every entry:
--   {"auditor":"<vkey>","checkpoint":<size>,"kind":"audit","nonce_sha256":"<64 hex>","sample":<k>}
-- or with "nights":["YYYY-MM-DD",…] (in date order) in place of "sample".

-- One opening per nonce: an opening whose nonce was used is a replay, never a second audit.
create unique index log_entry_audit_nonce_idx on stats.log_entry ((entry::jsonb ->> 'nonce_sha256'))
  where date is null and entry::jsonb ->> 'kind' = 'audit';

-- The opening as its entry's bytes. The auditor key is checked before (no quote or backslash), so it
-- needs no escaping.
create function stats.log_opening_entry_text(p_auditor text, p_checkpoint bigint, p_nonce_sha256 text, p_sample integer, p_nights date[]) returns text
language sql immutable set search_path = '' as $$
  select '{"auditor":"' || p_auditor || '","checkpoint":' || p_checkpoint || ',"kind":"audit"'
    || coalesce(',"nights":[' || (select pg_catalog.string_agg('"' || pg_catalog.to_char(d, 'YYYY-MM-DD') || '"', ',' order by d)
                                  from pg_catalog.unnest(p_nights) d) || ']', '')
    || ',"nonce_sha256":"' || p_nonce_sha256 || '"'
    || coalesce(',"sample":' || p_sample, '') || '}'
$$;
alter function stats.log_opening_entry_text(text, bigint, text, integer, date[]) owner to stats_owner;

-- Appends an audit's opening to the log in use; the writer signs it with its next write, as it signs
-- every entry. The checkpoint must be one the log signed: an opening after it, so the draw's root was
-- fixed before the audit began. Exactly one of p_sample and p_nights. Returns the entry's index.
-- Run by the owner (`npm run audit -- open`), never by the writer.
create function stats.open_audit(p_auditor text, p_nonce_sha256 text, p_checkpoint bigint, p_sample integer, p_nights date[]) returns bigint
language plpgsql set search_path = '' as $$
declare
  demo boolean := coalesce(stats.data_source() = 'demo', false);
  next_idx bigint;
begin
  if p_auditor !~ '^[^+\s"\\]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$' then
    raise exception 'the auditor is not a note verifier key (<name>+<8 hex>+<base64>), or its name holds a quote or a backslash'
      using errcode = 'invalid_parameter_value';
  end if;
  if p_nonce_sha256 !~ '^[0-9a-f]{64}$' then
    raise exception 'the nonce''s SHA-256 is 64 lowercase hex digits' using errcode = 'invalid_parameter_value';
  end if;
  if (p_sample is null) = (p_nights is null) or p_sample < 1 or pg_catalog.cardinality(p_nights) = 0
     or (select count(distinct d) from pg_catalog.unnest(p_nights) d) <> pg_catalog.cardinality(p_nights) then
    raise exception 'an audit draws a sample of at least one night or names distinct nights, not both' using errcode = 'invalid_parameter_value';
  end if;
  lock table stats.log_entry in exclusive mode;
  if exists (select 1 from stats.log_halt) then
    raise exception 'the log is halted: no audit can begin until it grows again (see health)' using errcode = 'object_not_in_prerequisite_state';
  end if;
  if not exists (select from stats.log_checkpoint c where c.size = p_checkpoint) then
    raise exception 'the log signed no checkpoint of size %: name one it signed (and witnesses cosigned)', p_checkpoint
      using errcode = 'invalid_parameter_value';
  end if;
  if exists (select from stats.log_entry l where l.date is null and l.entry::jsonb ->> 'kind' = 'audit'
             and l.entry::jsonb ->> 'nonce_sha256' = p_nonce_sha256) then
    raise exception 'an audit with this nonce was opened already: the auditor picks a new nonce for every audit' using errcode = 'unique_violation';
  end if;
  select coalesce(max(idx) + 1, 0) into next_idx from stats.log_entry;
  insert into stats.log_entry (idx, date, entry, is_demo)
    values (next_idx, null, stats.log_opening_entry_text(p_auditor, p_checkpoint, p_nonce_sha256, p_sample, p_nights), demo);
  return next_idx;
end $$;
alter function stats.open_audit(text, text, bigint, integer, date[]) owner to stats_owner;
