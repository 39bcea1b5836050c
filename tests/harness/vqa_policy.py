"""A scripted fake-server policy for the place-VQA benchmark (tests and benchmarks).

It knows each question's options and true option and answers a VQA prompt in one of
several reply styles, chosen deterministically from the prompt and a seed: the bare letter,
``"Answer: (X)"``, the option's text (which only a matcher can read), a wrong letter, or a
reply with no option ("I cannot tell from the picture."). Matcher prompts (``Model
answer:``) get the letter of the option quoted in the answer, or ``none``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from flaneur.testing.fake_policies import FakeRequest

__all__ = ["ScriptedVQAPolicy"]

_OPTION = re.compile(r"^([A-D])\. (.*)$", re.MULTILINE)


class ScriptedVQAPolicy:
    """Answer VQA prompts from a set of true option texts.

    Parameters
    ----------
    questions
        ``(options, true option text)`` of every question; a prompt is recognised by its
        set of options (the same text may be true for one place and false for another).
    styles
        Weights of ``letter``, ``formal``, ``text``, ``wrong``, ``none`` replies.
    seed
        Changes which prompts get which style.
    """

    def __init__(
        self,
        questions: Iterable[tuple[Sequence[str], str]],
        *,
        styles: dict[str, float] | None = None,
        seed: int = 0,
    ) -> None:
        self.truth = {frozenset(opts): true for opts, true in questions}
        self.styles = styles or {
            "letter": 0.7,
            "formal": 0.1,
            "text": 0.1,
            "wrong": 0.05,
            "none": 0.05,
        }
        self.seed = seed

    def _style(self, prompt: str) -> str:
        h = hashlib.sha256(f"{self.seed}\x1f{prompt}".encode()).digest()
        u = int.from_bytes(h[:8], "big") / 2**64 * sum(self.styles.values())
        for name, weight in self.styles.items():
            if u < weight:
                return name
            u -= weight
        return next(iter(self.styles))

    def __call__(self, request: FakeRequest) -> str:
        """The reply text for one chat request."""
        prompt = request.last_user_text
        options = {m.group(1): m.group(2).strip() for m in _OPTION.finditer(prompt)}
        if "Model answer:" in prompt:
            answer = prompt.split("Model answer:", 1)[1]
            hits = [letter for letter, text in options.items() if text and text in answer]
            return hits[0] if len(hits) == 1 else "none"
        true = self.truth.get(frozenset(options.values()))
        right = next((k for k, v in options.items() if v == true), None)
        if right is None:
            return "I cannot tell from the picture."
        style = self._style(prompt)
        if style == "letter":
            return right
        if style == "formal":
            return f"Answer: ({right})"
        if style == "text":
            return f"I think the best choice is: {options[right]}"
        if style == "wrong":
            return next(k for k in options if k != right)
        return "I cannot tell from the picture."
