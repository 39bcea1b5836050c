"""User task sets registered persistently: TOML files, ``$FLANEUR_TASKS``, entry points."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from task_fixtures import vln_row, write_jsonl
from typer.testing import CliRunner

from flaneur.cli import app
from flaneur.errors import DataError, FlaneurError
from flaneur.tasks import get_task, list_tasks, load_task, registry
from flaneur.tasks.user_registry import discover_task_sets, read_registry_file


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    """Drop the sets a test registers, and forget discovery, afterwards."""
    before = {name: registry.TASKS.get(name) for name in registry.TASKS.names()}
    yield
    for name in registry.TASKS.names():
        registry.TASKS.unregister(name)
    for name, spec in before.items():
        registry.TASKS.register(name, spec)
    discover_task_sets.__globals__["_discovered"] = False
    discover_task_sets.__globals__["_discovery_error"] = None


@pytest.fixture
def toml(data_dir: Path, tmp_path: Path) -> Path:
    """A registry file with two sets: a map2seq file (city given) and a detected one."""
    folder = tmp_path / "mysets"
    write_jsonl(folder / "routes.jsonl", [vln_row("r1", ["p0", "p1", "p2"])])
    path = folder / "tasks.toml"
    path.write_text(
        f"""
[[task]]
id = "my-routes-v1"
files = ["routes.jsonl"]
format = "map2seq"
city = "touchdown:{data_dir}"
description = "my held-out routes"
category = "mine"

