-- incremental sums over core.fct_pace_night_spans by night_date, currency_code, is_from_history, first_counted_date, last_counted_date, before_history_until
-- Booking pace's nights grouped by what core.fct_pace_on_the_books needs of them: the night,
-- the currency, the rule (is_from_history) and the as-of dates over which they count, with
-- their count and room revenue. None of it reads the as-of date, so a new business date leaves
-- it as it is and the cells are rebuilt from these groups (an eighth of the nights at large)
-- rather than from every night; within a day it adds the changed reservations' nights.
-- first_counted_date / last_counted_date: the first and last as-of date at which a night of
-- the group counts (its span, cut to the 372 days before the night and to the night itself);
-- before_history_until: the as-of dates before it judge by today's status before the
-- reservation's history (its history start cut to the counted dates; null from history).

with spans as (
    select * from core.fct_pace_night_spans
),

bounded as (
    select
        night_date,
        currency_code,
        is_from_history,
        room_revenue,
        history_start_date,
        greatest(first_as_of_date, night_date - 372) as first_counted_date,
        -- null (cancelled without a date) stays null: DuckDB's least would skip it
        case when last_as_of_date is not null then least(last_as_of_date, night_date) end
            as last_counted_date,
    from spans
),

final as (
    select
        night_date,
        currency_code,
        is_from_history,
        first_counted_date,
        last_counted_date,
        -- a date as of which the night counts is before the history iff it is before this
        -- (the same as before history_start_date over the counted dates)
        case
            when not is_from_history then least(
                greatest(history_start_date, first_counted_date),
                cast(last_counted_date + 1 as date)
            )
        end as before_history_until,
        count(*) as nights,
        sum(room_revenue) as room_revenue,
    from bounded
    -- a night that counts at no as-of date is in no cell
    where first_counted_date <= last_counted_date
    group by all
)

select * from final
