"""Every recipe of docs/extending.md works: its files are written to a temporary package,
its registration runs, and the extension is used the way the recipe says."""

from __future__ import annotations

import asyncio
import re
import sys
import textwrap
from pathlib import Path

import pytest

from flaneur.agents import AGENTS, make_agent
from flaneur.env import NavigationEnv, toy_city, toy_episodes
from flaneur.errors import FlaneurError
from flaneur.evaluate.episode import run_episode
from flaneur.metrics import METRIC_LABELS, batch_metrics, summarize
from flaneur.metrics import table as metric_table
from flaneur.tasks import load_task
from flaneur.tasks import registry as task_registry
from flaneur.views.registry import VIEWS, views_from_spec
from flaneur.world.builtin import build_city
from flaneur.world.sources import SOURCES as CITY_SOURCE_KINDS

DOC = Path(__file__).resolve().parents[1] / "docs/extending.md"
SECTIONS = ("agent", "city source", "task format", "metric", "view provider")


def recipes() -> dict[str, list[str]]:
    """``{section: [python blocks]}`` of the document."""
    text = DOC.read_text(encoding="utf-8")
    out: dict[str, list[str]] = {}
    for part in re.split(r"^## Add an? ", text, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        out[title.strip()] = re.findall(r"```python\n(.*?)```", body, flags=re.S)
    return out


@pytest.fixture
def recipe(tmp_path, monkeypatch):
    """Lay out a section's ``# file:`` blocks and run its ``# register`` blocks."""
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "my_flaneur" or m.startswith("my_flaneur.")]:
        monkeypatch.delitem(sys.modules, name)
    registered: list[str] = []

    def use(section: str) -> None:
        for block in recipes()[section]:
            first, _, rest = block.partition("\n")
            if first.startswith("# file: "):
                path = tmp_path / first.removeprefix("# file: ").strip()
                path.parent.mkdir(parents=True, exist_ok=True)
                (path.parent / "__init__.py").touch()
                path.write_text(textwrap.dedent(rest), encoding="utf-8")
            else:
                assert first == "# register", (
                    f"{section}: a block that is neither file nor register"
                )
                exec(compile(block, f"extending.md:{section}", "exec"), {})
        registered.append(section)

    yield use
    AGENTS.unregister("lefty")
    CITY_SOURCE_KINDS.unregister("square")
    VIEWS.unregister("sky")
    task_registry.TASKS.unregister("square-walks-v1")
    metric_table.ADDED.unregister("revisits")
    metric_table.BY_KEY.pop("revisits", None)
    METRIC_LABELS.pop("revisits", None)


def test_the_document_has_every_recipe():
    found = recipes()
    assert set(found) == set(SECTIONS)
    for section in SECTIONS:
        kinds = [b.partition("\n")[0] for b in found[section]]
        assert sum(k.startswith("# file: ") for k in kinds) == 1, section  # one new file
        assert kinds.count("# register") == 1, section  # one registration


def test_agent_recipe(recipe):
    recipe("agent")
    agent = make_agent("lefty", turns=1)
    city, episodes = toy_city(), toy_episodes()
    env = NavigationEnv(city, episodes, scheme="turns")
    row = asyncio.run(run_episode(env, agent, episodes[1], seed=0, task_id="toy"))
    assert row["termination"] == "stopped" and row["actions"][-1] == "stop"
    assert row["actions"].count("left") <= 1
    with pytest.raises(FlaneurError, match="option turns='abc' must be an integer"):
        make_agent("lefty", turns="abc")


def test_city_source_recipe(recipe):
    recipe("city source")
    city = build_city("square:80")
    assert city.graph.n_nodes == 4 and city.name == "square-80"
    assert city.places.names.tolist() == ["Corner Cafe"]
    assert city.graph.shortest_path(0, 2)[-1] == 2


def test_task_format_recipe(recipe, tmp_path):
    recipe("city source")
    recipe("task format")
    data = tmp_path / "data"
    data.mkdir()
    (data / "walks.csv").write_text(
        "w1,SW,90,NE,Walk to the corner cafe.\nw2,NW,180,SE,Go to the far corner.\n",
        encoding="utf-8",
    )
    city, episodes = load_task("square-walks-v1", data)
    assert [e.id for e in episodes] == ["w1", "w2"] and city.graph.n_nodes == 4


def test_metric_recipe(recipe):
    recipe("metric")
    city, episodes = toy_city(), toy_episodes()
    graph = city.graph
    paths = [graph.indices(["X4", "N1", "X4", "E1"]), graph.indices(["W1", "X4", "E1"])]
    rows = batch_metrics(city, episodes[3:4] + episodes[:1], paths)
    assert [r["revisits"] for r in rows] == [1, 0]
    assert summarize(rows)["overall"]["metrics"]["revisits"]["mean"] == 0.5
    assert METRIC_LABELS["revisits"] == "revisits"


def test_view_provider_recipe(recipe):
    recipe("view provider")
    provider = views_from_spec("sky", toy_city())
    north = provider.view("X4", 0.0, size=(16, 8))
    south = provider.view("X4", 180.0, size=(16, 8))
    again = provider.view("X4", 360.0, size=(16, 8))
    assert north.image.getpixel((0, 0))[2] > south.image.getpixel((0, 0))[2]
    assert (north.cached, again.cached) == (False, True) and north.source == "sky"
