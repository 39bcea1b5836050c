"""Lenient parsing of MapGPT replies: ``Thought``, ``New Planning`` and the ``Action`` letter.

The model is asked for three labelled lines but may answer with JSON, markdown, or prose.
:func:`parse_reply` tries, in order:

1. a JSON object (``{"Thought": ..., "New Planning": ..., "Action": "B"}``, keys in any case);
2. labelled fields (``Thought:``, ``New Planning:`` / ``Planning:`` / ``Plan:``, ``Action:``,
   also in bold or as headings);
3. the last non-empty line, then phrases such as ``I choose B`` anywhere in the text.

An action value is matched to an option by its letter (``B``, ``B.``, ``(B)``, ``**B**``,
``Option B``, ``B. turn left to Place 4``), else by the option's text (``turn left to Place
4``), else by a ``Place N`` it names, else by the word ``stop``. A letter that is not among
the offered options (e.g. ``A`` = stop before stop is offered) does not match. When nothing
matches the reply is a parse failure; the agent counts it and falls back (see
:class:`~flaneur.agents.mapgpt.agent.MapGPTAgent`).

Two shapes of real model output are never read as a choice:

* an echoed option list: lines that repeat two or more of the offered options
  (``A. stop``, ``B. turn left to Place 4``, ...) are removed before parsing, so a reply that
  only echoes the options names none of them;
* a reply cut off at ``max_tokens`` (``finish_reason == "length"``, ``truncated=True``) is
  read only from an explicit ``Action`` field or JSON key; a truncated reply without one is a
  parse failure, never a stop (its last line may end "The next stop will be").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from flaneur.agents.mapgpt.prompt_builder import Option
from flaneur.models.jsonparse import extract_json

_FIELD = re.compile(
    r"^[ \t>#*_\-]*(thoughts?|reasoning|new[ _\-]*planning|new[ _\-]*plan|planning|plan|action)"
    r"[ \t*_]*[:：]",
    re.IGNORECASE | re.MULTILINE,
)
_LEAD = re.compile(
    r"^[\s*_`'\"\[<]*(?:(?:option|choice|answer|action)\s*[:：]?\s*)?\(?([A-Za-z]{1,2})(?![A-Za-z])\)?"
    r"(?P<rest>.*)$",
    re.DOTALL,
)
_STANDALONE = re.compile(r"(?<![A-Za-z0-9'])\(?([A-Z]{1,2})\)?(?![A-Za-z0-9'])")
_CHOICE = re.compile(
    r"(?:action|answer|option|choose|choice|select|pick|go with)\W{0,4}(?:option\s+)?"
    r"\(?([A-Z]{1,2})\)?(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_PLACE = re.compile(r"\bplace\s*#?\s*(\d+)", re.IGNORECASE)
_STOP = re.compile(r"\bstop(?:ping)?\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """What was read from one reply.

    Attributes
    ----------
    thought
        The ``Thought`` text (``""`` if absent).
    planning
        The ``New Planning`` text (``""`` if absent).
    option
        The chosen option, or ``None`` when the reply names none (a parse failure).
    method
        ``"json"``, ``"field"``, ``"text"`` or ``"none"``.
    """

    thought: str
    planning: str
    option: Option | None
    method: str

    @property
    def ok(self) -> bool:
        """Whether an option was found."""
        return self.option is not None


def _field_key(label: str) -> str:
    key = re.sub(r"[^a-z]", "", label.lower())
    if key.startswith(("thought", "reasoning")):
        return "thought"
    if "plan" in key:
        return "planning"
    return "action" if key == "action" else ""


def split_fields(text: str) -> dict[str, str]:
    """``{"thought", "planning", "action"}`` values of labelled fields (first of each)."""
    matches = list(_FIELD.finditer(text))
    out: dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        value = text[m.end() : end].strip().strip("*_` \n").strip()
        key = _field_key(m.group(1))
        if key and value and key not in out:
            out[key] = value
    return out


def _json_fields(text: str) -> dict[str, str]:
    data = extract_json(text, want=dict)
    if not isinstance(data, dict):
        return {}
    out: dict[str, str] = {}
    for k, v in data.items():
        key = _field_key(str(k))
        if key and v is not None and key not in out:
            out[key] = v if isinstance(v, str) else str(v)
    return out


def _is_word_use(letter: str, rest: str) -> bool:
    """``I`` / ``A`` used as a word (``"I choose"``, ``"A left turn"``)."""
    return letter in ("I", "A") and bool(re.match(r"\s+[a-z]", rest))


def match_action(value: str, options: Sequence[Option]) -> Option | None:
    """The option an action value names (see the module docstring), or ``None``."""
    text = value.strip()
    if not text or not options:
        return None
    by_letter = {o.letter: o for o in options}
    lead = _LEAD.match(text)
    if lead is not None and lead.group(1).upper() in by_letter:
        token, rest = lead.group(1), lead.group("rest")
        bare = not rest.strip(" .)]*_`'\">:;,!\n")
        marked = re.match(r"\s*[.)\]:*_`'\">,;!-]", rest) is not None
        if (
            bare
            or (token.isupper() and (marked or not _is_word_use(token, rest)))
            or (len(token) == 1 and re.match(r"[.)]", rest) is not None)
        ):
            return by_letter[token.upper()]
    lowered = " ".join(text.lower().split())
    for opt in sorted(options, key=lambda o: -len(o.phrase)):
        if not opt.is_stop and opt.phrase.lower() in lowered:
            return opt
    for m in _PLACE.finditer(text):
        number = int(m.group(1))
        for opt in options:
            if opt.place == number:
                return opt
    for m in _STANDALONE.finditer(text):
        letter = m.group(1)
        if letter in by_letter and not _is_word_use(letter, text[m.end() :]):
            return by_letter[letter]
    if _STOP.search(text):
        return next((o for o in options if o.is_stop), None)
    return None


def _loose_choice(text: str, options: Sequence[Option]) -> Option | None:
    by_letter = {o.letter: o for o in options}
    for m in _CHOICE.finditer(text):
        letter = m.group(1)
        if letter.isupper() and letter in by_letter:
            return by_letter[letter]
    return None


_BULLET = re.compile(r"^[\s>*_\-•`]*")


def _norm_line(line: str) -> str:
    return " ".join(_BULLET.sub("", line).lower().split()).rstrip(".;,")


def drop_echoed_options(text: str, options: Sequence[Option]) -> str:
    """``text`` without the lines that repeat offered options, when two or more do."""
    heads = [_norm_line(f"{o.letter}. {o.phrase}") for o in options]
    full = {_norm_line(o.line()) for o in options}
    lines = text.splitlines()

    def echoes(line: str) -> bool:
        norm = _norm_line(line)
        if norm in full or norm in heads:
            return True
        return any(norm.startswith((f"{h}:", f"{h} (image")) for h in heads)

    echoed = {i for i, line in enumerate(lines) if echoes(line)}
    if len(echoed) < 2:
        return text
    return "\n".join(line for i, line in enumerate(lines) if i not in echoed)


def parse_reply(
    text: str | None, options: Sequence[Option], *, truncated: bool = False
) -> ParsedReply:
    """Read thought, planning and the chosen option from a reply (never raises).

    Parameters
    ----------
    text
        The reply.
    options
        The offered options.
    truncated
        The reply was cut off at ``max_tokens``: only an explicit ``Action`` field or JSON
        key counts (see the module docstring).
    """
    text = drop_echoed_options((text or "").strip(), options).strip()
    if not text:
        return ParsedReply("", "", None, "none")
    data = _json_fields(text)
    fields = split_fields(text)
    thought = data.get("thought") or fields.get("thought", "")
    planning = data.get("planning") or fields.get("planning", "")
    if "action" in data and (opt := match_action(data["action"], options)) is not None:
        return ParsedReply(thought, planning, opt, "json")
    if "action" in fields:
        action = fields["action"].splitlines()[0] if fields["action"] else ""
        for candidate in (action, fields["action"]):
            if (opt := match_action(candidate, options)) is not None:
                return ParsedReply(thought, planning, opt, "field")
    if truncated:
        return ParsedReply(thought, planning, None, "none")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not fields and len(lines) == 1 and (opt := match_action(lines[0], options)) is not None:
        return ParsedReply(thought, planning, opt, "text")
    last = lines[-1] if lines else ""
    if not _FIELD.match(last) and (opt := _loose_choice(last, options)) is not None:
        return ParsedReply(thought, planning, opt, "text")
    if (opt := _loose_choice(text, options)) is not None:
        return ParsedReply(thought, planning, opt, "text")
    if not _FIELD.match(last) and len(last) <= 60 and (opt := match_action(last, options)):
        return ParsedReply(thought, planning, opt, "text")
    return ParsedReply(thought, planning, None, "none")


__all__ = ["ParsedReply", "drop_echoed_options", "match_action", "parse_reply", "split_fields"]
