"""Reference data: companies, channels, locations, accommodation types, units, rate types, add-ons."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .clock import dstr

KINDS = ("BUNGALOW", "CHALET", "LODGE", "CAMPING_PITCH")
KIND_INFO = {
    # kind: (kind id, persons, bedrooms, bathrooms, base nightly price EUR cents, pets allowed)
    "BUNGALOW": (1, 4, 2, 1.0, 9500, True),
    "CHALET": (2, 6, 3, 1.5, 12500, True),
    "LODGE": (3, 8, 4, 2.0, 18500, False),
    "CAMPING_PITCH": (4, 4, 0, 0.0, 3500, True),
}
PREFIXES = (
    "Dune",
    "Heather",
    "Pine",
    "Sea",
    "Oak",
    "River",
    "Lake",
    "Moor",
    "Forest",
    "Meadow",
    "Willow",
    "Birch",
    "Cliff",
    "Bay",
    "Marsh",
    "Hill",
    "Fen",
    "Brook",
    "Glen",
    "Cove",
)
SUFFIXES = ("Park", "Village", "Resort", "Haven", "Fields", "Woods", "Shores", "Valley")
CITIES = (
    ("NL", "Zandvoort", "2041"),
    ("NL", "Ede", "6711"),
    ("DE", "Winterberg", "59955"),
    ("BE", "De Haan", "8420"),
    ("GB", "Keswick", "CA12"),
    ("GB", "Newquay", "TR7"),
    ("NL", "Renesse", "4325"),
    ("DE", "Cochem", "56812"),
    ("FR", "Saint-Malo", "35400"),
)

# Distribution channels: code, name, type, currency, commission %, rate type code.
CHANNELS = (
    ("WEB-EUR", "Direct web (EUR)", "DIRECT", "EUR", 0, "BAR-EUR"),
    ("CALL-EUR", "Call centre", "DIRECT", "EUR", 0, "BAR-EUR"),
    ("WEB-GBP", "Direct web (GBP)", "DIRECT", "GBP", 0, "BAR-GBP"),
    ("OTA-EUR", "Online travel agency", "RESELLER", "EUR", 15, "OTA-EUR"),
    ("TO-GBP", "Tour operator UK", "TOUROPERATOR", "GBP", 20, "TO-GBP"),
)
# Rate types: code, name, currency, price factor against the EUR list price, priority.
RATE_TYPES = (
    ("BAR-EUR", "Best available rate EUR", "EUR", 1.00, 1),
    ("BAR-GBP", "Best available rate GBP", "GBP", 0.87, 2),
    ("OTA-EUR", "Reseller rate EUR", "EUR", 1.05, 3),
    ("TO-GBP", "Tour operator rate GBP", "GBP", 0.82, 4),
)
# Add-ons: code -> (resourceId, name, cents, vat %, per). Ids are outside the accommodation range.
ADDONS = {
    "LINEN": (900001, "Bed linen package", 1250, 21.0, "PERSON"),
    "CLEANING": (900002, "Final cleaning", 7500, 21.0, "STAY"),
    "PETS": (900003, "Pet", 600, 21.0, "PET_NIGHT"),
    "EARLYBIRD": (900009, "Early booking discount", 0, 9.0, "SPECIAL"),
}
CATEGORIES = {  # code: (reservationCategoryId, name, type)
    "GUEST": (1, "Guest", "RESERVATION"),
    "GROUP": (2, "Group", "RESERVATION"),
    "OWNER": (3, "Owner stay", "INVOICE"),
    "BLOCK": (4, "Block", "INVOICE"),
}
SCALES = {
    # companies, locations, types per location (lo, hi), units per type (lo, hi)
    "small": (2, 3, (4, 4), (2, 4)),
    "medium": (6, 18, (5, 7), (8, 13)),
    "large": (20, 150, (6, 8), (8, 14)),
}


@dataclass(slots=True)
class TypeInfo:
    idx: int
    resource_id: int
    code: str
    location_id: int
    location_code: str
    company_id: int
    currency: str
    kind: str
    kind_id: int
    persons: int
    pets: bool
    base_cents: int
    units: list[int] = field(default_factory=list)  # unit indexes


@dataclass(slots=True)
class Channel:
    channel_id: int
    code: str
    kind: str
    currency: str
    commission: int
    rate_type_id: int


class ReferenceMixin:
    """Builds the static catalogue; kept as typed state plus wire records."""

    def _build_reference(self, far_past: int) -> None:
        n_comp, n_loc, tpl, upt = SCALES[self.scale]
        rng = self.rng
        t = self.t
        # companies: the second one is British, so GBP appears in company currency too
        for i in range(1, n_comp + 1):
            cur = "GBP" if i % 3 == 2 else "EUR"
            t["companies"].add(
                {
                    "companyId": i,
                    "code": f"C{i:02d}",
                    "name": f"{PREFIXES[i % 20]} Holidays {i}",
                    "adminOrganisationId": 100 + i,
                    "currencyCode": cur,
                    "countryCode": "GB" if cur == "GBP" else ("NL", "DE", "BE")[i % 3],
                }
            )
        self.company_currency = {
            r["companyId"]: r["currencyCode"] for r in t["companies"].records()
        }
        # rate types and options
        self.rate_types: dict[int, tuple[str, str, float]] = {}
        rt_by_code: dict[str, int] = {}
        for i, (code, _name, cur, factor, _prio) in enumerate(RATE_TYPES, start=1):
            rt_by_code[code] = i
            self.rate_types[i] = (code, cur, factor)
        self.channels: dict[str, Channel] = {}
        self.channel_by_id: dict[int, Channel] = {}
        for i, (code, name, kind, cur, comm, rtc) in enumerate(CHANNELS, start=1):
            ch = Channel(i, code, kind, cur, comm, rt_by_code[rtc])
            self.channels[code] = ch
            self.channel_by_id[i] = ch
            t["distributionchannels"].add(
                {
                    "distributionChannelId": i,
                    "code": code,
                    "name": name,
                    "type": kind,
                    "parentId": None,
                    "currencyId": 1 if cur == "EUR" else 2,
                    "currencyCode": cur,
                    "commissionPercentage": float(comm),
                    "activeStartDate": dstr(far_past),
                    "activeEndDate": None,
                    "archivedFrom": None,
                    "allotmentOnly": False,
                }
            )
        for i, (code, name, cur, _f, prio) in enumerate(RATE_TYPES, start=1):
            t["ratetypes"].add(
                {
                    "rateTypeId": i,
                    "code": code,
                    "name": name,
                    "currencyCode": cur,
                    "distributionChannelIds": [
                        c.channel_id for c in self.channels.values() if c.rate_type_id == i
                    ],
                    "priority": prio,
                }
            )
        for i in range(1, len(RATE_TYPES) + 1):
            for j, (oc, on, ot) in enumerate(
                (("NIGHT", "Per night", "PER_NIGHT"), ("LOS", "Length of stay", "LENGTH_OF_STAY"))
            ):
                t["rateoptions"].add(
                    {
                        "rateOptionId": i * 10 + j,
                        "rateTypeId": i,
                        "code": f"{RATE_TYPES[i - 1][0]}-{oc}",
                        "name": on,
                        "optionType": ot,
                    }
                )
        self.rate_option_night = {i: i * 10 for i in range(1, len(RATE_TYPES) + 1)}
        # locations, types, units
        self.types: list[TypeInfo] = []
        self.type_by_id: dict[int, TypeInfo] = {}
        unit_type: list[int] = []
        unit_setup: list[int] = []
        unit_arch: list[int] = []
        self.unit_ids: list[int] = []
        self.location_company: dict[int, int] = {}
        self.location_code: dict[int, str] = {}
        start = self.ord0
        now_ord = self.now.toordinal()
        rid = 1000
        for li in range(1, n_loc + 1):
            comp = (li - 1) % n_comp + 1
            cc, city, zipc = CITIES[li % len(CITIES)]
            if self.company_currency[comp] == "GBP":
                cc, city, zipc = ("GB", "Keswick", "CA12") if li % 2 else ("GB", "Newquay", "TR7")
            name = f"{PREFIXES[li % 20]} {SUFFIXES[(li // 20) % 8]}{'' if li <= 20 else f' {li}'}"
            lcode = f"L{li:03d}"
            self.location_company[li] = comp
            self.location_code[li] = lcode
            t["locations"].add(
                {
                    "locationId": li,
                    "code": lcode,
                    "locationNumber": 100 + li,
                    "parentId": None,
                    "adminOrganisationId": 100 + comp,
                    "companyId": comp,
                    "bookableLocation": True,
                    "archivedFrom": None,
                    "minAgeForBooking": 18,
                    "translations": [
                        {"language": "en", "name": name, "description": f"Holiday park {name}"},
                        {"language": "nl", "name": name, "description": f"Vakantiepark {name}"},
                    ],
                    "visitAddress": {
                        "address1": f"Parkweg {li}",
                        "zipCode": zipc,
                        "city": city,
                        "countryCode": cc,
                    },
                }
            )
            n_types = int(rng.integers(tpl[0], tpl[1] + 1))
            loc_factor = float(rng.uniform(0.85, 1.25))
            for k in range(n_types):
                kind = KINDS[k % 4]
                kid, persons, bedrooms, baths, base, pets = KIND_INFO[kind]
                if k >= 4:
                    persons += 2
                    base = int(base * 1.3)
                rid += 1
                code = f"{lcode}-{kind[:3]}{k + 1}"
                ti = TypeInfo(
                    len(self.types),
                    rid,
                    code,
                    li,
                    lcode,
                    comp,
                    self.company_currency[comp],
                    kind,
                    kid,
                    persons,
                    pets,
                    round(base * loc_factor / 100) * 100,
                )
                self.types.append(ti)
                self.type_by_id[rid] = ti
                tname = f"{kind.replace('_', ' ').title()} {persons}p"
                t["accommodationtypes"].add(
                    {
                        "resourceId": rid,
                        "code": code,
                        "locationId": li,
                        "accotypeKindId": kid,
                        "kindCode": kind,
                        "type": "ACCOMMODATIONTYPE",
                        "nrOfBedrooms": bedrooms,
                        "nrOfBathrooms": baths,
                        "numberOfPersons": persons,
                        "hasObjects": True,
                        "priority": k + 1,
                        "checkinTime": "15:00:00",
                        "checkoutTime": "10:00:00",
                        "archivedFrom": None,
                        "translations": [
                            {"language": "en", "name": tname, "description": f"{tname} at {name}"}
                        ],
                    }
                )
                n_units = int(rng.integers(upt[0], upt[1] + 1))
                for j in range(n_units):
                    uid = len(self.unit_ids) + 1
                    r = rng.random()
                    setup = far_past + int(rng.integers(0, 3000))
                    if r < 0.06:  # new build during the horizon
                        setup = start + int(rng.integers(30, 600))
                    arch = None
                    r2 = rng.random()
                    if r2 < 0.04:  # archived in the past
                        arch = max(setup + 60, start + int(rng.integers(60, 700)))
                        arch = min(arch, now_ord - 1)
                    elif r2 < 0.07:  # archived in the future
                        arch = now_ord + int(rng.integers(20, 300))
                    if arch is not None and arch <= setup:
                        arch = None
                    ucode = f"{code}-{j + 1:02d}"
                    t["units"].add(
                        {
                            "unitId": uid,
                            "resourceId": rid,
                            "code": ucode,
                            "roomCode": f"{j + 1:02d}",
                            "nrOfBedrooms": bedrooms,
                            "nrOfBathrooms": baths,
                            "choosableOnInternet": True,
                            "cleaningStatus": "CLEAN",
                            "setupDate": dstr(setup),
                            "archivedFrom": dstr(arch) if arch is not None else None,
                            "translations": [{"language": "en", "name": f"{tname} {ucode}"}],
                        }
                    )
                    ti.units.append(len(self.unit_ids))
                    self.unit_ids.append(uid)
                    unit_type.append(ti.idx)
                    unit_setup.append(setup)
                    unit_arch.append(arch if arch is not None else 10**7)
        # always at least one unit archived in the past and one archived in the future
        for u, arch in ((3, now_ord - 200), (7, now_ord + 90)):
            if u < len(unit_arch) and not any(
                (a < now_ord) == (arch < now_ord) for a in unit_arch if a < 10**7
            ):
                unit_setup[u] = min(unit_setup[u], self.ord0 - 30)
                unit_arch[u] = arch
                rec = t["units"].get(self.unit_ids[u])
                rec["setupDate"] = dstr(unit_setup[u])
                rec["archivedFrom"] = dstr(arch)
        self.unit_type = np.array(unit_type, dtype=np.int32)
        self.unit_setup = np.array(unit_setup, dtype=np.int64)
        self.unit_arch = np.array(unit_arch, dtype=np.int64)
        self.units_of_type = [np.array(ti.units, dtype=np.int64) for ti in self.types]
        self._capacities: dict[int, list[dict]] = {}
        cap_id = 1
        for ti in self.types:
            caps = []
            for sid, nm, cap in ((1, "Persons", ti.persons), (2, "Pets", 2 if ti.pets else 0)):
                caps.append(
                    {
                        "capacityId": cap_id,
                        "capacity": cap,
                        "subjectId": sid,
                        "startDate": dstr(far_past),
                        "endDate": None,
                        "name": nm,
                    }
                )
                cap_id += 1
            self._capacities[ti.resource_id] = caps

    def unit_index(self, unit_id: int) -> int:
        return unit_id - 1
