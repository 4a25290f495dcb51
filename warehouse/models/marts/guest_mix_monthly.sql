-- Guest mix per arrival month: the on-the-books guest stays arriving in the month, split by one
-- dimension at a time (dimension, bucket): guest_type (first or repeat: the customer, merges
-- resolved, has a stay arriving earlier), country (the customer's countryCode; UNKNOWN when
-- none), party_size (persons booked), length_of_stay (nights), booking_window (days from the
-- booking date to arrival) and arrival_weekday. Each dimension's buckets add up to the month's
-- stays; share_of_stays is the bucket's share. Ids, country and language only: no PII.

with reservations as (
    select * from core.fct_reservations
),

customers as (
    select * from staging.stg_customers
),

subjects as (
    select * from staging.stg_reservation_subjects
),

persons as (
    select
        reservation_id,
        sum(quantity) filter (where subject_type = 'PERSON') as persons,
    from subjects
    group by reservation_id
),

stays as (
    select
        reservations.reservation_id,
        cast(date_trunc('month', reservations.arrival_date) as date) as month_start,
        reservations.nights,
        coalesce(persons.persons, 0) as persons,
        reservations.lead_time_days,
        weekday_code(reservations.arrival_date) as arrival_weekday,
        isodow(reservations.arrival_date) as arrival_isodow,
        coalesce(customers.country_code, 'UNKNOWN') as country_code,
        reservations.customer_id is not null and row_number() over (
            partition by reservations.customer_id
            order by reservations.arrival_date, reservations.reservation_id
        ) > 1 as is_repeat,
    from reservations
    left join persons
        on reservations.reservation_id = persons.reservation_id
    left join customers
        on reservations.customer_id = customers.customer_id
    where reservations.is_sold
),

bucketed as (
    select
        *,
        case
            when persons >= 6 then '6+'
            else cast(persons as varchar)
        end as party_bucket,
        least(persons, 6) as party_order,
        case
            when nights <= 4 then cast(nights as varchar)
            when nights <= 6 then '5-6'
            when nights = 7 then '7'
            when nights <= 13 then '8-13'
            else '14+'
        end as stay_bucket,
        case
            when nights <= 4 then nights
            when nights <= 6 then 5
            when nights = 7 then 7
            when nights <= 13 then 8
            else 14
        end as stay_order,
        case
            when lead_time_days < 7 then '0-6'
            when lead_time_days < 14 then '7-13'
            when lead_time_days < 30 then '14-29'
            when lead_time_days < 60 then '30-59'
            when lead_time_days < 90 then '60-89'
            when lead_time_days < 180 then '90-179'
            else '180+'
        end as window_bucket,
        case
            when lead_time_days < 7 then 0
            when lead_time_days < 14 then 7
            when lead_time_days < 30 then 14
            when lead_time_days < 60 then 30
            when lead_time_days < 90 then 60
            when lead_time_days < 180 then 90
            else 180
        end as window_order,
    from stays
),

long as (
    select month_start, 'guest_type' as dimension,
        case when is_repeat then 'repeat' else 'first' end as bucket,
        case when is_repeat then 1 else 0 end as bucket_order, nights, persons,
    from bucketed
    union all
    select month_start, 'country', country_code, 0, nights, persons from bucketed
    union all
    select month_start, 'party_size', party_bucket, party_order, nights, persons from bucketed
    union all
    select month_start, 'length_of_stay', stay_bucket, stay_order, nights, persons from bucketed
    union all
    select month_start, 'booking_window', window_bucket, window_order, nights, persons
    from bucketed
    union all
    select month_start, 'arrival_weekday', arrival_weekday, arrival_isodow, nights, persons
    from bucketed
),

grouped as (
    select
        month_start,
        dimension,
        bucket,
        any_value(bucket_order) as bucket_order,
        count(*) as stays,
        sum(nights) as nights,
        sum(persons) as guests,
    from long
    group by month_start, dimension, bucket
),

final as (
    select
        month_start,
        dimension,
        bucket,
        cast(bucket_order as integer) as bucket_order,
        stays,
        cast(nights as bigint) as nights,
        cast(guests as bigint) as guests,
        safe_ratio(stays, sum(stays) over (partition by month_start, dimension))
            as share_of_stays,
    from grouped
)

select * from final