[[task]]
id = "my-seeker-v1"
files = "{data_dir}/cityseeker/shanghai2/questions.json"
scheme = "nodes"
success_metric = "tce"
""",
        encoding="utf-8",
    )
    return path


def test_read_registry_file(toml: Path, data_dir: Path) -> None:
    routes, seeker = read_registry_file(toml)
    assert routes.id == "my-routes-v1" and routes.files == (str(toml.parent / "routes.jsonl"),)
    assert routes.city == f"touchdown:{data_dir.resolve()}" and routes.category == "mine"
    assert (routes.loader, routes.scheme, routes.success_metric) == ("map2seq", "turns", "tc")
    assert routes.origin == str(toml) and not routes.needs_data_dir
    # detected format and implied city; declared scheme and success metric win over defaults
    assert seeker.loader == "cityseeker" and seeker.city.startswith("cityseeker:")
    assert (seeker.scheme, seeker.success_metric) == ("nodes", "tce")


def test_single_table_file(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "one.toml"
    path.write_text(f'id = "solo-v1"\nfiles = ["{data_dir}/map2seq/seen/dev.json"]\n')
    (spec,) = read_registry_file(path)
    assert spec.id == "solo-v1" and spec.loader == "map2seq"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[task]]\nid = "x"\nfiles = ["r.jsonl"]\nbogus = 1\n', "task[0].bogus: unknown field"),
        ('[[task]]\nfiles = ["r.jsonl"]\n', "task[0].id: missing"),
        ('[[task]]\nid = "a b"\nfiles = ["r.jsonl"]\n', "task[0].id: 'a b' may hold only"),
        ('[[task]]\nid = "x"\nfiles = []\n', "task[0].files: expected a non-empty list"),
        (
            '[[task]]\nid = "x"\nfiles = ["r.jsonl"]\nscheme = "walk"\n',
            "task[0].scheme: 'walk' is not one of turns, headings, nodes",
        ),
        (
            '[[task]]\nid = "x"\nfiles = ["r.jsonl"]\nsuccess_metric = "spl"\n',
            "task[0].success_metric: 'spl' is not one of",
        ),
        (
            '[[task]]\nid = "x"\nfiles = ["r.jsonl"]\nformat = "csv"\n',
            "task[0].format: 'csv' is not one of",
        ),
        ('[[task]]\nid = "x"\nfiles = ["gone.jsonl"]\n', "task[0].format: not given, and files[0]"),
        ('[[task]]\nid = "x"\nfiles = ["r.jsonl"]\n', "task[0].city: not given"),
        (
            '[[task]]\nid = "x"\nfiles = ["r.jsonl"]\ncity = 3\n',
            "task[0].city: expected a non-empty string",
        ),
        ('[[task]\nid = "x"\n', "invalid TOML"),
        ('name = "x"\n', "no task set"),
    ],
)
def test_invalid_registry_names_file_and_field(tmp_path: Path, body: str, message: str) -> None:
    write_jsonl(tmp_path / "r.jsonl", [vln_row("r1", ["p0", "p1"])])
    path = tmp_path / "bad.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_registry_file(path)
    text = str(err.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text, text


def test_registered_sets_load_and_list_with_origin(toml: Path, data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["tasks", "ls", "--registry", str(toml), "--json"])
    assert result.exit_code == 0, result.output
    listed = {t["id"]: t for t in json.loads(result.stdout)["tasks"]}
    assert listed["my-routes-v1"]["origin"] == str(toml)
    assert listed["my-routes-v1"]["episodes"] == 1 and listed["my-routes-v1"]["status"] == "ok"
    assert listed["my-seeker-v1"]["episodes"] == 4  # no --data-dir needed: absolute files
    assert listed["map2seq-seen-dev-v1"]["status"] == "no data dir"
    assert listed["helsinki-needs-v1"]["origin"] == "built-in"
    city, (episode,) = load_task("my-routes-v1")
    assert city.name == "manhattan" and episode.category == "mine"


def test_id_taken_from_elsewhere_is_refused(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "clash.toml"
    path.write_text(f'id = "map2seq-seen-dev-v1"\nfiles = ["{data_dir}/map2seq/seen/dev.json"]\n')
    result = CliRunner().invoke(app, ["tasks", "ls", "--registry", str(path)])
    assert result.exit_code != 0
    assert "already registered (from built-in)" in str(result.exception)


def test_flaneur_tasks_variable(toml: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLANEUR_TASKS", str(toml.parent))  # a folder: its *.toml files
    discover_task_sets(force=True)
    assert get_task("my-routes-v1").origin == f"$FLANEUR_TASKS: {toml}"
    assert {"my-routes-v1", "my-seeker-v1"} <= {s.id for s in list_tasks()}
    monkeypatch.setenv("FLANEUR_TASKS", str(toml.parent / "nowhere.toml"))
    with pytest.raises(DataError, match=r"nowhere\.toml: \$FLANEUR_TASKS names a path"):
        discover_task_sets(force=True)
    with pytest.raises(DataError, match="FLANEUR_TASKS"):  # reported again on later lookups
        list_tasks()


def _install_package(site: Path, body: str) -> None:
    """A tiny installed distribution whose ``flaneur.tasks`` entry point is ``tinytasks:SETS``."""
    (site / "tinytasks.py").write_text(body, encoding="utf-8")
    info = site / "tinytasks-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinytasks\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[flaneur.tasks]\ntiny = tinytasks:SETS\n")


def test_entry_point_group(tmp_path: Path, data_dir: Path, monkeypatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install_package(
        site,
        (
            "from flaneur.tasks import TaskSpec\n"
            f"SETS = [TaskSpec(id='tiny-ep-v1', description='from a package', "
            f"city='touchdown:{data_dir}', files=('{data_dir}/map2seq/seen/dev.json',), "
            "loader='map2seq')]\n"
        ),
    )
    monkeypatch.syspath_prepend(str(site))
    discover_task_sets(force=True)
    spec = get_task("tiny-ep-v1")
    assert spec.origin == "entry point tiny (tinytasks:SETS)"
    city, (episode,) = load_task("tiny-ep-v1")
    assert episode.id == "5" and city.graph.n_nodes == 4
    sys.modules.pop("tinytasks", None)


def test_broken_entry_point_is_one_line(tmp_path: Path, monkeypatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install_package(site, "raise ImportError('tinytasks needs numpy 9')\n")
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(FlaneurError, match=r"entry point tiny .* failed to load: ImportError"):
        discover_task_sets(force=True)
    sys.modules.pop("tinytasks", None)


def test_run_and_report_on_a_registry_set(toml: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "run",
            "--agent",
            "oracle",
            "--tasks",
            "my-routes-v1",
            "--registry",
            str(toml),
            "--out",
            str(out),
            "--json",
            "--progress",
            "none",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["config"]["registries"] == [str(toml)]
    assert summary["task_sets"]["my-routes-v1"]["origin"] == str(toml)
    assert summary["runs"][0]["summary"]["overall"]["metrics"]["tc"]["mean"] == 1.0
    registry.TASKS.unregister("my-routes-v1")  # a new process: the report reads the run's registry
    result = runner.invoke(app, ["report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert "<svg" in Path(json.loads(result.stdout)["report"]).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "my set"}, "task id 'my set' may hold only"),
        ({"loader": "csv"}, "loader 'csv' is not one of episodes, map2seq"),
        ({"scheme": "walk"}, "scheme 'walk' is not one of turns, headings, nodes"),
        ({"success_metric": "spl"}, "success metric 'spl' is not one of tc, tcp"),
    ],
)
def test_register_task_checks_declared_facts(changes: dict, message: str) -> None:
    from flaneur.tasks import TaskSpec, register_task

    fields = {
        "id": "ok-v1",
        "description": "",
        "city": "helsinki",
        "files": ("/x.jsonl",),
        "loader": "episodes",
        **changes,
    }
    with pytest.raises(FlaneurError, match=message):
        register_task(TaskSpec(**fields))
