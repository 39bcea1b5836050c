"""HTML reports and run comparison on small runs of the toy city."""

from __future__ import annotations

import json
from dataclasses import replace

from flaneur.cli import main
from flaneur.env.toy import toy_city, toy_episodes
from flaneur.evaluate.runner import RunConfig, run_benchmark
from flaneur.report.run_report import RunData, build_report, compare_runs, load_run


def toy_run(out, agents, seed=0):
    episodes = [replace(e, id=f"{e.id}-{k}") for k in range(2) for e in toy_episodes()]
    city = toy_city()
    run_benchmark(
        RunConfig(agents=agents, tasks=("toy",), seed=seed),
        out,
        progress="none",
        loaded={"toy": (city, episodes)},
    )
    return city, episodes


def fake_run(name, outcomes):
    rows = [
        {"task": "t", "agent": "a", "episode_id": eid, "metrics": {"tc": ok}}
        for eid, ok in outcomes.items()
    ]
    return RunData(folder=__import__("pathlib").Path(name), summary={}, rows=rows)


def test_compare_runs_counts_wins_and_losses_by_hand():
    a = fake_run("a", {"e1": True, "e2": True, "e3": False, "e4": False, "e5": True})
    b = fake_run("b", {"e1": True, "e2": False, "e3": True, "e4": False, "e6": True})
    (c,) = compare_runs(a, b)
    assert c["paired"] == 4  # e5 and e6 are not in both
    assert (c["wins"], c["losses"], c["both_succeed"], c["both_fail"]) == (1, 1, 1, 1)
    assert c["win_ids"] == ["e2"] and c["loss_ids"] == ["e3"]
    # the paired test: 2 of 4 succeed in each run, one win, one loss: no difference
    assert c["task"] == "t" and (c["a"], c["b"]) == ("a:a", "b:a")
    assert (c["a_success"], c["b_success"], c["diff"], c["p_value"]) == (0.5, 0.5, 0.0, 1.0)
    assert c["diff_low"] < 0 < c["diff_high"]


def test_report_has_tables_chart_maps_and_logs(tmp_path):
    city, episodes = toy_run(tmp_path / "r1", ("forward", "oracle"))
    toy_run(tmp_path / "r2", ("oracle",), seed=1)
    runs = [load_run(tmp_path / "r1"), load_run(tmp_path / "r2")]
    path = build_report(runs, tmp_path / "report.html", tasks={"toy": (city, episodes)})
    html = path.read_text()
    assert html.startswith("<!doctype html>") and html.endswith("</html>")
    assert html.count("<details>") == 3 * len(episodes)  # one section per episode row
    assert html.count("<svg") >= 3 * len(episodes)  # a map each, plus the category charts
    assert "success by category" in html and "comparison" in html
    assert "r1:oracle" in html and "<th>TC</th>" in html and "polyline" in html
    maps = sorted((tmp_path / "report_maps").glob("*.html"))
    assert len(maps) == 3 * len(episodes) and html.count("interactive map") == len(maps)
    assert "L.polyline" in maps[0].read_text() or "polyline" in maps[0].read_text().lower()


def test_report_command_prints_json(tmp_path, capsys):
    toy_run(tmp_path / "r1", ("forward",))
    main(["report", str(tmp_path / "r1"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["report"].endswith("report.html") and out["runs"][0]["episodes"] == 10
