"""Small park scenarios for warehouse tests, written through `Lake` one batch at a time."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.warehouse.lakefixture import Lake
from warehouse.headers import Incremental
from warehouse.models import Model

TYPE_ID = 10
LOCATION_ID = 1
COMPANY_ID = 1
EUR_CHANNEL = 1
GBP_CHANNEL = 2


def accommodation_type(**fields: Any) -> dict[str, Any]:
    """The scenarios' one accommodation type (`TYPE_ID` in park `LOCATION_ID`), with `fields`
    changed: a test lands it again to move, rename or re-park it."""
    return {
        "resource_id": TYPE_ID,
        "code": "BUNG4",
        "location_id": LOCATION_ID,
        "kind_code": "BUNGALOW",
        "type": "ACCOMMODATIONTYPE",
        "name": "Bungalow 4",
        **fields,
    }


@dataclass
class Batch:
    """Rows of one extraction run, across tables; `flush` writes them under one batch id."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    _line_id: int = 0

    def reference(self, *, units: int = 100, setup_date: str = "2020-01-01") -> Batch:
        """One company (EUR), one location, one accommodation type with `units` units, and
        two channels (EUR direct, GBP tour operator with 10 % commission)."""
        t = self.tables
        t["companies"].append(
            {"company_id": COMPANY_ID, "code": "C1", "name": "Company", "currency_code": "EUR"}
        )
        t["locations"].append(
            {"location_id": LOCATION_ID, "code": "PARK", "name": "Park", "company_id": COMPANY_ID}
        )
        t["accommodation_types"].append(accommodation_type())
        for i in range(units):
            t["units"].append(
                {
                    "unit_id": 1000 + i,
                    "resource_id": TYPE_ID,
                    "code": f"U{i}",
                    "setup_date": setup_date,
                }
            )
        t["distribution_channels"] += [
            {
                "distribution_channel_id": EUR_CHANNEL,
                "code": "WEB",
                "name": "Web",
                "type": "DIRECT",
                "currency_code": "EUR",
                "commission_percentage": 0.0,
            },
            {
                "distribution_channel_id": GBP_CHANNEL,
                "code": "UKTO",
                "name": "UK tour operator",
                "type": "TOUROPERATOR",
                "currency_code": "GBP",
                "commission_percentage": 10.0,
            },
        ]
        return self

    def reservation(
        self,
        reservation_id: int,
        arrival: str,
        departure: str,
        *,
        status: int = 21,
        unit_id: int | None = None,
        type_id: int = TYPE_ID,
        category: str = "GUEST",
        reservation_type: str = "RESERVATION",
        channel: int = EUR_CHANNEL,
        booked: str = "2024-06-01T10:00:00",
        cancelled: str | None = None,
        rent_lines: list[tuple[str | None, str | None, str]] | None = None,
        nightly: str = "100.00",
        total_line: str | None = None,
        payer_type: str = "CUSTOMER",
    ) -> Batch:
        """A reservation with its accommodation reserved resource, rent lines (start, end,
        total; default one line at `nightly` per night) and a TOTAL line that balances them
        unless `total_line` says otherwise."""
        from datetime import date

        nights = (date.fromisoformat(departure) - date.fromisoformat(arrival)).days
        lines = rent_lines or [(arrival, departure, str(Decimal(nightly) * nights))]
        t = self.tables
        t["reservations"].append(
            {
                "reservation_id": reservation_id,
                "reservation_number": f"R{reservation_id}",
                "category_code": category,
                "type": reservation_type,
                "status": status,
                "arrival_date": arrival,
                "departure_date": departure,
                "customer_id": 500 + reservation_id,
                "distribution_channel_id": channel,
                "location_id": LOCATION_ID,
                "reservation_date": booked,
                "modified_date": booked,
                "cancel_date": cancelled,
            }
        )
        rr_id = reservation_id * 10
        t["reserved_resources"].append(
            {
                "reserved_resource_id": rr_id,
                "reservation_id": reservation_id,
                "resource_id": type_id,
                "unit_id": unit_id,
                "type": "ACCOMMODATIONTYPE",
                "quantity": 1,
                "start_date": arrival,
                "end_date": departure,
            }
        )
        items = Decimal(0)
        for start, end, total in lines:
            items += Decimal(total)
            self.bill_line(
                reservation_id,
                bill_line_type=10,
                resource_type="ACCOMMODATIONTYPE",
                reserved_resource_id=rr_id,
                start_date=start,
                end_date=end,
                total=total,
                payer_type=payer_type,
            )
        self.bill_line(
            reservation_id,
            bill_line_type=70,
            total=total_line if total_line is not None else str(items),
            payer_type=payer_type,
        )
        return self

    def bill_line(self, reservation_id: int, **fields: Any) -> Batch:
        self._line_id += 1
        row = {
            "reservation_bill_line_id": reservation_id * 1000 + self._line_id,
            "reservation_bill_id": reservation_id,
            "reservation_id": reservation_id,
            "payer_type": "CUSTOMER",
            "quantity": 1,
            "multiplier": 1,
        }
        row.update(fields)
        self.tables["bill_lines"].append(row)
        return self

    def allotment(
        self,
        start: str,
        end: str,
        *,
        allotment_id: int = 70,
        quantity: int = 2,
        release_days: int = 7,
        type_id: int = TYPE_ID,
        channel: int = EUR_CHANNEL,
    ) -> Batch:
        """An allotment of `quantity` units of a type for a channel, nights `start` to `end`."""
        self.tables["allotments"].append(
            {
                "allotment_id": allotment_id,
                "resource_id": type_id,
                "distribution_channel_id": channel,
                "start_date": start,
                "end_date": end,
                "quantity": quantity,
                "release_days": release_days,
            }
        )
        return self

    def flush(self, lake: Lake, *, kind: str = "delta") -> str:
        batch_id = lake.new_batch_id()
        for table, rows in self.tables.items():
            lake.write(table, rows, batch_id=batch_id, kind=kind)
        return batch_id


def two_batches(lake: Lake) -> None:
    """A full batch of reservations 1-3 on three units, then a later batch in which 2 comes again
    (a night longer, its lines replaced) and 3 is cancelled."""
    Batch().reference(units=3).reservation(1, "2025-01-01", "2025-01-04", unit_id=1000).reservation(
        2, "2025-01-02", "2025-01-05", unit_id=1001
    ).reservation(3, "2025-01-03", "2025-01-06", unit_id=1002).flush(lake, kind="full")
    Batch().reservation(2, "2025-01-02", "2025-01-06", unit_id=1001, nightly="90.00").reservation(
        3, "2025-01-03", "2025-01-06", unit_id=1002, status=-12, cancelled="2024-12-20"
    ).flush(lake)


def src_model(
    tmp_path: Path, layer: str = "staging", incremental: Incremental | None = None
) -> Model:
    """A bare model `<layer>.m` whose SQL reads the table `src` as it is."""
    return Model(
        layer=layer,
        name="m",
        path=tmp_path / "m.sql",
        sql="select * from src",
        description="",
        deps=frozenset(),
        lake_tables=frozenset(),
        incremental=incremental,
    )
