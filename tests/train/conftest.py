"""The tiny model of the tests of ``flaneur train`` and the ``hf:`` backend
(:mod:`harness.tiny_llama`), built once per session with one torch thread (skipped without
the ``train`` extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tiny_llama import build_tiny_model
from harness.train_extra import MISSING


@pytest.fixture(scope="session")
def one_thread() -> None:
    """One torch thread: on a loaded 2-core machine that is faster for a model this small,
    and runs compared with one another must use the same thread count."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_model(one_thread: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the tiny model (built once per test session)."""
    if MISSING:
        pytest.skip(f"the train extra is missing ({', '.join(MISSING)}): pip install -e '.[train]'")
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))
