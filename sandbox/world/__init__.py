"""The sandbox's world: a seeded, deterministic simulation of the reservation service."""

from __future__ import annotations

from sandbox.protocol import WorldError

from .core import World

__all__ = ["World", "WorldError"]
