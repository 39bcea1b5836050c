"""Hiro's language model (``--llm``): the place type, the enter decision and, for a model
that sees images, the road at a junction.

The prompts are package data (``flaneur/agents/prompts/hiro/{type,enter,road}.txt``, each
with a ``# version:`` line). Replies are parsed leniently (a JSON object, else the words of
the reply); a failed call or a reply that cannot be used returns ``None`` and is counted,
and the agent then takes its offline answer instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flaneur.agents.prompts import load_prompt
from flaneur.models import ModelError, extract_json, image, user
from flaneur.world.taxonomy import normalize_category

ENTER_WORDS = re.compile(r"enter|\byes\b", re.IGNORECASE)
STAY_OUT_WORDS = re.compile(r"continu|keep looking|\bno\b|skip", re.IGNORECASE)


def parse_place_type(reply: str) -> str | None:
    """The taxonomy category a reply names (``{"place_type": ...}`` or plain text), or None.

    Examples
    --------
    >>> parse_place_type('{"place_type": "coffee shop"}')
    'cafe'
    >>> parse_place_type("Pharmacy.")
    'pharmacy'
    >>> parse_place_type("a place with good vibes") is None
    True
    """
    data = extract_json(reply)
    candidates = []
    if isinstance(data, dict):
        candidates += [str(v) for v in data.values() if isinstance(v, str)]
    text = reply.strip()
    if text:
        candidates += [text.splitlines()[0], text]
    for candidate in candidates:
        category = normalize_category(candidate.strip().strip("\"'.` ").lower())
        if category:
            return category
    return None


def parse_enter(reply: str) -> bool | None:
    """Whether a reply says to enter (True), to keep looking (False), or cannot be read.

    Examples
    --------
    >>> parse_enter('{"action": "enter_place()", "reason": "it fits"}')
    True
    >>> parse_enter("continual_find()")
    False
    >>> parse_enter("maybe") is None
    True
    """
    data = extract_json(reply)
    text = str(data.get("action", "")) if isinstance(data, dict) else reply
    enter, stay = bool(ENTER_WORDS.search(text)), bool(STAY_OUT_WORDS.search(text))
    if enter == stay:
        return None
    return enter


def parse_road(reply: str, n_roads: int) -> int | None:
    """The 0-based road a reply picks (``{"idx": k}`` or the first number, 1-based).

    Examples
    --------
    >>> parse_road('{"idx": 2, "reason": "shops"}', 3)
    1
    >>> parse_road("Road 3 looks busiest", 3)
    2
    >>> parse_road('{"idx": 7}', 3) is None
    True
    """
    data = extract_json(reply)
    value: Any = data.get("idx") if isinstance(data, dict) else None
    if value is None:
        match = re.search(r"\d+", reply)
        value = match.group(0) if match else None
    try:
        k = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return k - 1 if 1 <= k <= n_roads else None


@dataclass
class Exchange:
    """One model call as the step record shows it."""

    prompt_id: str
    raw: str | None
    parsed: Any
    error: str | None = None


@dataclass
class HiroThinker:
    """Hiro's calls to the run's model.

    Parameters
    ----------
    model
        The run's :class:`~flaneur.models.ChatModel` (``env_info.model``).
    max_tokens
        Reply length.
    """

    model: Any
    max_tokens: int = 200
    calls: int = 0
    failures: int = 0
    exchanges: list[Exchange] = field(default_factory=list)

    async def _ask(self, name: str, images: Sequence[Any] = (), **values: Any) -> Exchange:

        text, prompt_id = load_prompt("hiro", name).fill(**values)
        self.calls += 1
        try:
            reply = await self.model.complete(
                [user(text, *images)], temperature=0, max_tokens=self.max_tokens
            )
        except ModelError as err:
            return Exchange(prompt_id, None, None, str(err)[:200])
        return Exchange(prompt_id, reply.text or "", None)

    def _done(self, exchange: Exchange, parsed: Any) -> Exchange:
        exchange.parsed = parsed
        if parsed is None:
            self.failures += 1
        self.exchanges.append(exchange)
        return exchange

    async def place_type(self, intention: str) -> Exchange:
        """Ask for the place type; ``parsed`` is a taxonomy category or None."""
        ex = await self._ask("type", intention=intention)
        return self._done(ex, parse_place_type(ex.raw) if ex.raw is not None else None)

    async def enter(self, intention: str, place_type: str, ordinal: str, overview: str) -> Exchange:
        """Ask whether to enter; ``parsed`` is True, False or None."""
        ex = await self._ask(
            "enter", intention=intention, place_type=place_type, ordinal=ordinal, overview=overview
        )
        return self._done(ex, parse_enter(ex.raw) if ex.raw is not None else None)

    async def road(self, intention: str, place_type: str, images: Sequence[Any]) -> Exchange:
        """Show one image per road and ask which to take; ``parsed`` is a 0-based index."""

        ex = await self._ask(
            "road",
            [image(im) for im in images],
            intention=intention,
            place_type=place_type,
            n_roads=len(images),
        )
        return self._done(ex, parse_road(ex.raw, len(images)) if ex.raw is not None else None)


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ... ``11th``, ``21st``.

    Examples
    --------
    >>> [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 21)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '21st']
    """
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


__all__ = ["Exchange", "HiroThinker", "ordinal", "parse_enter", "parse_place_type", "parse_road"]
