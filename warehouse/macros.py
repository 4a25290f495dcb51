"""SQL macros the models share, created as temporary macros on the build connection.

Money helpers work in integer cents so that no sum or ratio of money passes through DOUBLE
(DuckDB turns every DECIMAL division into DOUBLE).
"""

from __future__ import annotations

import re

MACROS: tuple[str, ...] = (
    # DECIMAL(18,2) money -> BIGINT cents (exact: the value has two decimals).
    "create or replace temp macro to_cents(amount) as cast(amount * 100 as bigint)",
    # BIGINT cents -> DECIMAL(18,2) money, without a division.
    "create or replace temp macro from_cents(cents) as "
    "cast(cast(cents as decimal(18,0)) * 0.01 as decimal(18,2))",
    # money / count, rounded half away from zero to the cent; null when the count is 0.
    # No CASE: it would hide the two to_cents(amount) from DuckDB's common subexpressions (~1
    # CPU s of revenue_daily at large); nullif gives the nulls (a null amount or count gives
    # null anyway) and keeps DuckDB from raising on a division by zero.
    "create or replace temp macro div_money(amount, n) as "
    "from_cents(sign(to_cents(amount)) * ((abs(to_cents(amount)) * 2 + n) // nullif(2 * n, 0)))",
    # VAT contained in a VAT-inclusive amount of `cents` at `rate` percent (a line's vatRate):
    # cents x rate / (100 + rate), rounded half away from zero to the cent, in integers (the rate
    # taken to four decimals); 0 when the rate is null or not positive.
    "create or replace temp macro vat_in_cents(cents, rate) as "
    "case when cents is null or rate is null or rate <= 0 then 0 "
    "else cast(sign(cents) * ((abs(cast(cents as hugeint)) * 2 * cast(round(rate * 10000) as bigint) "
    "+ (1000000 + cast(round(rate * 10000) as bigint))) "
    "// (2 * (1000000 + cast(round(rate * 10000) as bigint)))) as bigint) end",
    # ratio of two counts or amounts (not money itself): DOUBLE, null when the divisor is 0.
    "create or replace temp macro safe_ratio(a, b) as "
    "case when b is null or b = 0 then null else cast(a as double) / cast(b as double) end",
    "create or replace temp macro weekday_code(d) as "
    "['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'][isodow(d)]",
    # Rates (docs/metrics.md, "List prices"): does a rate hold for night `night` of a stay
    # arriving `arrival` for `stay_nights` nights, booked on `booked`? Every bound inclusive, a
    # null bound open; applicable_days null = every weekday.
    "create or replace temp macro rate_applies(night, arrival, stay_nights, booked, "
    "nights_from, nights_to, arrival_from, arrival_to, bookdate_from, bookdate_to, "
    "min_duration, max_duration, applicable_days) as "
    "(nights_from is null or night >= nights_from) and (nights_to is null or night <= nights_to) "
    "and (arrival_from is null or arrival >= arrival_from) "
    "and (arrival_to is null or arrival <= arrival_to) "
    "and (bookdate_from is null or booked >= bookdate_from) "
    "and (bookdate_to is null or booked <= bookdate_to) "
    "and (min_duration is null or stay_nights >= min_duration) "
    "and (max_duration is null or stay_nights <= max_duration) "
    "and (applicable_days is null or list_contains(applicable_days, weekday_code(night)))",
    # Does rate (p1, id1) rank above rate (p2, id2)? Higher priority, then higher rateId; a
    # null priority ranks lowest.
    "create or replace temp macro rate_ranks_above(p1, id1, p2, id2) as "
    "coalesce(p1, -4611686018427387904) > coalesce(p2, -4611686018427387904) "
    "or (coalesce(p1, -4611686018427387904) = coalesce(p2, -4611686018427387904) and id1 > id2)",
    # A RELATIVE rate's amount: `percent` (DECIMAL(18,2)) of `base_cents`, in integer cents,
    # rounded half away from zero to the cent.
    "create or replace temp macro relative_cents(base_cents, percent) as "
    "cast(sign(cast(base_cents as hugeint) * to_cents(percent)) "
    "* ((abs(cast(base_cents as hugeint) * to_cents(percent)) + 5000) // 10000) as bigint)",
    # Which reservations count (docs/metrics.md): on the books = PROVISIONAL, DEFINITIVE,
    # CHECKED_IN, CHECKED_OUT; a guest stay = type RESERVATION outside the owner and block
    # categories. One definition for the current state (fct_reservations) and for every
    # recorded version (fct_reservation_versions, booking_pace).
    "create or replace temp macro is_on_the_books(code) as coalesce(code in (12, 21, 31, 41), false)",
    "create or replace temp macro is_guest_stay(reservation_type, category) as coalesce("
    "reservation_type = 'RESERVATION' and coalesce(category, '') not in ('OWNER', 'BLOCK'), false)",
    "create or replace temp macro status_name(code) as case code "
    "when -99 then 'DELETED' when -13 then 'DEF_CANCELLED' when -12 then 'CANCELLED' "
    "when -11 then 'EXPIRED' when -10 then 'DECLINED' when -5 then 'QUOTATION' "
    "when 0 then 'INITIAL' when 10 then 'REQUEST' when 11 then 'OPTIONAL' "
    "when 12 then 'PROVISIONAL' when 21 then 'DEFINITIVE' when 31 then 'CHECKED_IN' "
    "when 41 then 'CHECKED_OUT' else 'UNKNOWN' end",
    "create or replace temp macro bill_line_type_name(t) as case t "
    "when 10 then 'RESERVED_RESOURCE' when 20 then 'RESORT_ARTICLE' when 40 then 'SUBTOTAL' "
    "when 50 then 'WARRANT' when 60 then 'VAT' when 70 then 'TOTAL' when 80 then 'PAID_AMOUNT' "
    "when 90 then 'DUE_AMOUNT' when 100 then 'COMMISSION' when 110 then 'COMMISSION_VAT' "
    "when 120 then 'TO_PAY' when 130 then 'STAY_ARTICLE' when 140 then 'WITHHOLDINGARTICLE' "
    "when 180 then 'COST_TYPE' when 190 then 'CANCEL_COMPENSATION' when 250 then 'TAX' "
    "when 260 then 'TOTAL_EXCL_TAX' else 'UNKNOWN' end",
)


