"""VELMA under ``--protocol paper`` with views: its traffic flow on Touchdown, its CLIP
standardisation with torch's sample standard deviation, and in-context examples whose
landmarks are seen in the views along their paths (toy city, synthetic views, a fake OpenAI
server). docs/fidelity.md names these tests.

The decision logic, the crops and the examples are pinned without models (a scripted detector,
scripted scores, a scripted landmark scorer, flaneur's numpy stand-in for CLIP); the last test
runs the tiny open_clip CLIP and OWL-ViT of ``conftest.py`` (skipped without them).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import logging
import math
from collections.abc import Iterator, Sequence
from typing import ClassVar

import numpy as np
import pytest
from PIL import Image

from flaneur.agents import ablations
from flaneur.agents.velma import VelmaAgent
from flaneur.agents.velma.paper import example_draws, example_lines, filter_landmarks
from flaneur.agents.velma.traffic import (
    TrafficFlow,
    flow_of_traffic,
    orientation_texts,
    start_headings,
    traffic_line,
)
from flaneur.agents.velma.verbalize import MapLandmarkObserver, ViewLandmarkObserver
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.env.schemes.turns import TurnsScheme
from flaneur.env.state import angular_distance
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.models import make_model
from flaneur.perception.detection import Detection, Detector
from flaneur.perception.extraction import rule_based_landmarks
from flaneur.perception.landmarks.base import LandmarkObservation, LandmarkScorer
from flaneur.perception.landmarks.clip import CLIPLandmarks, RandomProjectionBackend
from flaneur.testing import FakeOpenAIServer
from flaneur.views import SyntheticViews
from flaneur.views.base import DEFAULT_SIZE, View

TRAFFIC = "the flow of the traffic."
HAS_MODELS = all(
    importlib.util.find_spec(m) is not None for m in ("open_clip", "torch", "transformers")
)
EXTRA = "pip install -e '.[vision]' && pip install --no-deps open_clip_torch==3.3.0"


class ScriptedDetector(Detector):
    """Boxes by the view's heading (``{rounded heading: detections}``), any view else."""

    name = "scripted"

    def __init__(self, boxes: dict[int | None, list[Detection]], **kwargs) -> None:
        super().__init__(**kwargs)
        self.boxes = boxes
        self.asked: list[float] = []

    def _detect(self, view: View, labels: tuple[str, ...]) -> list[Detection]:
        self.asked.append(view.heading)
        key = round(view.heading) % 360
        return list(self.boxes.get(key, self.boxes.get(None, [])))


class ColourViews:
    """Plain views, one colour per heading (so the detector's cache tells them apart)."""

    name = "colours"

    def view(self, node, heading, *, pitch=0.0, fov=60.0, size=(80, 40)) -> View:
        colour = (round(heading) % 256, 40, 90)
        return View(Image.new("RGB", tuple(size), colour), str(node), heading, fov=fov)


class ScriptedLandmarks(LandmarkScorer):
    """A landmark is visible in the view facing east, ``museum`` in the view facing north."""

    name = "scripted"
    facing: ClassVar[dict[str, float]] = {"museum": 0.0}

    def __init__(self) -> None:
        self.calls = 0

    def score(self, view: View, landmarks: Sequence[str]) -> list[LandmarkObservation]:
        self.calls += 1
        out = []
        for name in landmarks:
            hit = angular_distance(view.heading, self.facing.get(name, 90.0)) < 1
            out.append(LandmarkObservation(name, hit, 1.0 if hit else 0.0, view.heading))
        return out


def scripted_seen(node: int, heading: float, landmarks: Sequence[str]) -> list[tuple[str, int]]:
    """What :class:`ScriptedLandmarks` makes VELMA see, by hand: the direction (left, slightly
    left, ahead, slightly right, right) whose view faces the landmark's heading."""
    out = []
    for name in landmarks:
        for d, offset in enumerate((-90.0, -45.0, 0.0, 45.0, 90.0)):
            facing = ScriptedLandmarks.facing.get(name, 90.0)
            if angular_distance(heading + offset, facing) < 1:
                out.append((name, d))
    return out


