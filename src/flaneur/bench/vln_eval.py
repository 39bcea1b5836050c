"""The tourist on V-IRL's VLN routes with a landmark recogniser, scored by V-IRL's metrics.

The tourist is V-IRL's Ling (:mod:`flaneur.agents.virl.ling`): V-IRL's actions
(``forward()``, ``turn_direction(<compass word>)``, ``stop()``) through its
:class:`~flaneur.agents.virl.ling.CompassAdapter`, its early stops (5 turns in a row, 6 moves
away from every key position) and the benchmark's step limit (40 actions). Which landmarks
she sees is the recogniser's job:

* :class:`OracleRecogniser` — V-IRL's oracle row: a landmark named in the instruction is seen
  when a place of that name lies within 20 m of the viewpoint (the map knows).
* :class:`OCRRecogniser` — V-IRL's PP-OCR row without the LLM yes/no step: four synthetic
  views (fov 90, all around; V-IRL: street views around 360°) — or, when the instruction
  says on which side the landmark stands, the one view towards that side — are read by PP-OCR
  (:class:`~flaneur.perception.landmarks.ocr.OCRLandmarks`) and a landmark is seen when a
  line of text fuzzily matches its name. OCR results are kept on disk
  (``$FLANEUR_CACHE_DIR/ocr``), so a second run costs a render and a hash per view.

Offline the tourist's policy is a rule of our own design that depends on the recogniser: it
reads the instruction's legs (``face <compass> and walk about <N> m``) and the landmark at
each turn; at the start of every leg it turns to the leg's compass direction; from half the
told distance on, at each intersection it looks for the turn's landmark and turns when it
sees it; a landmark not seen by :data:`LOST_AFTER_M` beyond the told distance is given up
and she turns at the next intersection anyway; on the last leg she stops after the told
distance (less :data:`LEG_SLACK_M`). With a model (``--llm``) every action comes from the
model with V-IRL's observations (``ling_action`` prompt); an unusable reply falls back to the
rule, counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.agents.virl.ling import (
    COMPASS_DEG,
    MAX_STEPS_AWAY,
    MAX_TURNS_IN_A_ROW,
    CompassAdapter,
    parse_action,
)
from flaneur.agents.virl.local import relative8
from flaneur.bench.vln_metrics import VlnOutcome, vln_metrics
from flaneur.bench.vln_routes import STEP_LIMIT
from flaneur.env.navigation_env import NavigationEnv
from flaneur.env.state import angular_distance, relative_angle
from flaneur.perception.matching import normalize_name
from flaneur.services.directions import COMPASS, compass
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

ORACLE_RADIUS_M = 20.0
LEG_SLACK_M = 10.0
LOST_AFTER_M = 20.0
REFACE_DEG = 60.0
OCR_FOV = 90.0
_WORDS = "|".join(sorted(COMPASS, key=len, reverse=True))
_FIRST = re.compile(r"Face (" + _WORDS + r") and walk about (\d+) m")
_TURN = re.compile(
    r"(?:At the intersection|Then)(?: with (.+?) on your ([a-z-]+))?, turn to face ("
    + _WORDS
    + r") and walk about (\d+) m"
)
_RELATIVE_DEG = {
    word: 45.0 * i
    for i, word in enumerate(
        ("front", "front-right", "right", "back-right", "back", "back-left", "left", "front-left")
    )
}


@dataclass(frozen=True)
class Leg:
    """One leg of an instruction: face ``direction``, walk ``metres``; ``landmark`` marks its
    end (the turn into the next leg), empty when the instruction names none; ``side`` is where
    the instruction says it stands (``right``, ``front-left``, ...)."""

    direction: str
    metres: float
    landmark: str = ""
    side: str = ""


def parse_legs(instruction: str) -> list[Leg]:
    """Legs of an instruction in the template's wording (``[]`` when it has none)."""
    first = _FIRST.search(instruction)
    if not first:
        return []
    dirs, metres, marks, sides = [first.group(1)], [float(first.group(2))], [], []
    for match in _TURN.finditer(instruction):
        marks.append(match.group(1) or "")
        sides.append(match.group(2) or "")
        dirs.append(match.group(3))
        metres.append(float(match.group(4)))
    marks.append("")
    sides.append("")
    return [Leg(d, m, lm, sd) for d, m, lm, sd in zip(dirs, metres, marks, sides, strict=True)]


