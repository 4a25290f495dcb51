-- The currencies of marts.booking_pace's grid: those of every night it can count
-- (core.fct_pace_night_spans: a guest stay night on the books or cancelled, or a night of an
-- on-the-books guest version in a reservation's recorded history), over every stay date. A
-- model of its own so that the grid's currency set is read whole once, from the nights' table.

with spans as (
    select * from core.fct_pace_night_spans
),

final as (
    select distinct currency_code
    from spans
)

select * from final