def as_dataset(episodes, dataset):
    return [dataclasses.replace(e, metadata={**e.metadata, "dataset": dataset}) for e in episodes]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer("echo") as srv:
        yield srv


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("FLANEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(ablations, "_SAID", set())  # say-once warnings, said again per test


def forward_then_stop(req) -> str:
    """The navigation policy: ``forward`` at the first action, then ``stop``."""
    return "forward" if req.texts()[-1].endswith("\n1.") else "stop"


def run(server, city, episode, pool, agent, *, views=None, landmarks="clip", protocol="paper"):
    server.configure(forward_then_stop)

    async def go():
        model = make_model("fake-model", base_url=server.base_url, supports_logprobs=False)
        env = NavigationEnv(city, [episode], scheme="turns")
        row = await run_episode(
            env,
            agent,
            episode,
            seed=0,
            task_id="toy",
            model=model,
            task_episodes=pool,
            protocol=protocol,
            views=views if views is not None else SyntheticViews(city),
            landmarks=landmarks,
        )
        await model.aclose()
        return row

    return asyncio.run(go())


def example_blocks(prompt: str) -> list[tuple[str, str]]:
    """``(instruction, navigation lines)`` of each complete example block of a prompt."""
    blocks = []
    for part in prompt.split("Navigation Instructions:\n")[1:]:
        head, _, lines = part.partition("\nAction Sequence:\n")
        if lines.endswith("\n\n"):
            blocks.append((head.strip('"'), lines.rstrip("\n")))
    return blocks


# ---------------------------------------------------------------------- the decision
def test_traffic_flow_decision_is_velmas_by_hand():
    scores = {
        ("ahead", "car"): (3.0, 1.0, 0.0),  # counts: with += rear, against += front
        ("behind", "car"): (2.0, 0.5, 1.0),  # counts: against += rear, with += front
        ("ahead", "truck"): (5.0, 5.0, 6.0),  # seen from the side: counts for nothing
        ("behind", "bus"): (0.1, 4.0, 3.0),  # counts
    }
    flow, with_flow, against_flow = flow_of_traffic(scores)
    assert flow == "with"
    assert with_flow == pytest.approx(3.0 + 0.5 + 4.0) and against_flow == pytest.approx(3.1)
    assert flow_of_traffic({("behind", "bus"): (2.0, 1.0, 0.0)}) == ("against", 1.0, 2.0)
    assert flow_of_traffic({("behind", "bus"): (1.0, 2.0, 0.0)}) == ("with", 2.0, 1.0)
    # VELMA's default: equal sums, or no vehicle that counts, are "against"
    assert flow_of_traffic({("ahead", "car"): (1.0, 1.0, 0.0)}) == ("against", 1.0, 1.0)
    assert flow_of_traffic({("ahead", "car"): (1.0, 2.0, 2.0)}) == ("against", 0.0, 0.0)
    assert flow_of_traffic({}) == ("against", 0.0, 0.0)
    assert orientation_texts("bus") == (
        "the rear view of a bus",
        "the front view of a bus",
        "a bus from the side",
    )
    assert traffic_line("against") == "You are aligned against the flow of the traffic."


def test_traffic_flow_crops_the_best_box_of_each_vehicle_ahead_and_behind():
    city = toy_city()
    scheme = TurnsScheme(city.graph)
    x4, dead_end = city.graph.index("X4"), city.graph.index("D")
    heads = sorted(city.graph.out_headings(x4).tolist())
    ahead, behind = start_headings(scheme, x4, 10.0)  # snapped to the street north
    assert ahead == heads[0] and angular_distance(behind, ahead + 180) < 5 and behind in heads
    only = float(city.graph.out_headings(dead_end)[0])
    assert start_headings(scheme, dead_end, 100.0) == (only, only)  # one street: both ways
    boxes = {
        round(ahead) % 360: [
            Detection((0, 0, 10, 10), "car", 0.9),
            Detection((0, 0, 20, 10), "car", 0.6),  # not the best car: never scored
            Detection((0, 0, 30, 10), "bus", 0.7),
            Detection((0, 0, 50, 10), "kiosk", 0.99),  # not a vehicle
            Detection((0, 0, 60, 10), "truck", 0.3),  # below the detector's threshold
        ],
        round(behind) % 360: [Detection((0, 0, 40.2, 9.5), "truck", 0.8)],
    }
    by_width = {  # (rear, front, side) of each crop, by its width in pixels
        10: (3.0, 1.0, 0.0),  # the car ahead: with += 3, against += 1
        20: (0.0, 9.0, 0.0),  # would turn the flow against, were it scored
        30: (1.0, 2.0, 5.0),  # the bus ahead, from the side: nothing
        41: (0.5, 0.2, 0.1),  # the truck behind: against += 0.5, with += 0.2
    }
    asked: list[tuple[int, int, tuple[str, ...]]] = []

    def score(crop: Image.Image, texts: Sequence[str]) -> list[float]:
        asked.append((*crop.size, tuple(texts)))
        return list(by_width[crop.size[0]])

    detector = ScriptedDetector(boxes)
    flow = TrafficFlow(detector, score, ColourViews(), size=(80, 40))
    record = flow.predict(scheme, x4, 10.0)
    assert asked == [
        (10, 10, orientation_texts("car")),
        (30, 10, orientation_texts("bus")),
        (41, 10, orientation_texts("truck")),
    ]
    assert record["flow"] == "with" and record["detector"] == "scripted"
    assert record["with_flow"] == pytest.approx(3.2) and record["against_flow"] == 1.5
    assert [(v["view"], v["vehicle"], v["counted"]) for v in record["vehicles"]] == [
        ("ahead", "car", True),
        ("ahead", "bus", False),
        ("behind", "truck", True),
    ]
    assert record["vehicles"][0]["box"] == [0, 0, 10, 10]
    assert record["headings"] == {"ahead": round(ahead, 2), "behind": round(behind, 2)}
    assert asyncio.run(flow.aline(scheme, x4, 10.0)) == traffic_line("with")
    assert len(asked) == 3  # a start is predicted once
    nothing = TrafficFlow(ScriptedDetector({}), score, ColourViews()).predict(scheme, x4, 10.0)
    assert nothing["flow"] == "against" and nothing["vehicles"] == []  # VELMA's default
    assert "finds no car, truck or bus" in nothing["reason"]


# ---------------------------------------------------------------------- standardisation
class HandBackend:
    """Every text embeds as ``(1, 0)``; images are not needed."""

    name = "hand"

    def embed_texts(self, texts):
        return np.tile(np.array([1.0, 0.0], np.float32), (len(texts), 1))

    def embed_images(self, images):
        return np.tile(np.array([0.6, 0.8], np.float32), (len(images), 1))


def test_clip_standardises_with_the_sample_std_under_paper():
    reference = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])  # similarities 1, 0, 0.6
    mean = 1.6 / 3
    squares = (1 - mean) ** 2 + mean**2 + (0.6 - mean) ** 2
    population = CLIPLandmarks(HandBackend()).fit_embeddings(reference)
    sample = CLIPLandmarks(HandBackend(), ddof=1).fit_embeddings(reference)
    assert population.ddof == 0  # the default is unchanged
    assert population.stats("a bank") == pytest.approx((mean, math.sqrt(squares / 3)))
    assert sample.stats("a bank") == pytest.approx((mean, math.sqrt(squares / 2)))
    image = Image.new("RGB", (4, 4))
    z = (0.6 - mean) / math.sqrt(squares / 2)
    assert sample.zscores(image, ["a bank"])[0] == pytest.approx(z, rel=1e-5)
    with pytest.raises(FlaneurError, match="ddof must be 0"):
        CLIPLandmarks(HandBackend(), ddof=2)


