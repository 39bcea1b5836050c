"""VQA options written by an LLM (``--llm``), as V-IRL's ``generate_place_vqa_data.py``.

The model gets the place's name and types and returns JSON with one true intention and
three intentions that cannot be accomplished there. A reply that is not such JSON gives
``None`` and the builder falls back to the offline options (counted).
"""

from __future__ import annotations

import hashlib
from typing import Any

from flaneur.bench.types import type_label

__all__ = ["WRITE_PROMPT", "LLMOptionWriter"]

WRITE_PROMPT = (
    "You write a multiple-choice question about a place in a city. The place is {name}, a "
    "{types}. Question: which human intention can be accomplished at this place? Write one "
    "true option (an intention that can be accomplished there) and three false options "
    "(intentions that can not be accomplished there), each 15 to 40 words, in the first "
    'person. Reply with JSON only: {{"true_option": "...", "false_options": ["...", "...", '
    '"..."]}}'
)


class LLMOptionWriter:
    """Call a model through the model layer to write the four options of a place."""

    def __init__(self, model: Any, *, seed: int = 0) -> None:
        self.model = model
        self.seed = seed
        self.failures = 0

    def __call__(self, item: dict[str, Any]) -> tuple[list[str], int] | None:
        """``(options, index of the true one)`` or None when the reply is unusable."""
        from flaneur.models import ModelError, extract_json, run_sync, user

        prompt = WRITE_PROMPT.format(
            name=item.get("name") or "an unnamed place",
            types=" / ".join(type_label(t) for t in item["types"]),
        )
        try:
            reply = run_sync(self.model.complete([user(prompt)], temperature=0.0))
        except ModelError:
            self.failures += 1
            return None
        data = extract_json(reply.text)
        true = data.get("true_option") if isinstance(data, dict) else None
        false = data.get("false_options") if isinstance(data, dict) else None
        ok = isinstance(true, str) and isinstance(false, list) and len(false) == 3
        if not ok or not all(isinstance(x, str) and x.strip() for x in [true, *false]):
            self.failures += 1
            return None
        digest = hashlib.sha256(f"{self.seed}:{item['place_id']}".encode()).digest()
        slot = digest[0] % 4
        options = [x.strip() for x in false]
        options.insert(slot, true.strip())
        if len(set(options)) < 4:
            self.failures += 1
            return None
        return options, slot
