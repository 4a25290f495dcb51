-- incremental by unit_id, month_start from core.fct_stay_nights: unit_id, cast(date_trunc('month', night_date) as date)
-- incremental by unit_id, month_start from core.fct_reservations: select s.unit_id, cast(date_trunc('month', s.night_date) as date) from core.fct_stay_nights as s where s.reservation_id in (select c.reservation_id from changed_rows as c group by c.reservation_id having count(*) <> 2 or count(distinct row(c.category_code)) <> 1)
-- incremental by unit_id, month_start from core.fct_journal_entries: select u.unit_id, cast(date_trunc('month', r.period_from) as date) from changed_rows as c inner join core.dim_units as u on c.resource_code = u.unit_code inner join staging.stg_journal_reports as r on c.journal_report_id = r.journal_report_id where c.report_type = 'OWNER_MUTATION_REPORT' and c.ledger_number = '1610'
-- incremental by unit_id, month_start from staging.stg_journal_reports: select u.unit_id, cast(date_trunc('month', c.period_from) as date) from changed_rows as c cross join core.dim_units as u where c.journal_type = 'OWNER_MUTATION_REPORT'
-- incremental narrows core.fct_stay_nights: select s.* from core.fct_stay_nights as s inner join affected_keys as k on s.unit_id = k.unit_id and s.night_date >= k.month_start and s.night_date < k.month_start + interval 1 month
-- incremental narrows core.fct_journal_entries: resource_code in (select u.unit_code from core.dim_units as u where u.unit_id in (select unit_id from affected_keys))
-- Owner statement per owner x unit x month x currency: the guest nights sold on the unit while
-- a contract of the owner runs (start_date <= night < end_date), their room revenue as billed
-- and net of VAT, the owner's share of the net (per contract and month, net x share rounded
-- half away from zero to the cent), the owner's own nights (on-the-books category OWNER stays),
-- and the reconciliation with the share the service booked in its OWNER_MUTATION_REPORT
-- journals (ledger 1610, one entry per unit and month, resource_code = the unit's code).

-- Maintained by unit x month: a stay night keys its unit and month; a reservation whose category
-- moved (or that came or went) keys its stay nights' units and months; an owner journal entry
-- its unit and its report's month; an owner report that changed (its old and new period) every
-- unit in its months, so an entry whose report went away is covered too. A changed contract or
-- unit rebuilds it whole (docs/benchmarks.md, session 15: ~0.35 CPU s an hour rebuilt whole).
-- The keys' stay nights are read by unit and a range of nights, not by each night's month
-- computed and compared: the join on the unit alone, its nights then checked (an hour's read
-- 0.110 -> 0.047 CPU s; docs/benchmarks.md, session 21).

with stay_nights as (
    select * from core.fct_stay_nights
),

reservations as (
    select * from core.fct_reservations
),

contracts as (
    select * from core.dim_owner_contracts
),

units as (
    select * from core.dim_units
),

journal_entries as (
    select * from core.fct_journal_entries
),

journal_reports as (
    select * from staging.stg_journal_reports
),

unit_nights as (
    select
        contracts.owner_id,
        contracts.contract_id,
        contracts.share_basis_points,
        stay_nights.unit_id,
        cast(date_trunc('month', stay_nights.night_date) as date) as month_start,
        stay_nights.currency_code,
        stay_nights.is_stay_night,
        stay_nights.is_sold,
        stay_nights.is_on_the_books and reservations.category_code = 'OWNER' as is_owner_use,
        stay_nights.room_revenue,
        stay_nights.room_revenue_net,
    from stay_nights
    inner join reservations
        on stay_nights.reservation_id = reservations.reservation_id
    inner join contracts
        on stay_nights.unit_id = contracts.unit_id
        and stay_nights.night_date >= contracts.start_date
        and (contracts.end_date is null or stay_nights.night_date < contracts.end_date)
),

-- nights that count: sold nights (with any room money they carry) and owner-use stay nights
counted as (
    select * from unit_nights
    where (is_sold and (is_stay_night or room_revenue <> 0 or room_revenue_net <> 0))
        or (is_owner_use and is_stay_night)
),

per_contract as (
    select
        owner_id,
        unit_id,
        month_start,
        currency_code,
        contract_id,
        any_value(share_basis_points) as share_basis_points,
        count(*) filter (where is_sold and is_stay_night) as nights_rented,
        coalesce(sum(room_revenue) filter (where is_sold), 0) as room_revenue_gross,
        coalesce(sum(room_revenue_net) filter (where is_sold), 0) as room_revenue_net,
        count(*) filter (where is_owner_use and is_stay_night) as owner_use_nights,
    from counted
    group by all
),

shared as (
    select
        *,
        cast(to_cents(room_revenue_net) as hugeint) * share_basis_points as share_units,
    from per_contract
),

statement as (
    select
        owner_id,
        unit_id,
        month_start,
        currency_code,
        sum(nights_rented) as nights_rented,
        sum(room_revenue_gross) as room_revenue_gross,
        sum(room_revenue_net) as room_revenue_net,
        sum(sign(share_units) * ((abs(share_units) + 5000) // 10000)) as owner_share_cents,
        sum(owner_use_nights) as owner_use_nights,
    from shared
    group by all
),

journal as (
    select
        units.unit_id,
        cast(date_trunc('month', journal_reports.period_from) as date) as month_start,
        journal_entries.currency_code,
        sum(journal_entries.net_vat_excluded) as journal_owner_share,
    from journal_entries
    inner join journal_reports
        on journal_entries.journal_report_id = journal_reports.journal_report_id
    inner join units
        on journal_entries.resource_code = units.unit_code
    where journal_entries.report_type = 'OWNER_MUTATION_REPORT'
        and journal_entries.ledger_number = '1610'
    group by all
),

-- the owner of a journal row: the one whose contract on the unit overlaps the month
journal_owned as (
    select
        min(contracts.owner_id) as owner_id,
        journal.unit_id,
        journal.month_start,
        journal.currency_code,
        any_value(journal.journal_owner_share) as journal_owner_share,
    from journal
    inner join contracts
        on journal.unit_id = contracts.unit_id
        and contracts.start_date < journal.month_start + interval 1 month
        and (contracts.end_date is null or contracts.end_date > journal.month_start)
    group by journal.unit_id, journal.month_start, journal.currency_code
),

final as (
    select
        coalesce(statement.owner_id, journal_owned.owner_id) as owner_id,
        coalesce(statement.unit_id, journal_owned.unit_id) as unit_id,
        units.accommodation_type_id,
        units.location_id,
        coalesce(statement.month_start, journal_owned.month_start) as month_start,
        coalesce(statement.currency_code, journal_owned.currency_code) as currency_code,
        cast(coalesce(statement.nights_rented, 0) as bigint) as nights_rented,
        cast(coalesce(statement.room_revenue_gross, 0) as decimal(18, 2)) as room_revenue_gross,
        cast(coalesce(statement.room_revenue_net, 0) as decimal(18, 2)) as room_revenue_net,
        from_cents(coalesce(statement.owner_share_cents, 0)) as owner_share,
        cast(coalesce(statement.owner_use_nights, 0) as bigint) as owner_use_nights,
        cast(coalesce(journal_owned.journal_owner_share, 0) as decimal(18, 2))
            as journal_owner_share,
        from_cents(
            coalesce(statement.owner_share_cents, 0)
            - coalesce(to_cents(journal_owned.journal_owner_share), 0)
        ) as owner_share_difference,
    from statement
    full outer join journal_owned
        on statement.owner_id = journal_owned.owner_id
        and statement.unit_id = journal_owned.unit_id
        and statement.month_start = journal_owned.month_start
        and statement.currency_code = journal_owned.currency_code
    left join units
        on coalesce(statement.unit_id, journal_owned.unit_id) = units.unit_id
)

select * from final
