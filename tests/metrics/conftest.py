"""Fixtures of the metric tests (the grid city lives in ``metric_grid.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helper modules beside the tests
from metric_grid import bare_grid_city, grid_city

from flaneur.world import City


@pytest.fixture
def grid() -> City:
    return grid_city()


@pytest.fixture
def bare_grid() -> City:
    return bare_grid_city()
