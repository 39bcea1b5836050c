"""Whether the ``train`` extra is installed, as a skip mark for the training tests."""

from __future__ import annotations

import importlib.util

import pytest

MISSING = [
    name for name in ("torch", "transformers", "peft") if importlib.util.find_spec(name) is None
]
"""The train extra's libraries that are not installed."""

needs_train_extra = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the train extra is missing ({', '.join(MISSING)}): pip install -e '.[train]'",
)
"""Skip a test (or a module, as ``pytestmark``) without the train extra."""