# ---------------------------------------------------------------------- the agent
def random_clip(city) -> CLIPLandmarks:
    """flaneur's numpy stand-in for CLIP, standardised on a few synthetic views."""
    views = SyntheticViews(city)
    reference = [views.view(n, h, fov=60.0) for n in ("X4", "T3", "F5") for h in (0.0, 120.0)]
    return CLIPLandmarks(RandomProjectionBackend(), reference, ddof=1)


def test_paper_touchdown_traffic_line_at_step_zero_only(server, caplog):
    city = toy_city()
    eps = as_dataset(toy_episodes(), "touchdown")
    scorer = random_clip(city)
    car = ScriptedDetector({None: [Detection((100, 200, 300, 330), "car", 0.9)]})
    agent = VelmaAgent(scorer=scorer, detector=car, extract="rules")
    row = run(server, city, eps[1], eps, agent)
    first, second = row["records"][0], row["records"][1]
    traffic = first["traffic_flow"]
    assert row["actions"] == ["forward", "stop"] and traffic["detector"] == "scripted"
    cars = traffic["vehicles"]
    assert [v["view"] for v in cars] == ["ahead", "behind"] and cars[0]["vehicle"] == "car"
    scores = {(v["view"], v["vehicle"]): (v["rear"], v["front"], v["side"]) for v in cars}
    assert traffic["flow"] == flow_of_traffic(scores)[0]
    # VELMA's get_score: the crop's cosine similarity to the text times exp(2.6592)
    start = city.graph.index(eps[1].start_node)
    ahead = traffic["headings"]["ahead"]
    view = SyntheticViews(city).view(start, ahead, fov=60.0, size=DEFAULT_SIZE)
    backend = scorer.backend
    image = backend.embed_images([view.image.crop((100, 200, 300, 330))])[0]
    rear = backend.embed_texts(["the rear view of a car"])[0]
    assert cars[0]["rear"] == pytest.approx(float(image @ rear) * math.exp(2.6592), rel=1e-5)
    line = traffic_line(traffic["flow"])
    assert first["observation"].startswith(line + " There is a 4-way intersection.")
    assert TRAFFIC not in second.get("observation", "") and "traffic_flow" not in second
    episode = second["prompt"].split(f'"{eps[1].instruction}"\nAction Sequence:\n')[-1]
    assert episode.startswith(line) and episode.count(TRAFFIC) == 1
    # the examples: the traffic line at their own start, as VELMA's train instances have it
    blocks = example_blocks(second["prompt"])
    assert len(blocks) == 2 and all(lines.startswith("You are aligned ") for _, lines in blocks)

    ours = run(
        server, city, eps[1], eps, VelmaAgent(scorer=scorer, detector=car), protocol="flaneur"
    )
    assert "traffic_flow" not in ours["records"][0] and TRAFFIC not in ours["records"][0]["prompt"]
    m2s = as_dataset(toy_episodes(), "map2seq")
    theirs = run(server, city, m2s[1], m2s, VelmaAgent(scorer=scorer, detector=car, k_shot=0))
    assert "traffic_flow" not in theirs["records"][0]

    none = ScriptedDetector({})
    with caplog.at_level(logging.WARNING, logger="flaneur.agents.velma"):
        rows = [
            run(server, city, eps[0], eps, VelmaAgent(scorer=scorer, k_shot=0, detector=d))
            for d in (None, None, none, none)
        ]
    said = [r.getMessage() for r in caplog.records if "traffic" in r.getMessage()]
    assert len(said) == 2 and all("\n" not in s for s in said)  # once per reason in a run
    assert "no detector finds its vehicles (--option velma.detector=" in said[0]
    assert "finds no car, truck or bus" in said[1]
    assert rows[0]["records"][0]["traffic_flow"]["reason"].startswith("no detector")
    assert rows[2]["records"][0]["traffic_flow"]["flow"] == "against"  # VELMA's default
    assert all(TRAFFIC not in r["records"][0]["observation"] for r in rows[:2])
    assert all(r["records"][0]["observation"].startswith(traffic_line("against")) for r in rows[2:])
    with pytest.raises(FlaneurError, match=r"velma\.detector_weights=PATH"):
        VelmaAgent.check_setup({"detector": "owlvit"}, None)  # before the first episode
    with pytest.raises(FlaneurError, match="finds no vehicles"):
        VelmaAgent.check_setup({"detector": "scene"}, None)


