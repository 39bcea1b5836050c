"""Hiro, V-IRL's intentional explorer: the matching, junction and enter rules with
hand-computed values, active detection with a stub detector, whole episodes on the toy city
(offline and through a fake model), and a goal-blind run."""

from __future__ import annotations

import asyncio
import hashlib
import math

import numpy as np
import pytest
from PIL import Image

from flaneur.agents import AGENTS, make_agent
from flaneur.agents.hiro import HiroAgent, HiroEyes, HiroOptions, rules
from flaneur.agents.hiro.thinking import parse_enter, parse_place_type, parse_road
from flaneur.agents.options import check_requirements
from flaneur.env import NavigationEnv
from flaneur.env.toy import toy_graph
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.models import make_model
from flaneur.options import check_options
from flaneur.perception.detection import Detection, Detector
from flaneur.perception.matching import match_box
from flaneur.perception.ocr import TextBox
from flaneur.services.nearby import NearbyResult
from flaneur.tasks.episode import Episode
from flaneur.testing import FakeOpenAIServer
from flaneur.testing.goal_blind import run_goal_blind
from flaneur.views.base import View
from flaneur.world.city import City
from flaneur.world.places import Places

W = 640
FOCAL = (W / 2) / math.tan(math.radians(30.0))  # 554.26 px for a 60 degree view
SIGN_ELEVATION = math.atan((W / 2 - 215) / FOCAL)  # sign centre at y = 215 in a level view


