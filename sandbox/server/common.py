"""Constants of the served interface and the error and JSON answers every part of it gives."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

SERVICE_PREFIX = "/service/v2"
ADMIN_PREFIX = "/_admin"
AUTHENTICATE_PATH = SERVICE_PREFIX + "/authenticate"
MAX_ARRIVAL_DAYS = 31
PAYER_TYPES = ("CUSTOMER", "PAYING_CUSTOMER", "AGENT")
# returnSections value -> (payerType, field of the details record)
BILL_SECTIONS = {
    "CUSTOMERBILL": ("CUSTOMER", "customerBill"),
    "PAYINGCUSTOMERBILL": ("PAYING_CUSTOMER", "payingCustomerBill"),
    "AGENTBILL": ("AGENT", "agentBill"),
}
RESERVATION_SECTIONS = (
    "RESERVEDRESOURCES",
    "CUSTOMERBILL",
    "PAYINGCUSTOMERBILL",
    "AGENTBILL",
    "SUBJECTS",
)
# The strict profile's enum: the part of the real one that real-service-notes 4.3 could read.
# PAYINGCUSTOMERBILL and SUBJECTS are not in it (a client asking for them gets 400); without
# returnSections the strict profile serves every modelled section, the subjects as
# `reservationSubjects`. CUSTOMER, PAYING_CUSTOMER and the other five are accepted and add nothing.
STRICT_RESERVATION_SECTIONS = (
    "AGENTBILL",
    "CUSTOMER",
    "PAYING_CUSTOMER",
    "CUSTOMERBILL",
    "CUSTOMERSTATUS",
    "EMERGENCYCONTACTS",
    "INFOTEXTS",
    "INSTALMENTS",
    "RESERVEDRESOURCES",
    "CUSTOMFIELDS",
)
SUBJECTS_FIELD = {"default": "subjects", "strict": "reservationSubjects"}
ACCOMMODATION_SECTIONS = ("CAPACITIES",)
# real-service-notes 8.3; the sandbox fills the first two (sandbox/world/channel_details.py)
CHANNEL_SECTIONS = ("COMMISSION_ADDONS", "CANCELLATION_ADDONS", "RATETYPES", "IMAGES")
ERROR_NAMES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    429: "TOO_MANY_REQUESTS",
    500: "INTERNAL_SERVER_ERROR",
    502: "BAD_GATEWAY",
    503: "SERVICE_UNAVAILABLE",
}
_JSON = "application/json"
TEMPLATE_CACHE_SIZE = 8192
# flat lists the pipeline reads in a full run (plus accommodation types and reservation details)
WARM_COLLECTIONS = (
    "distributionchannels",
    "locations",
    "units",
    "ratetypes",
    "rateoptions",
    "rates",
    "companies",
    "journalreports",
    "journalentries",
    "cashaccounts",
    "cashclearances",
    "customers",
    "events",
)


class ApiError(Exception):
    """An error answer with the contracts.md body `{status, error, code, message}`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_body(status: int, code: str, message: str) -> bytes:
    error = ERROR_NAMES.get(status, "ERROR")
    return orjson.dumps({"status": status, "error": error, "code": code, "message": message})


def error_response(status: int, code: str, message: str) -> Response:
    headers = {"Retry-After": "1"} if status in (429, 503) else None
    return Response(error_body(status, code, message), status, headers, media_type=_JSON)


def json_response(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status, media_type=_JSON)
