"""Reference data: distribution channels, locations, accommodation types, units, rate types."""

from __future__ import annotations

from assets.factory import build_all
from assets.specs import specs_for

assets = build_all(specs_for("reference"))