_HEAD = re.compile(r"create or replace temp macro (\w+)\(")


def _head(macro: str) -> re.Match[str]:
    """A macro's `create ... macro <name>(`."""
    head = _HEAD.match(macro)
    if head is None:
        raise ValueError(f"not a temp macro definition: {macro[:60]!r}")
    return head


# each macro's name, lowercased (SQL names are case-insensitive), in MACROS' order
MACRO_NAMES: tuple[str, ...] = tuple(_head(m).group(1).lower() for m in MACROS)


# SQL between a name and its `(`: blanks and comments
_GAP = r"(?:\s|--[^\n]*|/\*.*?\*/)*"
# a call of each macro: its name (any case, maybe quoted, maybe the start of a longer name),
# then its `(`, wherever it stands, in a comment or a string too
_CALL = {
    name: re.compile(rf'(?<![\w$]){re.escape(name)}[\w$]*"?{_GAP}\(', re.IGNORECASE | re.DOTALL)
    for name in MACRO_NAMES
}


# the characters other than their own letters that a case-insensitive pattern of a macro's name
# matches (Python's `re`: the long s, the dotless and the dotted i), as those letters
_FOLD = str.maketrans({"\u017f": "s", "\u0131": "i", "\u0130": "i"})


def _named(sql: str) -> set[str]:
    """The macros `sql` calls, erring on the side of more: a call in a comment or a string and
    a longer name that starts with a macro's name count too (a spurious one costs a rebuild, a
    missed one a wrong table). A column that shares a macro's name is not a call. A name the
    text does not hold (in any case) is not searched for: the pattern of each name costs ~0.2 ms
    on a model's text, asked for every macro of every model (docs/benchmarks.md, session 19)."""
    folded = sql.translate(_FOLD).lower()
    return {name for name, call in _CALL.items() if name in folded and call.search(sql)}


