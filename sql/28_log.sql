-- The transparency log of the nightly figures. A night is final, and enters the log, once its date
-- is three days past (UTC): the Polymarket source recomputes only the last two settled nights, so
-- nothing it writes later changes a final night except a correction. A final night whose served
-- figures differ from its latest entry (a correction, or a cost or capital snapshot that arrived
-- late) gets a new entry that supersedes the old one. The writer appends at the end of each of its
-- transactions, so a night enters at the first write after it turns final.

-- The night as its entry's bytes: RFC 8785 canonical JSON (https://www.rfc-editor.org/rfc/rfc8785),
-- keys in code-unit order. Amounts are already rounded to cents and far below 1e21, so trim_scale's
-- text is exactly the shortest round-trip form ECMAScript prints (RFC 8785 §3.2.2.3); dates, ISO
-- times and commitments (base64, checked where they are stored) need no escaping. `transfers`, the
-- commitment to the night's reward transfers, is left out when null.
create function stats.log_entry_text(p_date date, p_usd numeric, p_trading_cost_usd numeric,
  p_at_stake_usd numeric, p_updated_at text, p_supersedes bigint, p_transfers text) returns text
language sql immutable set search_path = '' as $$
  select '{"at_stake_usd":' || coalesce(pg_catalog.trim_scale(p_at_stake_usd)::text, 'null')
    || ',"date":"' || pg_catalog.to_char(p_date, 'YYYY-MM-DD')
    || '","supersedes":' || coalesce(p_supersedes::text, 'null')
    || ',"trading_cost_usd":' || coalesce(pg_catalog.trim_scale(p_trading_cost_usd)::text, 'null')
    || coalesce(',"transfers":"' || p_transfers || '"', '')
    || ',"updated_at":"' || p_updated_at
    || '","usd":' || pg_catalog.trim_scale(p_usd)::text || '}'
$$;
alter function stats.log_entry_text(date, numeric, numeric, numeric, text, bigint, text) owner to stats_owner;

-- The wallet commitment as its entry's bytes, RFC 8785 canonical JSON like a night's: its kind, the
-- index of the wallet entry it replaces (null for the first) and the commitment.
create function stats.log_wallet_entry_text(p_wallet text, p_replaces bigint) returns text
language sql immutable set search_path = '' as $$
  select '{"kind":"wallet","replaces":' || coalesce(p_replaces::text, 'null') || ',"wallet":"' || p_wallet || '"}'
$$;
alter function stats.log_wallet_entry_text(text, bigint) owner to stats_owner;

-- Appends, first, the wallet committed now (the latest stats.wallet_commitment of the log's kind,
-- demo or real) when it is not the log's latest wallet entry; then every final night not yet logged
-- with the figures served now and its transfers' commitment (stats.night_transfers). A night whose
-- latest entry has no `transfers` (it entered the log before the commitments did) is compared, and
-- superseded, without them: a commitment that comes later never enters the log for it. Returns how
-- many entries it appended: none while the log is halted (stats.log_halt). One appender at a time:
-- the lock queues a second one behind the first's commit.
create function stats.log_append(p_now timestamptz) returns integer
language plpgsql security definer set search_path = '' as $$
declare
  today date := (p_now at time zone 'UTC')::date;
  demo boolean := coalesce(stats.data_source() = 'demo', false);
  next_idx bigint;
  wallet text;
  logged_idx bigint;
  logged_wallet text;
  appended integer := 0;
  nights integer;
