"""Fixtures of the perception tests: the toy city, a synthetic provider and one OCR engine."""

from __future__ import annotations

import pytest

from flaneur.perception.ocr import OCR
from flaneur.views.synthetic import SyntheticViews
from flaneur.views.toy import grid_city


@pytest.fixture(scope="session")
def city():
    """The toy grid city."""
    return grid_city()


@pytest.fixture(scope="session")
def views(city):
    """Synthetic views of the toy city."""
    return SyntheticViews(city).prepare()


@pytest.fixture(scope="session")
def ocr():
    """One OCR engine for the session (its models load once)."""
    return OCR()