def test_paper_examples_are_seen_by_the_view_observer(server):
    city = toy_city()
    eps = as_dataset(toy_episodes(), "map2seq")
    scheme = TurnsScheme(city.graph)
    scorer = ScriptedLandmarks()
    row = run(server, city, eps[0], eps, VelmaAgent(scorer=scorer, extract="rules"))
    picks = [eps[i] for i in example_draws(eps, eps, 0, 2, 1)]
    assert row["records"][0]["examples"] == [e.id for e in picks]
    blocks = example_blocks(row["records"][1]["prompt"])
    assert [instruction for instruction, _ in blocks] == [e.instruction for e in picks]
    for example, (_, lines) in zip(picks, blocks, strict=True):
        landmarks = filter_landmarks(rule_based_landmarks(example.instruction))
        assert lines == example_lines(scheme, city, example, landmarks, scripted_seen)
    assert any(" on your left." in lines for _, lines in blocks)  # seen facing south
    on_map = MapLandmarkObserver(city)  # what flaneur did before: the map sees none of them
    assert [lines for _, lines in blocks] != [
        example_lines(
            scheme, city, e, filter_landmarks(rule_based_landmarks(e.instruction)), on_map.seen
        )
        for e in picks
    ]
    # each example is seen once: a second agent only looks around its own steps
    before = scorer.calls
    again = run(server, city, eps[0], eps, VelmaAgent(scorer=scorer, extract="rules"))
    assert again["records"][1]["prompt"] == row["records"][1]["prompt"]
    assert scorer.calls - before == 5 * len(again["records"])


