-- Demo dataset for local runs: 45 nights of payouts, costs and capital, today's accrual so far,
-- breadth and a heartbeat, all marked is_demo so landing_stats reports data_source "demo".
-- Deterministic (figures depend only on the date), and it does nothing once any data exists.
do $$
declare
  now_utc timestamptz := date_trunc('minute', now());
  today date := (now() at time zone 'UTC')::date;
  n integer;
  d date;
begin
  if exists (select from stats.payout) or exists (select from stats.accrual)
     or exists (select from stats.capital) or exists (select from stats.heartbeat) then
    return;
  end if;

  for i in 0..44 loop
    d := today - i;
    n := d - date '2026-01-01';
    insert into stats.payout (date, usd, is_demo)
      values (d, round((41 + 13 * sin(n * 0.9) + 6 * cos(n * 0.37))::numeric, 6), true);
    insert into stats.trading_cost (date, usd, is_demo)
      values (d, round((9 + 7 * sin(n * 1.3))::numeric, 6), true);
    insert into stats.capital (observed_at, cash_usd, inventory_usd, positions, is_demo)
      values ((d::timestamp at time zone 'UTC') - interval '1 minute',
              round((6200 + 180 * sin(n * 0.5))::numeric, 6), round((1450 + 220 * cos(n * 0.7))::numeric, 6),
              14 + n % 9, true);
  end loop;

  n := today - date '2026-01-01';
  insert into stats.accrual (observed_at, usd, markets, is_demo)
    select t, round(((40 + 12 * sin(n * 0.9)) * extract(epoch from t - today::timestamp at time zone 'UTC') / 86400)::numeric, 6),
           18 + n % 7, true
    from generate_series(today::timestamp at time zone 'UTC', now_utc, interval '5 minutes') as t;
  insert into stats.breadth (observed_at, markets_quoted_24h, is_demo) values (now_utc, 31 + n % 9, true);
  insert into stats.capital (observed_at, cash_usd, inventory_usd, positions, is_demo)
    values (now_utc, round((6200 + 180 * sin(n * 0.5))::numeric, 6), round((1450 + 220 * cos(n * 0.7))::numeric, 6), 14 + n % 9, true)
    on conflict do nothing;
  insert into stats.heartbeat (at, is_demo) values (now_utc, true);
end $$;
