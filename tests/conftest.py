"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.auth import forget_shared_tokens


@pytest.fixture(autouse=True)
def _no_shared_tokens() -> Iterator[None]:
    """Each test authenticates for itself: a token cached by an earlier test never leaks in."""
    forget_shared_tokens()
    yield
    forget_shared_tokens()
