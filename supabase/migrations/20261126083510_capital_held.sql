-- The capital reading the writer holds back as implausible, and how many readings in a row agree
-- with it, kept in the database so every run of the writer (cron's `once` included) counts the same readings.
create table "stats"."capital_held" (
    "id" boolean not null default true,
    "cash_usd" stats.usd_amount not null,
    "at_stake_usd" stats.usd_amount not null,
    "readings" integer not null,
    "first_read_at" timestamp with time zone not null,
    "last_read_at" timestamp with time zone not null
      );

alter table "stats"."capital_held" owner to stats_owner;


CREATE UNIQUE INDEX capital_held_pkey ON stats.capital_held USING btree (id);

alter table "stats"."capital_held" add constraint "capital_held_pkey" PRIMARY KEY using index "capital_held_pkey";

alter table "stats"."capital_held" add constraint "capital_held_at_stake_usd_check" CHECK (((at_stake_usd)::numeric >= (0)::numeric)) not valid;

alter table "stats"."capital_held" validate constraint "capital_held_at_stake_usd_check";

alter table "stats"."capital_held" add constraint "capital_held_cash_usd_check" CHECK (((cash_usd)::numeric >= (0)::numeric)) not valid;

alter table "stats"."capital_held" validate constraint "capital_held_cash_usd_check";

alter table "stats"."capital_held" add constraint "capital_held_check" CHECK ((last_read_at >= first_read_at)) not valid;

alter table "stats"."capital_held" validate constraint "capital_held_check";

alter table "stats"."capital_held" add constraint "capital_held_id_check" CHECK (id) not valid;

alter table "stats"."capital_held" validate constraint "capital_held_id_check";

alter table "stats"."capital_held" add constraint "capital_held_readings_check" CHECK ((readings >= 1)) not valid;

alter table "stats"."capital_held" validate constraint "capital_held_readings_check";

grant delete on table "stats"."capital_held" to "stats_writer";

grant insert on table "stats"."capital_held" to "stats_writer";

grant select on table "stats"."capital_held" to "stats_writer";

grant update on table "stats"."capital_held" to "stats_writer";
