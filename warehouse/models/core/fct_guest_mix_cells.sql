-- incremental sums over core.fct_guest_stays by month_start, dimension, bucket, bucket_order
-- The guest stays per arrival month x dimension x bucket (the cells of marts.guest_mix_monthly):
-- each stay of core.fct_guest_stays counts once in each of the six dimensions (guest_type,
-- country, party_size, length_of_stay, booking_window, arrival_weekday), with its nights and
-- persons. Every measure is a sum over stays, so a refresh adds the changed customers' new
-- stays and subtracts their old ones.

with stays as (
    select * from core.fct_guest_stays
),

long as (
    select month_start, 'guest_type' as dimension,
        case when is_repeat then 'repeat' else 'first' end as bucket,
        case when is_repeat then 1 else 0 end as bucket_order, nights, persons,
    from stays
    union all
    select month_start, 'country', country_code, 0, nights, persons from stays
    union all
    select month_start, 'party_size', party_bucket, party_order, nights, persons from stays
    union all
    select month_start, 'length_of_stay', stay_bucket, stay_order, nights, persons from stays
    union all
    select month_start, 'booking_window', window_bucket, window_order, nights, persons
    from stays
    union all
    select month_start, 'arrival_weekday', arrival_weekday, arrival_isodow, nights, persons
    from stays
),

final as (
    select
        month_start,
        dimension,
        bucket,
        bucket_order,
        count(*) as stays,
        sum(nights) as nights,
        sum(persons) as guests,
    from long
    group by month_start, dimension, bucket, bucket_order
)

select * from final