class OracleRecogniser:
    """V-IRL's oracle: a named place of the landmark's name within 20 m of the viewpoint."""

    name = "oracle"

    def __init__(self, city: City, radius_m: float = ORACLE_RADIUS_M) -> None:
        self.city = city
        self.radius_m = radius_m

    def seen(
        self, node: int, facing: float, landmarks: Sequence[str], side: str = ""
    ) -> dict[str, str]:
        """``{landmark: relative direction}`` of the landmarks within reach of ``node``
        (``side`` is ignored: the map knows every direction)."""
        graph, places = self.city.graph, self.city.places
        wanted = {normalize_name(x): x for x in landmarks if x}
        rows, _ = places.within(graph.xy[node], self.radius_m)
        out: dict[str, str] = {}
        for row in rows.tolist():
            name = wanted.get(normalize_name(str(places.names[row])))
            if name and name not in out:
                dx, dy = places.xy[row] - graph.xy[node]
                out[name] = relative8(relative_angle(float(np.degrees(np.arctan2(dx, dy))), facing))
        return out


class ViewRecogniser:
    """A landmark scorer over synthetic views around the viewpoint (OCR, CLIP, VLM rows).

    Parameters
    ----------
    city
        The city.
    scorer
        A :class:`~flaneur.perception.landmarks.base.LandmarkScorer` (``visible(view, names)``).
    views
        The view provider (default: :class:`~flaneur.views.synthetic.SyntheticViews`).
    name
        The recogniser's name in results (default: the scorer's).
    """

    name = "view"

    def __init__(self, city: City, scorer: Any, views: Any = None, name: str = "") -> None:
        from flaneur.views.synthetic import SyntheticViews

        self.city = city
        self.views = views or SyntheticViews(city, scene_cache=True)
        self.scorer = scorer
        self.name = name or str(getattr(scorer, "name", "") or self.name)
        self.calls = 0

    def seen(
        self, node: int, facing: float, landmarks: Sequence[str], side: str = ""
    ) -> dict[str, str]:
        """``{landmark: relative direction}`` of the landmarks seen in the views: one view
        towards ``side`` (relative to ``facing``) when given, else four around."""
        names = [x for x in landmarks if x]
        out: dict[str, str] = {}
        if not names:
            return out
        if side in _RELATIVE_DEG:
            headings = [(facing + _RELATIVE_DEG[side]) % 360.0]
        else:
            headings = [(facing + k * OCR_FOV) % 360.0 for k in range(int(360 / OCR_FOV))]
        for heading_k in headings:
            view = self.views.view(int(node), heading_k, fov=OCR_FOV)
            self.calls += 1
            for obs in self.scorer.visible(view, names):
                heading = obs.heading if obs.heading is not None else view.heading
                out.setdefault(obs.landmark, relative8(relative_angle(heading, facing)))
            if len(out) == len(set(names)):
                break  # every landmark asked about is found: no need to look further
        return out


class OCRRecogniser(ViewRecogniser):
    """PP-OCR over four synthetic views around the viewpoint, fuzzy-matched to names."""

    name = "ocr"

    def __init__(self, city: City, views: Any = None, scorer: Any = None) -> None:
        from flaneur.paths import cache_dir
        from flaneur.perception.landmarks.ocr import OCRLandmarks
        from flaneur.perception.ocr import OCR

        scorer = scorer or OCRLandmarks(OCR(cache_dir=cache_dir("ocr")))
        super().__init__(city, scorer, views, name="ocr")


@dataclass
class TourRun:
    """One route followed: the outcome to score and what happened."""

    episode_id: str
    outcome: VlnOutcome
    nodes: list[int] = field(default_factory=list)
    ended: str = ""


def _gold(episode: Episode) -> tuple[str, tuple[str, ...]]:
    items = episode.metadata["milestones"]
    start = f"turn_direction({items[0]['heading_words']})"
    turns = tuple(f"turn_direction({m['next_heading_words']})" for m in items[:-1])
    return start, turns


