"""The run view's research tools: per-agent intervals, filters, totals, export, charts,
glossary and the comparison of runs."""

from __future__ import annotations

import csv
import io
import json
import math

from pytest import approx

from flaneur.evaluate.runlog import read_rows, row_success
from flaneur.metrics import METRICS
from flaneur.report.run_report import compare_runs, load_run
from flaneur.report.tables import paired_cells
from flaneur.web.episode_rows import EpisodeFilter, rows_csv, usage_totals


def wilson(k, n, z=1.959963984540054):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_runs_list_has_a_line_per_agent_with_its_interval(client, served):
    runs = {r["key"]: r for r in client.get("/api/runs").json()}
    rows, _ = read_rows(served / "agents" / "episodes.jsonl")
    forward = [r for r in rows if r["agent"] == "forward"]
    wins = sum(row_success(r) for r in forward)
    entries = {e["agent"]: e for e in runs["agents"]["entries"]}
    assert set(entries) == {"forward", "oracle"}
    assert entries["forward"]["n"] == 10 and entries["forward"]["success"] == wins / 10
    assert entries["forward"]["ci95"] == approx(list(wilson(wins, 10)))
    assert entries["oracle"]["success"] == 1.0 and entries["oracle"]["errors"] == 0


def test_filters_select_the_rows_and_say_their_totals(client, served):
    rows, _ = read_rows(served / "agents" / "episodes.jsonl")
    get = lambda **q: client.get("/api/runs/agents/episodes", params=q).json()  # noqa: E731
    assert len(get()["episodes"]) == 20
    assert {e["agent"] for e in get(agent="oracle")["episodes"]} == {"oracle"}
    failed = [r for r in rows if not row_success(r)]
    assert len(get(success="no")["episodes"]) == len(failed) > 0
    assert get(success="no", agent="oracle")["episodes"] == []
    some_id = rows[0]["episode_id"]
    found = get(q=some_id.upper())["episodes"]  # search ignores case
    assert found and all(some_id in e["episode_id"] for e in found)
    category = get(category="goal")
    assert {e["category"] for e in category["episodes"]} == {"goal"}
    assert category["totals"]["rows"] == len(category["episodes"])
    assert get(error="yes")["episodes"] == [] and len(get(error="no")["episodes"]) == 20


def test_bad_filters_are_one_line_errors(client):
    response = client.get("/api/runs/agents/episodes", params={"success": "maybe"})
    assert response.status_code == 400
    assert response.json() == {
        "error": "query parameter 'success' must be yes, no or empty, not 'maybe'"
    }
    response = client.get("/api/runs/agents/episodes", params={"q": "x" * 201})
    assert response.status_code == 400 and "longer than 200" in response.json()["error"]
    response = client.get("/api/runs/agents/export", params={"format": "xlsx"})
    assert response.status_code == 400 and "csv or jsonl" in response.json()["error"]


def test_export_is_the_filtered_selection(client, served):
    rows, _ = read_rows(served / "agents" / "episodes.jsonl")
    response = client.get("/api/runs/agents/export", params={"agent": "oracle", "format": "jsonl"})
    assert response.headers["content-type"].startswith("application/x-ndjson")
    assert 'filename="agents-episodes.jsonl"' in response.headers["content-disposition"]
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert lines == [r for r in rows if r["agent"] == "oracle"]  # whole rows, as written
    response = client.get("/api/runs/agents/export", params={"success": "no"})
    table = list(csv.DictReader(io.StringIO(response.text)))
    assert len(table) == sum(1 for r in rows if not row_success(r))
    assert {row["success"] for row in table} == {"False"} and "metric.tc" in table[0]


def test_csv_cells_are_never_formulas():
    rows = [
        {"task": "t", "agent": "=cmd|' /C calc'!A0", "episode_id": "-1+1", "metrics": {"tc": True}}
    ]
    (line,) = list(csv.DictReader(io.StringIO(rows_csv(rows))))
    assert line["agent"] == "'=cmd|' /C calc'!A0" and line["episode_id"] == "'-1+1"
    assert line["metric.tc"] == "True"


def test_usage_totals_by_hand():
    rows = [
        {"metrics": {"tc": True}, "usage": {"calls": 2, "total_tokens": 30, "cost_usd": 0.25}},
        {"metrics": {"tc": False}, "termination": "model_error", "error": "timeout"},
        {"termination": "agent_error", "usage": {"calls": 1, "total_tokens": 5, "cost_usd": 0.5}},
    ]
    totals = usage_totals(rows)
    assert (totals["rows"], totals["successes"], totals["errors"]) == (3, 1, 2)
    assert totals["errors_by_termination"] == {"model_error": 1, "agent_error": 1}
    assert (totals["calls"], totals["total_tokens"], totals["cost_usd"]) == (3, 35, 0.75)
    assert EpisodeFilter(error="yes").select(rows) == rows[1:]


def test_chart_of_a_figure_by_category(client):
    response = client.get(
        "/api/runs/agents/chart.svg", params={"task": "web-toy-v1", "metric": "tc"}
    )
    assert response.status_code == 200 and response.headers["content-type"] == "image/svg+xml"
    svg = response.text
    assert svg.startswith("<svg") and "<title>web-toy-v1: TC by category" in svg
    assert svg.count("<rect") >= 2 * 3 + 2  # two agents in three categories, then the legend
    assert "stroke=" in svg  # the interval whiskers
    missing = client.get("/api/runs/agents/chart.svg", params={"task": "nope", "metric": "tc"})
    assert missing.status_code in (400, 404) and "no task 'nope'" in missing.json()["error"]


def test_glossary_defines_every_metric_and_kind(client):
    assert "kinds" not in client.get("/api/glossary").json()  # the runs page needs no kinds
    glossary = client.get("/api/glossary", params={"kinds": "yes"}).json()
    defined = {m["key"]: m for m in glossary["metrics"]}
    assert {m.key for m in METRICS} <= set(defined)
    assert all(defined[m.key]["definition"] and defined[m.key]["source"] for m in METRICS)
    kinds = {k["name"]: k["about"] for k in glossary["kinds"]}
    assert "navigation" in kinds and "top1_fits" in kinds["virl-aria"]
    assert "95% interval" in glossary["columns"]


def test_compare_runs_side_by_side_with_the_paired_test(client, served):
    view = client.get("/api/compare", params=[("run", "agents"), ("run", "second")]).json()
    assert [r["name"] for r in view["runs"]] == ["agents", "second"]
    (task,) = view["tasks"]
    assert [(line["run"], line["agent"]) for line in task["lines"]] == [
        ("agents", "forward"),
        ("agents", "oracle"),
        ("second", "oracle"),
    ]
    expected = [
        paired_cells(c)
        for c in compare_runs(load_run(served / "agents"), load_run(served / "second"))
    ]
    assert [p["cells"] for p in view["paired"]] == expected and expected
    one = client.get("/api/compare", params={"run": "agents"})
    assert one.status_code == 400 and "2 to 8 runs" in one.json()["error"]
