"""MapGPT's prompt: place numbers, trajectory, map connectivity, supplementary info, options.

Every node the agent has seen gets a stable per-episode number, ``Place N``, in the order it
was first observed (:class:`~flaneur.env.online_map.OnlineMap`: ``Place 0`` is the start,
then the out-neighbours of each newly visited node in ascending heading order). The prompt
names places only by these numbers, so a reader that knows the start node and the graph can
map them back to node ids by replaying the trajectory (which is how the oracle-fake policy
in the repository's ``tests/harness/oracle_policies_mapgpt.py`` works).

The user message, filled into ``prompts/mapgpt/step.txt``, reads::

    Instruction: <instruction>
    History: step 1: go forward to Place 2; step 2: turn left to Place 5
    Trajectory: Place 0, Place 2, Place 5
    Map:
    Place 0 is connected with Places 1, 2.
    ...
    Supplementary Info:
    Place 1: behind you, 40 m away; street
    Previous Planning: <the plan of the previous step>
    Action options (step 3):
    A. stop
    B. turn left to Place 7: 4-way intersection; near Cafe Aalto
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from flaneur.agents.prompts import Prompt, prompt_hash
from flaneur.env.online_map import OnlineMap
from flaneur.env.state import relative_angle

STOP_PHRASE = "stop"
NO_HISTORY = "none yet (this is the first step)"
NO_PLANNING = "none yet"
NO_SUPPLEMENTARY = "none"


def option_letters(n: int) -> list[str]:
    """``A`` ... ``Z``, then ``AA``, ``AB``, ... (``n`` labels)."""
    letters = string.ascii_uppercase
    out = list(letters[:n])
    for k in range(max(0, n - len(letters))):
        out.append(letters[k // len(letters)] + letters[k % len(letters)])
    return out


def move_phrase(relative: float) -> str:
    """The move towards a street ``relative`` degrees from the heading (negative = left).

    ``go forward`` within 30 degrees, ``turn slightly left/right`` up to 60, ``turn
    left/right`` up to 150, ``turn around`` beyond.
    """
    a = abs(relative)
    if a <= 30.0:
        return "go forward"
    side = "right" if relative > 0 else "left"
    if a <= 60.0:
        return f"turn slightly {side}"
    if a <= 150.0:
        return f"turn {side}"
    return "turn around"


def where_phrase(relative: float) -> str:
    """Where something lies relative to the heading: ``ahead``, ``on your left``, ..."""
    a = abs(relative)
    side = "right" if relative > 0 else "left"
    if a <= 30.0:
        return "ahead"
    if a <= 60.0:
        return f"ahead on your {side}"
    if a <= 120.0:
        return f"on your {side}"
    if a <= 150.0:
        return f"behind you on the {side}"
    return "behind you"


def place(number: int) -> str:
    """``"Place 7"``."""
    return f"Place {number}"


@dataclass(frozen=True, slots=True)
class Option:
    """One lettered action option.

    Attributes
    ----------
    letter
        ``A``, ``B``, ...
    slot
        Action slot in the ``nodes`` scheme (0 = stop).
    node
        Target node index (-1 for stop).
    place
        Place number of the target (-1 for stop).
    phrase
        ``"stop"``, ``"turn left to Place 4"``, ``"go back to Place 9 (3 steps)"``.
    description
        What is known about the target (two-stage), or ``""``.
    image
        Number of the image showing this option (one-stage), ``None`` if none: the
        1-based number of the attached image (``flaneur`` protocol), or the place number
        (``paper`` protocol, where ``Image N`` shows ``Place N``).
    """

    letter: str
    slot: int
    node: int
    place: int
    phrase: str
    description: str = ""
    image: int | None = None

    @property
    def is_stop(self) -> bool:
        """Whether this is the stop option."""
        return self.slot == 0

    def line(self) -> str:
        """``"B. turn left to Place 4: 3-way intersection"`` (with ``(Image 1)``)."""
        text = f"{self.letter}. {self.phrase}"
        if self.image is not None:
            text += f" (Image {self.image})"
        if self.description:
            text += f": {self.description}"
        return text


def advance_map(online_map: OnlineMap, node: int) -> None:
    """Record that the agent now stands on ``node``.

    A node that is not adjacent to the last one was reached by a jump of the ``nodes``
    scheme; the route (the same fewest-edge route over explored nodes the scheme walks) is
    visited node by node so that numbering and trajectory match the walk.
    """
    trail = online_map.trail
    if not trail:
        online_map.visit(node)
        return
    last = trail[-1]
    if node == last:
        return
    if node not in online_map.accessible(last):
        route = online_map.route(last, node)
        if route:
            for v in route[:-1]:
                online_map.visit(v)
    online_map.visit(node)


def trajectory_text(online_map: OnlineMap) -> str:
    """``"Place 0, Place 2, Place 5"``."""
    return ", ".join(place(online_map.number(v)) for v in online_map.trail)


def map_lines(online_map: OnlineMap, *, window: int | None = None) -> list[str]:
    """``"Place 3 is connected with Places 1, 4, 7."`` per explored node (visit order).

    ``window`` keeps the lines of the last ``window`` explored nodes only.
    """
    lines = []
    explored = list(online_map.explored)
    if window is not None:
        explored = explored[-window:] if window > 0 else []
    for v in explored:
        numbers = sorted({online_map.number(t) for t in online_map.accessible(v)})
        if not numbers:
            continue
        label = "Place" if len(numbers) == 1 else "Places"
        joined = ", ".join(str(n) for n in numbers)
        lines.append(f"{place(online_map.number(v))} is connected with {label} {joined}.")
    return lines


def history_text(history: Sequence[str], *, window: int | None = None, first_step: int = 1) -> str:
    """``"step 1: go forward to Place 1; step 2: ..."`` (the last ``window`` moves).

    ``first_step`` is the number of the first move (0 under the ``paper`` protocol, as
    MapGPT counts).
    """
    if not history:
        return NO_HISTORY
    first = 0 if window is None else max(0, len(history) - window)
    parts = [f"step {k + first_step}: {history[k]}" for k in range(first, len(history))]
    return "; ".join(parts)


def move_options(
    candidates: Sequence[tuple[int, int]],
    online_map: OnlineMap,
    *,
    current: int,
    heading: float,
    edge_headings: dict[int, float],
    xy_bearing: dict[int, float],
    with_stop: bool,
    phrase_of: Callable[[float], str] = move_phrase,
) -> list[Option]:
    """Lettered options: stop (if offered), then one per candidate ``(slot, node)``.

    Parameters
    ----------
    candidates
        ``(slot, node index)`` pairs of the ``nodes`` scheme, slot order.
    online_map
        The episode's map (place numbers, jump routes).
    current, heading
        The agent's node and heading.
    edge_headings
        Heading of the street from ``current`` to each adjacent candidate.
    xy_bearing
        Compass bearing from ``current`` to each non-adjacent (jump) candidate.
    with_stop
        Offer stop as option A.
    phrase_of
        Names a move from its angle to the heading (:func:`move_phrase`, or MapGPT's words
        under the ``paper`` protocol).
    """
    entries: list[tuple[int, int, int, str]] = []
    if with_stop:
        entries.append((0, -1, -1, STOP_PHRASE))
    for slot, node in candidates:
        number = online_map.number(node)
        if node in edge_headings:
            move = phrase_of(relative_angle(edge_headings[node], heading))
            phrase = f"{move} to {place(number)}"
        else:
            route = online_map.route(current, node) or []
            where = where_phrase(relative_angle(xy_bearing.get(node, heading), heading))
            steps = f"{len(route)} step{'s' if len(route) != 1 else ''}"
            phrase = f"go back to {place(number)} ({steps}, {where})"
        entries.append((slot, node, number, phrase))
    letters = option_letters(len(entries))
    return [Option(letters[k], *entries[k]) for k in range(len(entries))]


def options_text(options: Sequence[Option]) -> str:
    """One line per option."""
    return "\n".join(o.line() for o in options)


def supplementary_text(entries: Sequence[tuple[int, str]]) -> str:
    """``"Place 7: behind you, 40 m away; street"`` lines, or ``"none"``."""
    if not entries:
        return NO_SUPPLEMENTARY
    return "\n".join(f"{place(n)}: {text}" if text else place(n) for n, text in entries)


def without_planning(prompt: Prompt) -> Prompt:
    """``prompt`` without its lines about planning (MapGPT's no-planning ablation): the
    ``Previous Planning`` field and the ``New Planning`` part of the reply."""
    lines = [line for line in prompt.text.splitlines() if "Planning" not in line]
    text = "\n".join(lines)
    version = f"{prompt.version}+no-planning"
    return Prompt(text=text, version=version, id=f"{version}:{prompt_hash(text)}")


def full_prompt_text(system: str, user: str, image_labels: Sequence[str] = ()) -> str:
    """The whole request as one text (what the run log keeps under ``prompt``)."""
    parts = [f"[system]\n{system.strip()}", f"[user]\n{user.strip()}"]
    parts += [f"[image {k + 1}] {label}" for k, label in enumerate(image_labels)]
    return "\n\n".join(parts)


__all__ = [
    "NO_HISTORY",
    "NO_PLANNING",
    "NO_SUPPLEMENTARY",
    "STOP_PHRASE",
    "Option",
    "advance_map",
    "full_prompt_text",
    "history_text",
    "map_lines",
    "move_options",
    "move_phrase",
    "option_letters",
    "options_text",
    "place",
    "supplementary_text",
    "trajectory_text",
    "where_phrase",
    "without_planning",
]