begin
  lock table stats.log_entry in exclusive mode;
  if exists (select 1 from stats.log_halt) then
    return 0;
  end if;
  select coalesce(max(idx) + 1, 0) into next_idx from stats.log_entry;

  select w.commitment into wallet from stats.wallet_commitment w where w.is_demo = demo order by w.recorded_at desc limit 1;
  select l.idx, l.entry::jsonb ->> 'wallet' into logged_idx, logged_wallet
    from stats.log_entry l where l.date is null and l.entry::jsonb ->> 'kind' = 'wallet' order by l.idx desc limit 1;
  if wallet is not null and wallet is distinct from logged_wallet then
    insert into stats.log_entry (idx, date, entry, is_demo)
      values (next_idx, null, stats.log_wallet_entry_text(wallet, logged_idx), demo);
    next_idx := next_idx + 1;
    appended := 1;
  end if;

  insert into stats.log_entry (idx, date, entry, is_demo)
    select next_idx + row_number() over (order by c.date) - 1, c.date, c.entry, demo
    from (
      select n.date, latest.entry as logged,
        stats.log_entry_text(n.date, n.usd, n.trading_cost_usd, n.at_stake_usd, n.updated_at, latest.idx,
          case when latest.idx is null or latest.entry ? 'transfers' then t.commitment end) as entry
      from json_to_recordset(stats.history_nights(p_now, stats.since_date(today)))
        as n(date date, usd numeric, trading_cost_usd numeric, at_stake_usd numeric, updated_at text)
      left join lateral (
        select l.idx, l.entry::jsonb as entry from stats.log_entry l where l.date = n.date order by l.idx desc limit 1
      ) latest on true
      left join stats.night_transfers t on t.date = n.date and t.is_demo = demo
      where n.date <= today - 3
    ) c
    where c.logged is null or (c.logged - 'supersedes') is distinct from (c.entry::jsonb - 'supersedes')
    order by c.date;
  get diagnostics nights = row_count;
  return appended + nights;
end $$;
alter function stats.log_append(timestamptz) owner to stats_owner;
grant execute on function stats.log_append(timestamptz) to stats_writer;

-- The log as the site serves it: the entries the latest checkpoint covers (by index, so a served
-- checkpoint and its entries always agree), every checkpoint with the earliest cosignature of each
-- witness, the latest cosignature of each witness on the latest checkpoint, the latest round of
-- witnessing, the policy in force, why the log is halted (null while it grows), and the audit
-- attestations published for it, oldest first, each marked whether the policy in force lists its auditor.
create function stats.log_record() returns json
language sql stable set search_path = '' as $$
  with latest as (select c.* from stats.log_checkpoint c order by c.size desc limit 1)
  select json_build_object(
    'updated_at', stats.iso(greatest((select max(c.signed_at) from stats.log_checkpoint c),
      (select max(s.received_at) from stats.log_cosignature s), (select max(r.at) from stats.log_witness_round r),
      (select max(a.published_at) from stats.log_audits('infinity') a))),
    'demo', coalesce((select l.is_demo from latest l), stats.data_source() = 'demo'),
    'vkey', (select l.vkey from latest l),
    'log_checkpoint', stats.log_head(),
    'policy', (select p.policy from stats.log_policy p order by p.recorded_at desc limit 1),
    'entries', coalesce((select json_agg(e.entry order by e.idx) from stats.log_entry e where e.idx < stats.log_size()), '[]'::json),
    'checkpoints', coalesce((select json_agg(json_build_object(
        'size', c.size, 'root', c.root, 'note', c.note, 'signed_at', stats.iso(c.signed_at),
        'quorum_at', stats.iso(w.quorum_at),
        'cosignatures', (select coalesce(json_agg(f.line order by f.witness), '[]'::json) from (
          select distinct on (s.witness) s.witness, s.line from stats.log_cosignature s
          where s.size = c.size order by s.witness, s.cosigned_at) f)) order by c.size)
      from stats.log_checkpoint c left join stats.log_witnessed w on w.size = c.size), '[]'::json),
    'cosignatures', (select coalesce(json_agg(f.line order by f.witness), '[]'::json) from (
      select distinct on (s.witness) s.witness, s.line from stats.log_cosignature s
      where s.size = (select l.size from latest l) order by s.witness, s.cosigned_at desc) f),
    'witnessing', (select json_build_object('at', stats.iso(r.at), 'size', r.size, 'witnesses', r.witnesses,
        'cosigned', r.cosigned, 'quorum_met', r.quorum_met)
      from stats.log_witness_round r order by r.at desc limit 1),
    'halted', (select json_build_object('at', stats.iso(h.at), 'reason', h.reason) from stats.log_halt h order by h.at desc limit 1),
    'audits', (select coalesce(json_agg(json_build_object('note', a.note, 'published_at', stats.iso(a.published_at),
        'listed', stats.auditor_listed(a.auditor_key, 'infinity')) order by a.published_at, a.id), '[]'::json)
      from stats.log_audits('infinity') a))
$$;
alter function stats.log_record() owner to stats_owner;
