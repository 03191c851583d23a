-- Intentionally empty. The demo dataset is not seeded by SQL: the writer's demo source
-- (writer/demo.ts) loads it into an empty database when `npm start` runs, marks every row
-- is_demo, and keeps it moving. A hosted Supabase project runs the real writer (or imports), never
-- demo figures, so `supabase db reset` leaves the stats tables empty.
select 1;
