"""The strict profile of the sandbox: the service as real-service-notes.md describes it.

`SandboxSettings(profile="strict")` (`reservoir sandbox serve --profile strict`) serves a
`StrictWorld` (records shaped: real field names, optional fields left out at random, the bill-line
types 50, 130, 140 and 180) and switches the HTTP layer to the real service's behaviour where the
notes speak (the readable `returnSections` enum, 404 for the content of an unknown reservation,
`sort` as an object). docs/sandbox.md, "The strict profile", lists it all.
"""

from __future__ import annotations

from sandbox.strict.shape import Shaper
from sandbox.strict.world import StrictWorld

__all__ = ["Shaper", "StrictWorld"]
