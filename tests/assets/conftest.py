from __future__ import annotations

from pathlib import Path

import pytest

from lake.store import Lake
from pipelines.resources import LakeResource
from tests.assets.fake_service import FakeServiceResource

BATCH = "20260101T000000Z-0000beef"


@pytest.fixture
def lake_resource(tmp_path: Path) -> LakeResource:
    return LakeResource(
        data_dir=str(tmp_path), availability_start="2026-06-01", availability_horizon_days=35
    )


@pytest.fixture
def lake(lake_resource: LakeResource) -> Lake:
    return lake_resource.lake()


@pytest.fixture
def service() -> FakeServiceResource:
    return FakeServiceResource()
