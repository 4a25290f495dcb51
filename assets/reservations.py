"""Reservations (header, reserved resources, bill lines, subjects), customers, merges."""

from __future__ import annotations

from assets.factory import build_all
from assets.specs import specs_for

assets = build_all(specs_for("reservations"))
