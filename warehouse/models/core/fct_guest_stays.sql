-- incremental by customer_id from core.fct_reservations: customer_id
-- incremental by customer_id from staging.stg_customers: customer_id
-- incremental by customer_id from staging.stg_reservation_subjects: select r.customer_id from core.fct_reservations as r where r.reservation_id in (select c.reservation_id from changed_rows as c)
-- incremental narrows its inputs
-- incremental narrows staging.stg_reservation_subjects: reservation_id in (select r.reservation_id from core.fct_reservations as r where r.customer_id in (select k from affected_keys) or (r.customer_id is null and exists (select 1 from affected_keys as a where a.k is null)))
-- The on-the-books guest stays (sold reservations) with what marts.guest_mix_monthly splits them
-- by, one row per stay: the arrival month, the customer's country (UNKNOWN when none), the
-- persons booked, whether the customer (merges resolved) has a sold stay arriving earlier
-- (is_repeat), and the buckets of party size, length of stay and booking window with their
-- order. Whether a stay repeats depends on the customer's other stays, so this is maintained by
-- customer: a changed reservation, customer or subject re-derives its customer's stays.

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
        reservations.customer_id,
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

final as (
    select
        customer_id,
        reservation_id,
        month_start,
        nights,
        persons,
        lead_time_days,
        arrival_weekday,
        arrival_isodow,
        country_code,
        is_repeat,
        party_bucket,
        party_order,
        stay_bucket,
        stay_order,
        window_bucket,
        window_order,
    from bucketed
)

select * from final
