-- Where the figures come from: the real source that wrote last, else 'demo' while demo rows remain,
-- else null (no data at all).
create function stats.data_source() returns text
language sql stable set search_path = '' as $$
  select coalesce((select s.data_source from stats.settings s),
    case when exists (select from stats.payout where is_demo)
           or exists (select from stats.accrual where is_demo)
           or exists (select from stats.capital where is_demo)
         then 'demo' end)
$$;
alter function stats.data_source() owner to stats_owner;
grant execute on function stats.data_source() to stats_writer;
