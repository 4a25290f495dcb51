-- incremental sums over core.fct_pace_night_spans by currency_code
-- The currencies of marts.booking_pace's grid: those of every night it can count
-- (core.fct_pace_night_spans: a guest stay night on the books or cancelled, or a night of an
-- on-the-books guest version in a reservation's recorded history), over every stay date. A
-- model of its own so that the grid's currency set is read whole once, from the nights' table.
-- Each currency with its spans counted (night_spans): a refresh adds the changed reservations'
-- spans and subtracts their old ones, and a currency whose spans all went is removed, rather
-- than reading the 8.8 million spans at large again (~0.03 CPU s a refresh).

with spans as (
    select * from core.fct_pace_night_spans
),

final as (
    select
        currency_code,
        count(*) as night_spans,
    from spans
    group by all
)

select * from final
