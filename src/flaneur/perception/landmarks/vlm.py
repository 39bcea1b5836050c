"""``VLMLandmarks``: ask a vision-language model a multiple-choice question (V-IRL's LLaVA set-up).

The model sees the view and a lettered list of the landmarks plus "none of the above", and
answers with the letters of those it sees.  Any object with ``async complete(messages,
**params)`` returning something with ``.text`` works (the :mod:`flaneur.models` layer, a
fake in tests); messages are OpenAI-style dicts with the image as a data URL.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
from collections.abc import Sequence
from typing import Any, Protocol

from flaneur.models.sync import run_sync
from flaneur.perception.landmarks.base import LandmarkObservation, LandmarkScorer, unique_landmarks
from flaneur.views.base import View

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

PROMPT = (
    "This is a street-level photo. Which of these landmarks can you see in it?\n"
    "{options}\n"
    "Answer with the letters of every landmark you can see, separated by commas, "
    "or only {none} if you see none of them."
)


_JOINERS = {"and", "or", "is", "are", "as", "plus", "also", "too", "only"}


class CompletionModel(Protocol):
    """What :class:`VLMLandmarks` needs from a model."""

    async def complete(self, messages: Any, **params: Any) -> Any:
        """Return an object with a ``.text`` answer."""
        ...


def image_data_url(view: View, *, quality: int = 88) -> str:
    """The view as a ``data:image/jpeg;base64,...`` URL."""
    buf = io.BytesIO()
    view.image.convert("RGB").save(buf, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()


def parse_choice(answer: str, options: Sequence[str]) -> set[int]:
    """Indices of the options chosen in ``answer``; the last letter is "none of the above".

    Letters count when they stand alone (``"A, C"``, ``"(B)"``, ``"Answer: D"``); option
    names quoted in the answer count too.  Choosing "none" wins over everything else.
    """
    none_index = len(options) - 1
    text = answer.strip()
    chosen: set[int] = set()
    for m in re.finditer(r"(?<![A-Za-z'])([A-Z])(?![A-Za-z'])", text):
        after = text[m.end() :].lstrip(" ").split(" ", 1)[0].strip(".,;:").lower()
        if m.group(1) in "AI" and after.isalpha() and after not in _JOINERS:
            continue  # the word "I" or the article "A" before a word, not a letter choice
        k = LETTERS.find(m.group(1))
        if 0 <= k < len(options):
            chosen.add(k)
    lowered = text.lower()
    if "none of the above" in lowered or lowered in ("none", "none."):
        chosen.add(none_index)
    for k, name in enumerate(options[:-1]):
        if len(name) > 3 and name.lower() in lowered:
            chosen.add(k)
    if none_index in chosen:
        return {none_index}
    return chosen


class VLMLandmarks(LandmarkScorer):
    """Landmarks a vision-language model says it sees.

    Parameters
    ----------
    model
        Anything with ``async complete(messages, **params)`` returning ``.text``.
    max_options
        Landmarks per question (longer lists are asked in several questions).
    params
        Sampling parameters for every call (default ``temperature=0``, ``max_tokens=40``).
    prompt
        Template with ``{options}`` and ``{none}``.
    """

    name = "vlm"

    def __init__(
        self,
        model: CompletionModel,
        *,
        max_options: int = 10,
        params: dict[str, Any] | None = None,
        prompt: str = PROMPT,
    ) -> None:
        self.model = model
        self.max_options = max(1, min(max_options, len(LETTERS) - 1))
        self.params = {"temperature": 0.0, "max_tokens": 40} if params is None else dict(params)
        self.prompt = prompt

    def question(self, view: View, names: Sequence[str]) -> list[dict[str, Any]]:
        """The messages of one multiple-choice question."""
        options = [*names, "None of the above"]
        lines = "\n".join(f"{LETTERS[k]}. {opt}" for k, opt in enumerate(options))
        text = self.prompt.format(options=lines, none=LETTERS[len(options) - 1])
        return [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "image_url", "image_url": {"url": image_data_url(view)}},
                ],
            }
        ]

    async def _ask(self, view: View, names: Sequence[str]) -> tuple[set[int], str]:
        reply = await self.model.complete(self.question(view, names), **self.params)
        text = str(getattr(reply, "text", reply) or "")
        chosen = parse_choice(text, [*names, "None of the above"])
        return {k for k in chosen if k < len(names)}, text

    async def ascore(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """Ask the model (one question per ``max_options`` landmarks, concurrently)."""
        names = unique_landmarks(landmarks)
        chunks = [names[i : i + self.max_options] for i in range(0, len(names), self.max_options)]
        answers = await asyncio.gather(*(self._ask(view, chunk) for chunk in chunks))
        out = []
        for chunk, (chosen, text) in zip(chunks, answers, strict=True):
            for k, name in enumerate(chunk):
                seen = k in chosen
                out.append(
                    LandmarkObservation(
                        landmark=name,
                        visible=seen,
                        score=1.0 if seen else 0.0,
                        heading=view.heading if seen else None,
                        relative_bearing=0.0 if seen else None,
                        source=self.name,
                        evidence=text[:200],
                        node=view.node,
                    )
                )
        return out

    def score(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        """Synchronous :meth:`ascore` (runs on the model layer's background loop)."""
        return run_sync(self.ascore(view, landmarks))
