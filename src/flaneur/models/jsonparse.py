"""Find a JSON object in a model's reply, leniently.

Models wrap JSON in prose or in fenced code blocks and make small mistakes.
:func:`extract_json` tries, in order: the whole text, fenced blocks, then every balanced
``{...}`` (or ``[...]``) span, each first as strict JSON and then after light repairs
(trailing commas, single quotes, Python's ``True``/``False``/``None``, ``//`` comments).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON|json5)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_LINE_COMMENT = re.compile(r"(?m)^\s*//.*$|(?<=[,{\[])\s*//[^\n]*")
_PY_LITERALS = re.compile(r"\b(True|False|None)\b")


def _spans(text: str, opener: str, closer: str) -> Iterator[str]:
    """Balanced ``opener ... closer`` spans, outermost first, skipping string contents."""
    start = text.find(opener)
    while start != -1:
        depth = 0
        quote: str | None = None
        escaped = False
        end = -1
        for i in range(start, len(text)):
            ch = text[i]
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote:
                    quote = None
                continue
            if ch in "\"'":
                # an apostrophe inside a word ("don't") is not a quote
                if ch == "'" and i > 0 and text[i - 1].isalnum():
                    continue
                quote = ch
            elif ch == opener:
                depth += 1
            elif ch == closer:
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end != -1:
            yield text[start : end + 1]
            start = text.find(opener, end + 1)
        else:
            start = text.find(opener, start + 1)


_FAILED = object()
_TO_JSON = {"True": "true", "False": "false", "None": "null"}
_TO_PY = {"true": "True", "false": "False", "null": "None"}


def _decode(candidate: str) -> Any:
    """Decode ``candidate`` strictly, then after repairs; ``_FAILED`` if nothing works."""
    s = candidate.strip()
    fixed = _TRAILING_COMMA.sub(r"\1", _LINE_COMMENT.sub("", s))
    pythonish = _PY_LITERALS.sub(lambda m: _TO_JSON[m.group(1)], fixed)
    for attempt in (s, fixed, pythonish):
        try:
            return json.loads(attempt)
        except ValueError:
            continue
    # single-quoted keys or strings: read it as a Python literal
    as_python = re.sub(r"\b(true|false|null)\b", lambda m: _TO_PY[m.group(1)], fixed)
    try:
        return ast.literal_eval(as_python)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return _FAILED


def extract_json(text: str, *, want: type = dict) -> Any:
    """Return the first JSON value of type ``want`` found in ``text``, or ``None``.

    Parameters
    ----------
    text
        A model reply: bare JSON, JSON inside ```json fences, or JSON inside prose.
    want
        ``dict`` (default) for an object, ``list`` for an array, ``object`` for either.

    Returns
    -------
    dict, list or None
        The decoded value; ``None`` when no candidate decodes (never raises).
    """
    if not text:
        return None
    candidates: list[str] = [text]
    candidates.extend(m.group(1) for m in _FENCE.finditer(text))
    if want is dict or want is object:
        candidates.extend(_spans(text, "{", "}"))
    if want is list or want is object:
        candidates.extend(_spans(text, "[", "]"))
    for candidate in candidates:
        value = _decode(candidate)
        if value is _FAILED:
            continue
        if isinstance(value, dict | list) and isinstance(value, want):
            return value
    return None
