-- incremental by reservation_id from lake.bill_lines: reservation_id
-- incremental by reservation_id from lake.reservations: reservation_id
-- incremental by reservation_id from staging.stg_reservations: reservation_id
-- incremental by reservation_id from core.dim_distribution_channels: unnest(case when (select count(*) <> 2 or count(distinct row(c.currency_code)) <> 1 from changed_rows as c where c.distribution_channel_id = changed.distribution_channel_id) then (select list(r.reservation_id) from staging.stg_reservations as r where r.distribution_channel_id = changed.distribution_channel_id) else [] end)
-- incremental narrows its inputs
-- incremental stored as built
-- incremental changes every affected key
-- Current bill lines with their class (item / summary / commission / other), revenue class
-- (room / extra / tax / cancellation / other, item lines only; cancellation = the
-- CANCEL_COMPENSATION line 190 a cancelled booking keeps, never room revenue), exact cents, the
-- VAT the line includes (in cents, from its vatRate) and the currency of the reservation's
-- distribution channel. STAY_ARTICLE (130) is an item line: an article billed for the stay,
-- revenue class 'extra' unless its resource is the accommodation itself (docs/metrics.md).
-- WARRANT (50, a deposit), WITHHOLDINGARTICLE (140) and COST_TYPE (180) are outside the bill
-- total: class 'other'. Read from the lake's current state (its staging renames below), with
-- staging's lineage columns last: `staging.stg_bill_lines` is a view of this table, so the
-- 12.8M bill lines of a large world are written once (docs/benchmarks.md, session 14).

with source as (
    select * from lake_current.bill_lines
),

bill_lines as (
    select
        reservation_bill_line_id as bill_line_id,
        reservation_bill_id as bill_id,
        reservation_id,
        payer_type,
        bill_line_type,
        resource_id,
        resource_type,
        reserved_resource_id,
        rate_id,
        rate_type_id,
        description,
        quantity,
        multiplier,
        value as unit_value,
        total,
        vat_rate,
        start_date,
        end_date,
        _batch_id as batch_id,
        _batch_kind as batch_kind,
        _extracted_at as extracted_at,
        _extra as extra_fields,
    from source
),

reservations as (
    select * from staging.stg_reservations
),

channels as (
    select * from core.dim_distribution_channels
),

classified as (
    select
        *,
        case
            when bill_line_type in (10, 20, 130, 190, 250) then 'item'
            when bill_line_type in (40, 60, 70, 80, 90, 120, 260) then 'summary'
            when bill_line_type in (100, 110) then 'commission'
            else 'other'
        end as line_class,
    from bill_lines
),

final as (
    select
        classified.bill_line_id,
        classified.bill_id,
        classified.reservation_id,
        classified.payer_type,
        classified.bill_line_type,
        bill_line_type_name(classified.bill_line_type) as bill_line_type_name,
        classified.line_class,
        case
            when classified.line_class <> 'item' then null
            when classified.bill_line_type = 250 then 'tax'
            when classified.bill_line_type = 190 then 'cancellation'
            when classified.bill_line_type in (10, 130)
                and classified.resource_type in ('ACCOMMODATIONTYPE', 'SPECIAL') then 'room'
            when classified.bill_line_type = 130 then 'extra'
            when classified.bill_line_type in (10, 20)
                and classified.resource_type = 'EXTRA' then 'extra'
            else 'other'
        end as revenue_class,
        classified.resource_id,
        classified.resource_type,
        classified.reserved_resource_id,
        classified.rate_id,
        classified.rate_type_id,
        classified.description,
        classified.quantity,
        classified.multiplier,
        classified.unit_value,
        classified.total,
        to_cents(classified.total) as total_cents,
        classified.vat_rate,
        -- VAT inside the line (prices include VAT): item lines from their vatRate, the whole
        -- COMMISSION_VAT (110) line; none in other lines
        case
            when classified.bill_line_type = 110 then to_cents(classified.total)
            when classified.line_class = 'item'
                then vat_in_cents(to_cents(classified.total), classified.vat_rate)
            else 0
        end as vat_cents,
        classified.start_date,
        classified.end_date,
        classified.end_date - classified.start_date as line_nights,
        channels.currency_code,
        classified.batch_id,
        classified.batch_kind,
        classified.extracted_at,
        classified.extra_fields,
    from classified
    left join reservations
        on classified.reservation_id = reservations.reservation_id
    left join channels
        on reservations.distribution_channel_id = channels.distribution_channel_id
)

select * from final