class BagOfWords:
    """A tiny deterministic stand-in for the sentence embedder (hashed words, unit vectors)."""

    def embed(self, texts):
        texts = [texts] if isinstance(texts, str) else list(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in "".join(c if c.isalnum() else " " for c in text.lower()).split():
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def similarity(self, a, b):
        return self.embed(list(a)) @ self.embed(list(b)).T


@pytest.fixture(autouse=True)
def offline_embedder(monkeypatch):
    """Aria's type and rating steps use the bag of words too (no model download)."""
    import flaneur.agents.virl.aria as aria
    import flaneur.agents.virl.rating as rating

    bag = BagOfWords()
    monkeypatch.setattr(aria, "embedder", lambda: bag)
    monkeypatch.setattr(rating, "embedder", lambda: bag)
    return bag


# ---------------------------------------------------------------- box to place (20 m, +-5)
def city_with(places: list[tuple[str, float, float, str]]) -> City:
    """The toy graph with places at (bearing, distance) from X4."""
    graph = toy_graph()
    x0, y0 = graph.xy[graph.index("X4")]
    records = []
    for pid, bearing, dist, category in places:
        x = x0 + dist * math.sin(math.radians(bearing))
        y = y0 + dist * math.cos(math.radians(bearing))
        lat, lng = graph.projection.inverse(x, y)
        records.append(
            {"id": pid, "name": pid, "lat": float(lat), "lng": float(lng), "categories": [category]}
        )
    return City(name="t", graph=graph, places=Places.from_records(records), source="test")


def view_at(node: str, heading: float) -> View:
    return View(image=Image.new("RGB", (W, W)), node=node, heading=heading, fov=60.0)


def test_box_span_by_hand():
    # a box from the centre column to 96 px right spans 90 + atan(96 / 554.26) = 99.83 deg
    view = view_at("X4", 90.0)
    assert view.bearing_of_x(320) == pytest.approx(90.0)
    assert view.bearing_of_x(416) == pytest.approx(90.0 + math.degrees(math.atan(96 / FOCAL)))
    assert math.degrees(math.atan(96 / FOCAL)) == pytest.approx(9.826, abs=1e-3)


def test_match_within_20_m_and_5_degrees():
    # span [90, 99.83]; widened by 5: [85, 104.83]
    c = city_with(
        [
            ("inside-margin", 87.0, 15.0, "cafe"),  # 3 deg left of the span: matches
            ("outside", 80.0, 10.0, "cafe"),  # nearer, but 10 deg left: no
            ("too-far", 95.0, 25.0, "cafe"),  # inside the span, 25 m: no
            ("other-type", 95.0, 5.0, "bank"),  # nearest, inside, other type: no
        ]
    )
    cafes = c.places.with_category("cafe")
    view = view_at("X4", 90.0)
    box = (320, 100, 416, 200)
    hit = match_box(c, view, box, radius_m=20.0, candidates=cafes, margin_deg=5.0)
    assert hit.matched and hit.name == "inside-margin"
    assert hit.distance_m == pytest.approx(15.0, abs=0.01)
    # without the margin the place 3 deg outside is lost, and 25 m is beyond the radius
    plain = match_box(c, view, box, radius_m=20.0, candidates=cafes)
    assert not plain.matched
    # the right edge: 104.83 is in, 105.5 is out
    assert rules.heading_in_span(104.8, 90.0, 99.83)
    assert not rules.heading_in_span(105.5, 90.0, 99.83)
    assert rules.heading_in_span(356.0, 0.0, 10.0) and not rules.heading_in_span(354.0, 0.0, 10.0)


def test_views_per_step():
    assert rules.view_headings(90.0, start=True) == [90.0, 150.0, 210.0, 270.0, 330.0, 30.0]
    assert rules.view_headings(30.0, start=False) == [330.0, 30.0, 90.0]


# ---------------------------------------------------------------- active detection
class BearingDetector(Detector):
    """A stub detector: each object spans compass bearings, with one box and score in a
    60 degree view and another (tighter, or absent, or of another label) in a zoomed one.

    Objects: ``(label, first span, first score, zoomed label, zoomed span, zoomed score)``;
    a box is drawn at rows 300-340 (centred: zooming keeps the pitch level).
    """

    name = "bearing-stub"

    def __init__(self, objects) -> None:
        super().__init__(threshold=0.35, cache_items=0)
        self.objects = objects
        self.batches: list[list[float]] = []  # the fov of every view of each batch

    def _box(self, view, span):
        rel = [(b - view.heading + 180.0) % 360.0 - 180.0 for b in span]
        if max(abs(r) for r in rel) >= view.fov / 2.0:
            return None
        x0, x1 = (view.size[0] / 2 + view.focal_px * math.tan(math.radians(r)) for r in rel)
        return (x0, 300.0, x1, 340.0)

    def _detect_many(self, views, labels):
        self.batches.append([v.fov for v in views])
        return [self._detect(v, labels) for v in views]

    def _detect(self, view, labels):
        zoomed = view.fov < rules.VIEW_FOV
        out = []
        for label, span, score, zlabel, zspan, zscore in self.objects:
            if zoomed:
                label, span, score = zlabel, zspan, zscore
            box = self._box(view, span) if span is not None else None
            if box is not None and label in labels:
                out.append(Detection(box, label, score))
        return out


def active_case():
    """Places around X4 and a stub that sees three cafe signs in views 90 and 30 from X4.

    * sign 1 (view 90): a loose first box over 86-99 degrees (0.40), a tight zoomed box
      over 94-98 (0.60). The loose box's nearest cafe is ``wrong`` (84 deg, 8 m, inside the
      5 degree margin); the zoomed box points at ``right`` (96 deg, 15 m) only.
    * sign 2 (view 30): 40-45 degrees (0.50); the zoomed view sees a restaurant there, not a
      cafe: not confirmed (``ghost`` at 42 deg is matched by the single pass only).
    * sign 3 (view 90): 0.20, below the proposal threshold: no zoomed view.
    """
    c = city_with(
        [
            ("wrong", 84.0, 8.0, "cafe"),
            ("right", 96.0, 15.0, "cafe"),
            ("ghost", 42.0, 12.0, "cafe"),
            ("faint", 110.0, 10.0, "cafe"),
        ]
    )
    stub = BearingDetector(
        [
            ("cafe", (86.0, 99.0), 0.40, "cafe", (94.0, 98.0), 0.60),
            ("cafe", (40.0, 45.0), 0.50, "restaurant", (40.0, 45.0), 0.90),
            ("cafe", (108.0, 112.0), 0.20, "cafe", (108.0, 112.0), 0.90),
        ]
    )
    views = SignViews(c)
    return c, stub, views


def test_active_detection_confirms_and_matches_the_zoomed_box():
    c, stub, views = active_case()
    eyes = HiroEyes(c, views, detector=stub, ocr=SignOCR(c), embedder=BagOfWords())
    assert eyes.active  # on by default
    x4 = c.graph.index("X4")
    per_view = eyes.look_now(x4, [90.0, 30.0], ["cafe", "restaurant"])
    # sign 1 confirmed and matched with its zoomed box; sign 2 not confirmed; sign 3 unasked
    (hit,), none = per_view
    assert none == []
    assert hit.match.name == "right" and hit.heading == 90.0
    assert hit.detection.score == 0.60  # the zoomed view's box
    # zoom rule: the loose box is 554.26 x (tan 9 + tan 4) = 126.5 px wide, so the zoomed
    # view is 60 x 4 x 126.5 / 640 = 47.4 degrees wide, re-aimed at its centre (x = 344.5,
    # 90 + atan(24.5 / 554.26) = 92.53 degrees); sign 2's box (5 deg, 50.8 px) gets 30
    first = stub._box(views.view(x4, 90.0), (86.0, 99.0))
    assert first[2] - first[0] == pytest.approx(126.5, abs=0.1)
    assert stub.batches == [[60.0, 60.0], [pytest.approx(47.4, abs=0.1), 30.0]]
    zoomed_view = View(Image.new("RGB", (W, W)), "X4", 92.53, 0.0, stub.batches[1][0])
    assert hit.detection.box == pytest.approx(stub._box(zoomed_view, (94.0, 98.0)), abs=0.5)
    # 2 first views and 2 zoomed ones (one batch), all counted
    assert eyes.zoom_views == 2 and eyes.views_taken == 4


def test_single_pass_without_active_detection():
    c, stub, views = active_case()
    eyes = HiroEyes(c, views, detector=stub, ocr=SignOCR(c), embedder=BagOfWords(), active=False)
    x4 = c.graph.index("X4")
    (loose,), (ghost,) = eyes.look_now(x4, [90.0, 30.0], ["cafe", "restaurant"])
    # the old pass: the detector's threshold (0.35), the first box matched in the first view
    assert loose.match.name == "wrong" and loose.detection.score == 0.40
    assert ghost.match.name == "ghost"
    assert stub.batches == [[60.0, 60.0]]
    assert eyes.zoom_views == 0 and eyes.views_taken == 2


def test_active_option_checked():
    assert HiroOptions().active is True
    assert check_options("hiro", HiroOptions, {"active": False}) == {"active": False}
    with pytest.raises(FlaneurError) as err:
        check_options("hiro", HiroOptions, {"active": "maybe"})
    assert str(err.value) == "agent 'hiro': option active='maybe' must be true/false"


# ---------------------------------------------------------------- junction rule
def test_junction_rule_by_hand():
    heads = [0.0, 92.0, 178.0, 268.0]  # roads north, east, south, west
    assert rules.road_back(heads, 0.0) == 2  # arrived walking north: came from the south
    assert rules.road_back(heads, None) is None
    assert rules.road_choice_needed(4, start=False)
    assert not rules.road_choice_needed(2, start=False)
    assert rules.road_choice_needed(2, start=True)
    assert rules.road_options(4, 2) == [0, 1, 3]
    # text fits 0.5, 0.3, 0.2; visits 2, 0, 0: 0.5 - 2 x 0.2 = 0.1, 0.3 + 0.1, 0.2 + 0.1
    values = rules.road_values([0.5, 0.3, 0.2], [2, 0, 0])
    assert values.tolist() == pytest.approx([0.1, 0.4, 0.3])
    assert int(np.argmax(values)) == 1
    # two roads and no choice: the one closest to straight on (heading 10: road 0 at 0 deg)
    assert rules.momentum_road([0.0, 178.0], 10.0) == 0


# ---------------------------------------------------------------- enter decision
def test_enter_decision_by_hand(monkeypatch):
    import flaneur.agents.virl.aria as aria

    class Half:
        def similarity(self, a, b):
            return np.full((len(a), len(b)), 0.5)

    monkeypatch.setattr(aria, "embedder", lambda: Half())
    c = city_with([("Kahvila", 0.0, 10.0, "cafe"), ("Ravintola", 0.0, 10.0, "restaurant")])
    types = {"cafe": 0.9, "restaurant": 0.45}

    def rating(row: int, category: str) -> float:
        result = NearbyResult(row, c.places.names[row], (category,), 10.0, 0.0, 1.0)
        return aria.rate_offline(c, "I want a coffee.", types, result)["rating"]

    # 10 x (0.55 x 1 + 0.2 x 0.5 + 0.15 x (1 - 10 / 500) + 0.1 x 1 / 4) = 8.22
    assert rating(0, "cafe") == pytest.approx(8.22, abs=0.01)
    # type fit 0.45 / 0.9 = 0.5: 10 x (0.275 + 0.1 + 0.147 + 0.025) = 5.47
    assert rating(1, "restaurant") == pytest.approx(5.47, abs=0.01)
    assert rules.should_enter(8.22) and not rules.should_enter(5.47)
    assert rules.should_enter(6.0, enter_min=6.0)
    assert not rules.should_enter(8.22, name_similarity=0.79)
    assert rules.should_enter(8.22, name_similarity=0.8)


def test_parsers_are_lenient():
    assert parse_place_type('Sure: {"place_type": "Museum"}') == "museum"
    assert parse_place_type("nothing useful") is None
    assert parse_enter('```json\n{"action": "enter_place()"}\n```') is True
    assert parse_enter('{"action": "continual_find()"}') is False
    assert parse_enter("") is None
    assert parse_road('{"idx": "1"}', 2) == 0
    assert parse_road("none", 2) is None


# ---------------------------------------------------------------- whole episodes
class SignViews:
    """Views of the toy city whose pixels differ by viewpoint and camera (for the caches)."""

    name = "signs"

    def __init__(self, city) -> None:
        self.city = city
        self.calls = 0

    def view(self, node, heading, *, fov=60.0, size=(W, W), pitch=0.0):
        self.calls += 1
        node_id = str(self.city.graph.ids[int(node)])
        key = f"{node_id}:{heading:.2f}:{pitch:.2f}:{fov:.2f}"
        seed = int(hashlib.md5(key.encode()).hexdigest()[:6], 16)
        colour = (seed & 255, (seed >> 8) & 255, (seed >> 16) & 255)
        return View(Image.new("RGB", size, colour), node_id, float(heading), pitch, fov)


class SignOCR:
    """Reads the name of every named place within 120 m inside the view, where it lies.

    A sign is seen 10.7 degrees above the horizon (pixels 200-230 of a level 60 degree view)
    and ``300 / distance`` px wide at that focal length; other cameras (a zoomed, re-aimed
    view) see it where their own geometry puts it.
    """

    def __init__(self, city) -> None:
        self.city = city
        self.params = {"sign-ocr": True}

    def read(self, view):
        g, places = self.city.graph, self.city.places
        here = g.xy[g.index(view.node)]
        out = []
        for row in range(len(places)):
            name = str(places.names[row])
            delta = places.xy[row] - here
            dist = float(np.hypot(*delta))
            bearing = math.degrees(math.atan2(delta[0], delta[1])) % 360.0
            rel = (bearing - view.heading + 180.0) % 360.0 - 180.0
            if not name or dist > 120.0 or abs(rel) > min(28.0, view.fov / 2.0 - 2.0):
                continue
            f = view.focal_px
            x = view.image.size[0] / 2 + f * math.tan(math.radians(rel))
            half = max(4.0, 300.0 / max(dist, 1.0)) * f / FOCAL
            y = view.image.size[1] / 2 - f * math.tan(SIGN_ELEVATION - math.radians(view.pitch))
            h = 15.0 * f / FOCAL
            corners = ((x - half, y - h), (x + half, y - h), (x + half, y + h), (x - half, y + h))
            out.append(TextBox(name, corners, 0.9))
        return out


def episode(text: str, start: str = "W2", heading: float = 90.0, **kw) -> Episode:
    return Episode(
        id=kw.pop("id", "toy-hiro"),
        city="toy",
        instruction=text,
        start_node=start,
        start_heading=heading,
        goal_nodes=kw.pop("goals", ("D",)),
        max_steps=kw.pop("max_steps", 20),
        category=kw.pop("category", "basic_poi"),
        **kw,
    )


def hiro(city, **options) -> HiroAgent:
    return HiroAgent(embedder=BagOfWords(), ocr=SignOCR(city), **options)


def run(city, agent, ep, *, model=None, guard=False):
    env = NavigationEnv(city, [ep], scheme="headings")
    views = SignViews(city)
    if not guard:
        return asyncio.run(
            run_episode(env, agent, ep, seed=0, task_id="toy", views=views, model=model)
        )
    return run_goal_blind(env, agent, ep, task_id="toy", views=views)


def test_registered_and_needs_views(city):
    assert AGENTS["hiro"] is HiroAgent
    assert isinstance(make_agent("hiro"), HiroAgent)
    with pytest.raises(FlaneurError, match="needs street-level views"):
        check_requirements("hiro", HiroAgent, scheme="headings", has_model=False, has_views=False)
    with pytest.raises(FlaneurError, match="add --llm"):
        check_requirements(
            "hiro",
            HiroAgent,
            scheme="headings",
            has_model=False,
            has_views=True,
            options={"road_choice": "vlm"},
        )


def test_finds_and_enters_the_museum(city):
    row = run(city, hiro(city), episode("Please find the nearest museum."))
    assert row["termination"] == "stopped"
    assert row["path"] == ["W2", "W1", "X4", "E1", "T3", "E3", "D"]
    last = row["records"][-1]
    assert "Sea Museum" in last["thoughts"] and last["judged"][0]["enter"]
    # views: the detection views and the zoomed ones (active detection, on by default)
    first, second = (r["views"] - r.get("zoom_views", 0) for r in row["records"][:2])
    assert (first, second) == (6, 3)
    assert sum(r.get("zoom_views", 0) for r in row["records"]) > 0
    # at X4 (4 roads) and T3 (3 roads) he chose by the signs along each road
    thoughts = [r["thoughts"] for r in row["records"]]
    assert thoughts[2].startswith("junction") and thoughts[4].startswith("junction")
    assert thoughts[3] == "keeps his heading"


def test_active_false_is_the_single_pass(city, monkeypatch):
    """``active=false`` walks as before (one pass, 6 then 3 views a step, nothing zoomed);
    on the toy city active detection confirms the same signs and takes the same path."""
    ep = episode("Please find the nearest museum.")
    calls: list[bool] = []
    look_now = HiroEyes.look_now

    def spy(self, node, headings, types):
        calls.append(self.active)
        return look_now(self, node, headings, types)

    monkeypatch.setattr(HiroEyes, "look_now", spy)
    single = run(city, hiro(city, active=False), ep)
    assert set(calls) == {False}
    assert single["path"] == ["W2", "W1", "X4", "E1", "T3", "E3", "D"]
    assert [r["views"] for r in single["records"]][:2] == [6, 3]
    assert all(r.get("zoom_views", 0) == 0 for r in single["records"])  # 0: left out
    active = run(city, hiro(city), ep)
    assert active["path"] == single["path"]
    assert sum(r.get("zoom_views", 0) for r in active["records"]) > 0


def test_never_reads_the_goal(city):
    ep = episode("Please find the nearest museum.")
    seen = run(city, hiro(city), ep)
    blind = run(city, hiro(city), ep, guard=True)
    assert blind["path"] == seen["path"]


def test_rejects_a_place_below_enter_min_and_walks_back_at_the_end(city):
    # nothing rates 9.5: he never enters, and at the end walks back to the museum
    row = run(city, hiro(city, enter_min=9.5), episode("Please find the nearest museum."))
    assert row["termination"] == "stopped"
    assert row["path"][-1] == "D"
    assert row["records"][-1]["thoughts"].startswith("budget")


def test_ordered_needs_enter_the_first_then_look_for_the_second(city):
    text = "Please find the nearest cafe and then the nearest museum, in order."
    ep = episode(text, start="W1", goals=("X4", "D"), metadata={"ordered": True})
    row = run(city, hiro(city), ep)
    assert row["termination"] == "stopped" and row["path"][-1] == "D"
    assert any(j["place"] == "Cafe Aalto" and j["enter"] for j in row["records"][1]["judged"])


class ScriptedHiro:
    """The fake model: names the type, declines the first place, picks road 1 at junctions
    (unparseable the first time), then accepts."""

    def __init__(self) -> None:
        self.roads = 0
        self.enters = 0

    def __call__(self, request):
        text = request.texts("user")[-1]
        if "What type of place" in text:
            return '{"place_type": "museum"}'
        if "Should Hiro enter" in text:
            self.enters += 1
            return '{"action": "enter_place()", "reason": "a museum"}'
        if "Which road" in text:
            self.roads += 1
            return "I cannot tell." if self.roads == 1 else '{"idx": 1, "reason": "signs"}'
        return "?"


def test_llm_path_through_the_fake_server(city):
    policy = ScriptedHiro()
    with FakeOpenAIServer(policy) as server:
        model = make_model("fake-model", base_url=server.base_url)
        row = run(city, hiro(city), episode("I want to see old ships."), model=model)
        images = sum(
            1
            for r in server.requests
            for m in r.messages
            if isinstance(m.get("content"), list)
            for part in m["content"]
            if part.get("type") == "image_url"
        )
    records = row["records"]
    assert records[0]["types_by"] == "llm" and records[0]["place_types"] == {"museum": 1.0}
    assert policy.roads >= 1 and images >= 2  # one view per road went to the model
    # the unparseable road reply is counted and the OCR choice takes over
    assert sum(r.get("parse_failures", 0) for r in records) >= 1
    assert row["termination"] == "stopped" and row["path"][-1] == "D"
    assert policy.enters == 1


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("hiro.road_choice=vlm", "road_choice=vlm needs a vision-language model: add --llm"),
        ("hiro.active=maybe", "agent 'hiro': option active='maybe' must be true/false"),
    ],
)
def test_console_script_errors_are_one_line(tmp_path, option, message):
    import os
    import subprocess
    import sys
    from pathlib import Path

    flaneur = Path(sys.executable).with_name("flaneur")
    args = ["run", "--agent", "hiro", "--tasks", "helsinki-needs-v1", "--out", str(tmp_path)]
    args += ["--option", option, "--views", "synthetic"]
    env = {"FLANEUR_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    if "PYTHONPATH" in os.environ:  # the sources under test (a worktree), not the install's
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    done = subprocess.run(
        [str(flaneur), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode != 0 and done.stderr.strip().count("\n") == 0, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