def follow_route(
    city: City,
    episode: Episode,
    recogniser: Any,
    thinker: Thinker | None = None,
    step_limit: int = STEP_LIMIT,
) -> TourRun:
    """The tourist follows one route's instruction; returns the scored trajectory."""
    graph = city.graph
    thinker = thinker or Thinker()
    env = NavigationEnv(city, episode, scheme="headings")
    env.reset()
    adapter = CompassAdapter(env)
    legs = parse_legs(episode.instruction)
    keys = [graph.index(k) for k in episode.metadata["key_positions"]]
    best = {k: float(np.hypot(*(graph.xy[env.state.node] - graph.xy[k]))) for k in keys}
    landmarks = [leg.landmark for leg in legs if leg.landmark]
    nodes, trajectory, actions = [env.state.node], [], []
    facing = float(episode.start_heading)
    leg, walked_leg, must_turn = 0, 0.0, True
    came_from: int | None = None
    turns = away = 0
    ended = "step_limit"
    for _ in range(step_limit):
        node = env.state.node
        trajectory.append((float(graph.lat[node]), float(graph.lng[node])))
        junction = graph.degree[node] > 2
        if legs and leg < len(legs) - 1 and walked_leg >= 0.5 * legs[leg].metres and junction:
            mark = legs[leg].landmark
            found = bool(mark) and mark in recogniser.seen(node, facing, [mark], legs[leg].side)
            if found or walked_leg >= legs[leg].metres + (LOST_AFTER_M if mark else -LEG_SLACK_M):
                leg, walked_leg, must_turn = leg + 1, 0.0, True
        if not legs or (leg == len(legs) - 1 and walked_leg >= legs[leg].metres - LEG_SLACK_M):
            rule = ("stop", "")
        elif must_turn or angular_distance(facing, COMPASS_DEG[legs[leg].direction]) > REFACE_DEG:
            rule = ("turn", legs[leg].direction)
        else:
            rule = ("forward", "")
        action = rule
        if thinker.online:
            seen = recogniser.seen(node, facing, landmarks)
            text = " ".join(f"{k} is on your {v}." for k, v in seen.items()) or (
                "No landmarks nearby."
            )
            if junction:
                text = f"There is a {int(graph.degree[node])}-way intersection. {text}"
            reply = thinker.ask(
                prompt_template("ling_action").format(
                    instruction=episode.instruction,
                    landmarks=", ".join(landmarks) or "none",
                    walked_m=round(walked_leg),
                    heading_words=compass(facing),
                    observation=text,
                    history=", ".join(actions[-5:]) or "none",
                )
            )
            parsed = parse_action(reply or "")
            if parsed is None:
                thinker.fell_back()
            else:
                action = parsed
        if action[0] == "stop":
            actions.append("stop()")
            ended = "stopped"
            break
        if action[0] == "turn":
            actions.append(f"turn_direction({action[1]})")
            facing, must_turn = COMPASS_DEG[action[1]], False
            turns += 1
            if turns >= MAX_TURNS_IN_A_ROW:
                ended = "too_many_turns"
                break
            continue
        turns = 0
        env.step(adapter.forward_slot(facing, came_from))
        actions.append("forward()")
        came_from, new = node, env.state.node
        walked_leg += float(np.hypot(*(graph.xy[new] - graph.xy[node])))
        facing = env.state.heading
        nodes.append(new)
        dists = {k: float(np.hypot(*(graph.xy[new] - graph.xy[k]))) for k in keys}
        away = away + 1 if keys and all(dists[k] > best[k] for k in keys) else 0
        best = {k: min(best[k], dists[k]) for k in keys}
        if away >= MAX_STEPS_AWAY:
            ended = "moving_away"
            break
    last = env.state.node
    trajectory.append((float(graph.lat[last]), float(graph.lng[last])))
    gold_start, gold_turns = _gold(episode)
    outcome = VlnOutcome(
        destination=tuple(episode.metadata["destination_latlng"]),
        intersections=tuple(tuple(p) for p in episode.metadata["key_latlng"][:-1]),
        gold_start=gold_start,
        gold_turns=gold_turns,
        trajectory=tuple(trajectory),
        actions=tuple(actions),
    )
    return TourRun(episode.id, outcome, nodes, ended)


def evaluate(
    city: City,
    episodes: Sequence[Episode],
    recogniser: Any,
    *,
    thinker: Thinker | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run the tourist on every route; V-IRL's six metrics and the per-route runs."""
    runs = []
    for i, episode in enumerate(episodes):
        runs.append(follow_route(city, episode, recogniser, thinker))
        if progress is not None:
            progress(i + 1, len(episodes))
    metrics = vln_metrics([r.outcome for r in runs])
    return {
        "recogniser": recogniser.name,
        "metrics": metrics,
        "runs": [
            {
                "id": r.episode_id,
                "ended": r.ended,
                "final_distance_m": round(r.outcome.final_distance_m, 1),
                "actions": list(r.outcome.actions),
            }
            for r in runs
        ],
    }