# ---------------------------------------------------------------------- the tiny models
@pytest.mark.skipif(not HAS_MODELS, reason=f"open_clip, torch or transformers missing ({EXTRA})")
def test_paper_velma_with_tiny_clip_and_owlvit_sees_traffic_with_the_sample_std(
    server, tiny_clip, tiny_owlvit
):
    # lazy: needs the vision extra
    from flaneur.perception.landmarks.reference import (
        build_reference,
        clip_backend,
        writable_folder,
    )

    city = toy_city()
    views = SyntheticViews(city)
    weights = str(tiny_clip.folder)
    made = build_reference(
        city, views, clip_backend("ViT-B-32", weights), model="ViT-B-32", weights=weights, size=6
    )
    made.save(writable_folder(city, made.meta["city"]["fingerprint"])[0])
    eps = as_dataset(toy_episodes(), "touchdown")
    options = {
        "clip_weights": weights,
        "detector": "owlvit",
        "detector_weights": str(tiny_owlvit.folder),
        "detector_threshold": 0.0,
        "extract": "rules",
    }
    VelmaAgent.check_setup(options, None)
    agent = VelmaAgent(**options)
    row = run(server, city, eps[1], eps, agent, views=views)
    assert isinstance(agent.observer, ViewLandmarkObserver)
    scorer = agent.observer.scorer
    assert scorer.ddof == 1 and scorer.reference == made.name
    text = scorer.backend.embed_texts(["picture of cafe"])[0]
    sims = made.embeddings @ text  # six reference views: the sample std is sqrt(6/5) larger
    assert scorer.stats("cafe")[1] == pytest.approx(np.std(sims, ddof=1), rel=1e-4)
    assert scorer.stats("cafe")[1] / np.std(sims) == pytest.approx(math.sqrt(6 / 5), rel=1e-4)
    first = row["records"][0]
    assert first["clip_reference"] == made.name
    traffic = first["traffic_flow"]
    assert traffic["detector"] == "owlvit" and traffic["vehicles"]
    scores = {
        (v["view"], v["vehicle"]): (v["rear"], v["front"], v["side"]) for v in traffic["vehicles"]
    }
    assert traffic["flow"] == flow_of_traffic(scores)[0]
    assert first["observation"].startswith(traffic_line(traffic["flow"]))
    assert all(TRAFFIC not in r.get("observation", "") for r in row["records"][1:])

    flaneur = VelmaAgent(**options)
    run(server, city, eps[1], eps, flaneur, views=views, protocol="flaneur")
    assert flaneur.observer.scorer.ddof == 0  # the population std outside paper