# the macros each macro's body names (its own name in its head is not a call)
_CALLS: dict[str, set[str]] = {
    name: _named(m[_head(m).end() :]) for name, m in zip(MACRO_NAMES, MACROS, strict=True)
}


def macros_called(sql: str) -> tuple[str, ...]:
    """The texts of the macros `sql` calls, directly or through another macro, in MACROS'
    order (what a model's version must hash besides its SQL, `warehouse.changes`)."""
    called: set[str] = set()
    todo = _named(sql)
    while todo:
        name = todo.pop()
        if name not in called:
            called.add(name)
            todo |= _CALLS[name] - called
    return tuple(m for name, m in zip(MACRO_NAMES, MACROS, strict=True) if name in called)


def _per(amount: str, n: str) -> str:
    """SQL for DECIMAL(18,2) `amount` / count `n` in integer cents, rounded half away from zero
    to the cent, null when `n` is 0 (the persistent macro cannot call the build's temp macros)."""
    c = f"cast({amount} * 100 as hugeint)"
    return (
        f"case when {n} > 0 then cast(cast(sign({c}) * ((abs({c}) * 2 + {n}) // (2 * {n})) "
        f"as decimal(38, 0)) * 0.01 as decimal(18, 2)) end"
    )


# Published with the marts (a persistent macro, so analysts and every reader use the same one):
# occupancy, ADR, RevPAR and TRevPAR over any window of nights, per currency, gross (VAT
# included, as billed) and net (VAT excluded). Supply comes from occupancy_daily (every unit's
# nights, whatever sold them); revenue and nights sold from revenue_daily per currency. RevPAR
# in a currency is that currency's room revenue over every night available: with one currency
# it is the RevPAR, with several each is its contribution. It equals sum(revenue) /
# sum(nights_available) over the window's revenue_daily rows of that currency, as every
# currency has a row for every night (revenue_daily).
KPI_WINDOW = f"""
create or replace macro marts.kpi_window(lo, hi) as table
with supply as (
    select
        coalesce(sum(nights_sold), 0) as nights_sold,
        coalesce(sum(nights_available), 0) as nights_available,
    from marts.occupancy_daily
    where date_day between lo and hi
),
revenue as (
    select
        currency_code,
        sum(room_revenue_gross) as room_revenue_gross,
        sum(room_revenue_net) as room_revenue_net,
        sum(total_revenue_gross) as total_revenue_gross,
        sum(total_revenue_net) as total_revenue_net,
        sum(nights_sold) as nights_sold,
    from marts.revenue_daily
    where date_day between lo and hi
    group by currency_code
)
select
    revenue.currency_code,
    supply.nights_available,
    supply.nights_sold,
    case when supply.nights_available > 0
        then cast(supply.nights_sold as double) / supply.nights_available end as occupancy,
    cast(revenue.room_revenue_gross as decimal(18, 2)) as room_revenue_gross,
    cast(revenue.room_revenue_net as decimal(18, 2)) as room_revenue_net,
    cast(revenue.total_revenue_gross as decimal(18, 2)) as total_revenue_gross,
    cast(revenue.total_revenue_net as decimal(18, 2)) as total_revenue_net,
    revenue.nights_sold as currency_nights_sold,
    {_per("revenue.room_revenue_gross", "revenue.nights_sold")} as adr_gross,
    {_per("revenue.room_revenue_net", "revenue.nights_sold")} as adr_net,
    {_per("revenue.room_revenue_gross", "supply.nights_available")} as revpar_gross,
    {_per("revenue.room_revenue_net", "supply.nights_available")} as revpar_net,
    {_per("revenue.total_revenue_gross", "supply.nights_available")} as trevpar_gross,
    {_per("revenue.total_revenue_net", "supply.nights_available")} as trevpar_net,
from supply
left join revenue on revenue.nights_sold > 0
order by revenue.currency_code
"""
