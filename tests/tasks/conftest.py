"""Fixtures of the task tests: a tiny data directory and an isolated cache."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # helper modules beside the tests
from task_fixtures import write_data_dir


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FLANEUR_DATA", raising=False)
    return write_data_dir(tmp_path / "data")
