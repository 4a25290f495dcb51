"""Pricing: rates per accommodation type and availability over the horizon."""

from __future__ import annotations

from assets.factory import build_all
from assets.specs import specs_for

assets = build_all(specs_for("pricing"))
