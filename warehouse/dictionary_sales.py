"""The metric dictionary's sales part: `marts.sales_daily` (the mart `reservoir serve` filters
by channel and booking window) and `marts.forecast_daily` (the pickup forecast, docs/forecast.md);
`warehouse.dictionary` prints them with the other marts."""

from __future__ import annotations

_MONEY = "DECIMAL(18,2), in the row's currency_code"
_SOLD = (
    "on-the-books (status 12, 21, 31, 41) guest stays (type RESERVATION, category not OWNER/BLOCK)"
)

SALES_MARTS: dict[str, dict[str, str]] = {
    "marts.sales_daily": {
        "date_day": "The night (stay night D) the row describes.",
        "location_id": "Location (park); for stays the accommodation type's location.",
        "accommodation_type_id": "Accommodation type (resourceId of the ACCOMMODATIONTYPE "
        "reserved resource).",
        "distribution_channel_id": "Distribution channel of the reservations.",
        "distribution_channel_code": "Code of the channel.",
        "booking_window_days": "Lower bound of the booking-window bucket, in days from the "
        "reservation date to arrival: 0, 7, 14, 30, 60, 90 or 180 (null: no reservation date).",
        "booking_window": "The bucket as text ('0-6 days' ... '180+ days'); sort by "
        "booking_window_days.",
        "currency_code": "Currency of every money column of the row (from the distribution "
        "channel); figures in different currencies are never summed.",
        "nights_sold": f"Nights sold (metrics.md) of {_SOLD}; summed over channels and booking "
        "windows it equals revenue_daily.nights_sold of the same night, type and currency.",
        "room_revenue_gross": "Room revenue including VAT, as billed (revenue_daily's rule, split "
        f"by channel and booking window). {_MONEY}.",
        "room_revenue_net": f"Room revenue excluding VAT (revenue_daily's rule). {_MONEY}.",
        "commission_gross": f"Commission including its VAT (lines 100 + 110). {_MONEY}.",
        "commission_net": f"Commission excluding VAT (lines 100). {_MONEY}.",
        "room_revenue_after_commission_gross": f"room_revenue_gross - commission_gross. {_MONEY}.",
        "room_revenue_after_commission_net": f"room_revenue_net - commission_net. {_MONEY}.",
    },
    "marts.forecast_daily": {
        "stay_date": "Stay night D, from the build's as-of date A to A + 365 days within the "
        "reporting range.",
        "as_of_date": "The build's as-of date A (meta.build_settings): booking_pace's newest "
        "snapshot.",
        "currency_code": "Currency of every money column of the row.",
        "days_before_arrival": "D - A in days.",
        "nights_available": "Nights available on D, every location and type together (all "
        "currencies share this supply; never sum it across currency rows).",
        "otb_nights": "On the books now (booking_pace.otb_nights at A).",
        "otb_room_revenue": f"Room revenue on the books now, VAT included (booking_pace). {_MONEY}.",
        "ly_nights_sold": "Nights sold on D - 364 days (same weekday last year), final "
        "(sales_daily).",
        "ly_room_revenue": f"Room revenue of D - 364, VAT included (sales_daily). {_MONEY}.",
        "stly_otb_nights": "What D - 364 had on the books at A - 364 (booking_pace).",
        "stly_otb_room_revenue": f"Room revenue of the same snapshot, VAT included. {_MONEY}.",
        "forecast_pickup_nights": "Nights still expected: max(ly_nights_sold - stly_otb_nights, "
        "0), capped by the night's free supply (nights_available less every currency's "
        "otb_nights), shared out in currency-code order.",
        "forecast_nights": "otb_nights + forecast_pickup_nights. Forecast occupancy = "
        "sum(forecast_nights) / nights_available of one stay date (count nights_available once).",
        "forecast_room_revenue": "otb_room_revenue + max(ly_room_revenue - "
        "stly_otb_room_revenue, 0) x forecast_pickup_nights / the uncapped pickup nights "
        f"(rounded down to the cent). VAT included. {_MONEY}.",
    },
}
