-- The transparency log of the nightly figures. A night is final, and enters the log, once its date
-- is three days past (UTC): the Polymarket source recomputes only the last two settled nights, so
-- nothing it writes later changes a final night except a correction. A final night whose served
-- figures differ from its latest entry (a correction, or a cost or capital snapshot that arrived
-- late) gets a new entry that supersedes the old one. The writer appends at the end of each of its
-- transactions, so a night enters at the first write after it turns final.

-- The night as its entry's bytes: RFC 8785 canonical JSON (https://www.rfc-editor.org/rfc/rfc8785),
-- keys in code-unit order. Amounts are already rounded to cents and far below 1e21, so trim_scale's
-- text is exactly the shortest round-trip form ECMAScript prints (RFC 8785 §3.2.2.3); dates and ISO
-- times need no escaping.
create function stats.log_entry_text(p_date date, p_usd numeric, p_trading_cost_usd numeric,
  p_at_stake_usd numeric, p_updated_at text, p_supersedes bigint) returns text
language sql immutable set search_path = '' as $$
  select '{"at_stake_usd":' || coalesce(pg_catalog.trim_scale(p_at_stake_usd)::text, 'null')
    || ',"date":"' || pg_catalog.to_char(p_date, 'YYYY-MM-DD')
    || '","supersedes":' || coalesce(p_supersedes::text, 'null')
    || ',"trading_cost_usd":' || coalesce(pg_catalog.trim_scale(p_trading_cost_usd)::text, 'null')
    || ',"updated_at":"' || p_updated_at
    || '","usd":' || pg_catalog.trim_scale(p_usd)::text || '}'
$$;
alter function stats.log_entry_text(date, numeric, numeric, numeric, text, bigint) owner to stats_owner;

-- Appends every final night not yet logged with the figures served now; returns how many entries
-- it appended. One appender at a time: the lock queues a second one behind the first's commit.
create function stats.log_append(p_now timestamptz) returns integer
language plpgsql security definer set search_path = '' as $$
declare
  today date := (p_now at time zone 'UTC')::date;
  next_idx bigint;
  appended integer;
begin
  lock table stats.log_entry in exclusive mode;
  select coalesce(max(idx) + 1, 0) into next_idx from stats.log_entry;
  insert into stats.log_entry (idx, date, entry, is_demo)
    select next_idx + row_number() over (order by n.date) - 1, n.date,
      stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, latest.idx),
      stats.data_source() = 'demo'
    from json_to_recordset(stats.history_nights(p_now, stats.since_date(today)))
      as n(date date, usd numeric, trading_cost_usd numeric, at_stake_usd numeric, updated_at text)
    left join lateral (
      select l.idx, l.entry::jsonb as entry from stats.log_entry l where l.date = n.date order by l.idx desc limit 1
    ) latest on true
    where n.date <= today - 3
      and (latest.idx is null
        or (latest.entry - 'supersedes') is distinct from
           (stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, null)::jsonb - 'supersedes'))
    order by n.date;
  get diagnostics appended = row_count;
  return appended;
end $$;
alter function stats.log_append(timestamptz) owner to stats_owner;
grant execute on function stats.log_append(timestamptz) to stats_writer;

-- The log as of p_now: whether it is the demo log, when it last grew, and every entry in order.
create function stats.log_at(p_now timestamptz) returns json
language sql stable set search_path = '' as $$
  select json_build_object(
    'updated_at', stats.iso(max(l.appended_at)),
    'demo', coalesce(bool_or(l.is_demo), stats.data_source() = 'demo'),
    'entries', coalesce(json_agg(l.entry order by l.idx), '[]'::json))
  from stats.log_entry l where l.appended_at <= p_now
$$;
alter function stats.log_at(timestamptz) owner to stats_owner;
