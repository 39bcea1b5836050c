"""HTML reports of runs (``flaneur report``): tables, charts, episode maps, comparisons.

The report is one self-contained HTML file that works offline: metric tables per task set
(agents side by side), paired comparisons of the agents of each run (difference of success
rates with its interval, McNemar test), a per-category success chart, wins and losses between
two runs, and for each episode an SVG map (reference path, agent path, start, goals, places near the stop)
with the step log. Interactive episode maps (Leaflet) go into ``<report>_maps/`` with one shared
copy of Leaflet: they work offline too.

Every string from data (names, instructions, ids, model output, run and agent names) is escaped
for where it goes (:mod:`flaneur.report.escaping`); problems found reading a run folder
(:mod:`flaneur.report.run_folder`) are shown at the top of its section.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

from flaneur.evaluate.protocol import check_same_protocol
from flaneur.evaluate.runlog import row_success
from flaneur.metrics.paired import compare_agents
from flaneur.report.episode_folium import save_episode_map
from flaneur.report.escaping import href, safe_filename
from flaneur.report.escaping import html_text as escape
from flaneur.report.run_folder import RunData, load_run
from flaneur.report.svg_map import COLOURS, bar_chart_svg, episode_svg
from flaneur.report.tables import (
    METRIC_LABELS,
    PAIRED_COLUMNS,
    PAIRED_NOTE,
    agent_label,
    metrics_of,
    paired_cells,
)
from flaneur.tasks.episode import Episode
from flaneur.world.city import City

__all__ = ["RunData", "build_report", "compare_runs", "load_run", "paired_comparisons"]

CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#1a202c;max-width:1100px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ddd;padding:3px 8px;
font-size:13px;text-align:right}th{background:#f2f4f7}td:first-child,th:first-child{text-align:left}
details{border:1px solid #e2e8f0;border-radius:6px;margin:6px 0;padding:4px 10px}
summary{cursor:pointer}.ok{color:#2f855a}.bad{color:#c53030}.muted{color:#718096;font-size:12px}
.warn{background:#fffbeb;border:1px solid #f6ad55;padding:4px 8px}
.ep{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}.log td{font-size:12px}"""


def _agent_pairs(a: RunData, b: RunData) -> list[tuple[str, str]]:
    """Agents of ``a`` and ``b`` to pair: those of the same name, else the only agent of each."""
    agents_a = list(dict.fromkeys(str(r["agent"]) for r in a.rows))
    agents_b = list(dict.fromkeys(str(r["agent"]) for r in b.rows))
    pairs = [(x, x) for x in agents_a if x in agents_b]
    if not pairs and len(agents_a) == 1 and len(agents_b) == 1:
        pairs = [(agents_a[0], agents_b[0])]
    return pairs


def compare_runs(a: RunData, b: RunData, *, listed: int = 50) -> list[dict[str, Any]]:
    """Paired comparison of run ``a`` with run ``b``, per task and agent, on the episodes
    both ran.

    Agents are paired by name, or the only agent of each run when both ran one. Each entry
    has the fields of :func:`flaneur.metrics.compare_agents` (``a`` and ``b`` as
    ``run:agent``; difference of success rates with Newcombe's interval, exact McNemar p),
    plus ``both_succeed``, ``both_fail`` and the ids of the first ``listed`` wins and losses.
    Only scored rows count (as in the metric tables); success is
    :func:`~flaneur.evaluate.runlog.row_success`.

    Raises
    ------
    FlaneurError
        When the runs were made under different protocols (one line).
    """
    check_same_protocol([(a.name, a.rows), (b.name, b.rows)])
    out = []
    for agent_a, agent_b in _agent_pairs(a, b):
        label_a, label_b = f"{a.name}:{agent_a}", f"{b.name}:{agent_b}"
        if label_a == label_b:  # two folders of the same name
            label_b = f"{b.name} (2):{agent_b}"
        rows = [
            {**r, "agent": label_a}
            for r in a.rows
            if str(r["agent"]) == agent_a and r.get("metrics")
        ] + [
            {**r, "agent": label_b}
            for r in b.rows
            if str(r["agent"]) == agent_b and r.get("metrics")
        ]
        for comparison in compare_agents(rows, row_success):
            if {comparison["a"], comparison["b"]} != {label_a, label_b}:
                continue
            out.append({**comparison, **_outcome_ids(rows, comparison, listed)})
    return out


def _outcome_ids(
    rows: list[dict[str, Any]], comparison: dict[str, Any], listed: int
) -> dict[str, Any]:
    """Counts of episodes both agents of ``comparison`` won or lost, and the ids of the first
    ``listed`` episodes only ``a`` (only ``b``) won."""
    task = comparison["task"]
    mine = {
        (str(r["agent"]), str(r["episode_id"])): row_success(r)
        for r in rows
        if str(r["task"]) == task
    }
    ids_a = [e for (agent, e) in mine if agent == comparison["a"]]
    shared = [e for e in ids_a if (comparison["b"], e) in mine]
    pairs = [(e, mine[(comparison["a"], e)], mine[(comparison["b"], e)]) for e in sorted(shared)]
    return {
        "both_succeed": sum(1 for _, x, y in pairs if x and y),
        "both_fail": sum(1 for _, x, y in pairs if not x and not y),
        "win_ids": [e for e, x, y in pairs if x and not y][:listed],
        "loss_ids": [e for e, x, y in pairs if y and not x][:listed],
    }


def paired_comparisons(run: RunData) -> list[dict[str, Any]]:
    """Paired comparison of the agents of one run, per task, on the episodes both ran.

    Only scored rows (those with metrics, as in the metric tables) count, and success is
    :func:`~flaneur.evaluate.runlog.row_success`. Tasks and agents follow the order of the run
    summary (the ``--agent`` order), else their first appearance in the log.

    Returns
    -------
    list of dict
        :func:`flaneur.metrics.compare_agents` entries, each with the run name under ``run``.
    """
    check_same_protocol([(run.name, run.rows)])  # a run resumed under another protocol
    tasks: dict[str, int] = {}
    agents: dict[str, int] = {}
    for entry in run.summary.get("runs") or []:
        tasks.setdefault(str(entry.get("task")), len(tasks))
        agents.setdefault(str(entry.get("agent")), len(agents))
    scored = sorted(
        (r for r in run.rows if r.get("metrics")),
        key=lambda r: (
            tasks.get(str(r["task"]), len(tasks)),
            agents.get(str(r["agent"]), len(agents)),
        ),
    )
    return [{"run": run.name, **c} for c in compare_agents(scored, row_success)]


def _paired_table(comparisons: list[dict[str, Any]]) -> str:
    html = []
    head = "".join(f"<th>{escape(col)}</th>" for col in PAIRED_COLUMNS)
    for task in dict.fromkeys(c["task"] for c in comparisons):
        html.append(
            f"<h3>{escape(task)}: paired comparison</h3><p class=muted>{escape(PAIRED_NOTE)}</p>"
            f"<table><tr>{head}</tr>"
        )
        for c in comparisons:
            if c["task"] == task:
                cells = "".join(f"<td>{escape(v)}</td>" for v in paired_cells(c))
                html.append(f"<tr>{cells}</tr>")
        html.append("</table>")
    return "".join(html)


def _number(value: Any) -> str:
    """A metric cell: three decimals for numbers, anything else escaped as it is."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.3f}"
    return escape(value)


def _metrics_table(summary: dict[str, Any]) -> str:
    html = []
    for task in dict.fromkeys(r.get("task") for r in summary["runs"]):
        runs = [r for r in summary["runs"] if r.get("task") == task]
        means = [{k: (metrics_of(r).get(k) or {}).get("mean") for k in METRIC_LABELS} for r in runs]
        shown = [k for k in METRIC_LABELS if any(m[k] is not None for m in means)]
        head = "".join(f"<th>{METRIC_LABELS[k]}</th>" for k in shown)
        html.append(
            f"<h3>{escape(task)} <span class=muted>({escape(runs[0].get('scheme'))} scheme)</span></h3>"
            f"<table><tr><th>agent</th><th>n</th>{head}<th>ended</th></tr>"
        )
        for run, mean in zip(runs, means, strict=True):
            cells = "".join(
                "<td>-</td>" if mean[k] is None else f"<td>{_number(mean[k])}</td>" for k in shown
            )
            terms = run.get("by_termination")
            ended = (
                ", ".join(f"{k} {v}" for k, v in sorted(terms.items()))
                if isinstance(terms, dict)
                else ""
            )
            html.append(
                f"<tr><td>{escape(agent_label(run))}</td><td>{escape(run.get('rows'))}</td>{cells}"
                f"<td>{escape(ended)}</td></tr>"
            )
        html.append("</table>")
    return "".join(html)


def _category_chart(run: RunData) -> str:
    charts = []
    for task in dict.fromkeys(r["task"] for r in run.rows):
        rows = [r for r in run.rows if r["task"] == task and r.get("metrics")]
        categories = sorted({str(r.get("category") or "-") for r in rows})
        agents = sorted({str(r["agent"]) for r in rows})
        series: dict[str, list[float | None]] = {}
        for agent in agents:
            values: list[float | None] = []
            for cat in categories:
                mine = [
                    row_success(r)
                    for r in rows
                    if str(r["agent"]) == agent and str(r.get("category") or "-") == cat
                ]
                values.append(sum(mine) / len(mine) if mine else None)
            series[agent] = values
        if categories and agents:
            charts.append(bar_chart_svg(categories, series, title=f"{task}: success by category"))
    return "".join(charts)


def _step_log(row: dict[str, Any]) -> str:
    records = row.get("records") or []
    lines = [
        "<table class=log><tr><th>#</th><th>node</th><th>heading</th><th>action</th><th>model output</th></tr>"
    ]
    trajectory = row.get("trajectory") or []
    for i, action in enumerate(row.get("actions") or []):
        step = trajectory[i] if i < len(trajectory) and isinstance(trajectory[i], list) else []
        node, heading = [*step, "", ""][:2]
        record = records[i] if i < len(records) and isinstance(records[i], dict) else {}
        raw = record.get("raw_output") or ""
        lines.append(
            f"<tr><td>{i + 1}</td><td>{escape(node, 24)}</td><td>{escape(heading)}</td>"
            f"<td>{escape(action)}</td><td>{escape(raw, 160)}</td></tr>"
        )
    lines.append("</table>")
    return "".join(lines)


def _episode_html(
    row: dict[str, Any],
    city: City | None,
    episode: Episode | None,
    maps_dir: Path | None = None,
    run_name: str = "run",
    tiles: bool = False,
) -> str:
    ok = row_success(row)
    mark = "<span class=ok>✓</span>" if ok else "<span class=bad>✗</span>"
    instruction = escape(episode.instruction if episode else "", 140)
    head = (
        f"<summary>{mark} {escape(row['episode_id'])} · {escape(row['agent'])} · "
        f"{escape(row.get('termination'))} · {instruction}</summary>"
    )
    body = []
    if city is not None and episode is not None and row.get("path"):
        graph = city.graph
        known = [n for n in row["path"] if isinstance(n, str) and n in graph]
        goals = [graph.index(g) for g in episode.goal_nodes if g in graph]
        places = [city.places.index(p) for p in episode.goal_place_ids if p in city.places]
        reference = graph.indices(episode.reference_path).tolist()
        walked = graph.indices(known).tolist()
        body.append(episode_svg(city, reference, walked, goals=goals, goal_places=places))
        if maps_dir is not None:
            name = safe_filename(f"{run_name}-{row['agent']}-{row['episode_id']}") + ".html"
            save_episode_map(
                city,
                maps_dir / name,
                reference,
                walked,
                goals=goals,
                goal_places=places,
                assets_dir=maps_dir,
                tiles=tiles,
            )
            body.append(
                f'<p><a href="{href(maps_dir.name, name)}">interactive map</a> '
                f"<span class=muted>(Leaflet, offline{'; tiles online' if tiles else ''})</span></p>"
            )
    metrics = row.get("metrics") or {}
    cells = "".join(
        f"<tr><td>{escape(k)}</td><td>{v:.3f}</td></tr>"
        if isinstance(v, float)
        else f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>"
        for k, v in metrics.items()
        if v is not None and k not in ("episode_id", "city")
    )
    body.append(f"<table>{cells}</table>")
    if row.get("error"):
        body.append(f"<p class=bad>{escape(row['error'])}</p>")
    return f"<details>{head}<div class=ep>{''.join(body)}</div>{_step_log(row)}</details>"


def build_report(
    runs: list[RunData],
    out: str | Path,
    *,
    tasks: dict[str, tuple[City, list[Episode]]] | None = None,
    max_episodes: int = 50,
    interactive_maps: bool = True,
    tiles: bool = False,
) -> Path:
    """Write the HTML report of ``runs`` to ``out``.

    Parameters
    ----------
    runs
        Loaded run folders (see :func:`load_run`).
    out
        HTML file to write.
    tasks
        ``{task_id: (city, episodes)}`` for the maps (tasks missing here get no map).
    max_episodes
        Episode sections per (run, task, agent); the rest are counted, not drawn.
    interactive_maps
        Also write a folium map per drawn episode into ``<report name>_maps/`` and link it
        (offline: Leaflet is written once into that folder; streets come from the city graph).
    tiles
        Add OpenStreetMap tiles to the interactive maps (fetched by the browser when online).
    """
    tasks = tasks or {}
    path = Path(out)
    maps_dir = path.parent / f"{path.stem}_maps" if interactive_maps else None
    legend = " ".join(
        f'<span style="color:{c}">■ {k}</span>' for k, c in COLOURS.items() if k != "street"
    )
    parts = [
        f"<!doctype html><html><head><meta charset=utf-8><title>flaneur report</title>"
        f"<style>{CSS}</style></head><body><h1>flaneur report</h1>"
    ]
    parts += [_run_section(run) for run in runs]
    if len(runs) >= 2:
        parts.append(_comparison_section(runs))
    parts.append(f"<h2>episodes</h2><p class=muted>{legend}</p>")
    for run in runs:
        parts += _episode_sections(run, tasks, max_episodes, maps_dir, tiles)
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts), encoding="utf-8")
    return path


def _run_section(run: RunData) -> str:
    """A run's heading, warnings, metric table, paired comparisons and category chart."""
    s = run.summary
    flag = "" if s.get("reportable", True) else " · <b>not reportable</b> (--limit/--ids)"
    parts = [
        f"<h2>run {escape(run.name)}</h2><p class=muted>{escape(run.folder)} · "
        f"seed {escape(s.get('seed'))} · model {escape(s.get('model'))} · commit "
        f"{escape(s.get('git_commit'))}{flag}</p>"
    ]
    parts.extend(f"<p class=warn>warning: {escape(w)}</p>" for w in run.warnings)
    parts.append(_metrics_table(s))
    parts.append(_paired_table(paired_comparisons(run)))
    parts.append(_category_chart(run))
    return "".join(parts)


def _comparison_section(runs: list[RunData]) -> str:
    """The table comparing each run with the next (see :func:`compare_runs`)."""
    comparisons = [c for a, b in itertools.pairwise(runs) for c in compare_runs(a, b)]
    head = "".join(f"<th>{escape(col)}</th>" for col in ("task", *PAIRED_COLUMNS))
    parts = [f"<h2>comparison</h2><p class=muted>{escape(PAIRED_NOTE)}</p><table><tr>{head}</tr>"]
    for c in comparisons:
        cells = paired_cells(c)
        titles = {5: " ".join(map(str, c["win_ids"])), 6: " ".join(map(str, c["loss_ids"]))}
        parts.append(
            f"<tr><td>{escape(c['task'])}</td>"
            + "".join(
                f"<td title='{escape(titles[i])}'>{escape(cell)}</td>"
                if i in titles
                else f"<td>{escape(cell)}</td>"
                for i, cell in enumerate(cells)
            )
            + "</tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def _episode_sections(
    run: RunData,
    tasks: dict[str, tuple[City, list[Episode]]],
    max_episodes: int,
    maps_dir: Path | None,
    tiles: bool,
) -> list[str]:
    """Per (task, agent) of ``run``: a heading and the sections of its first ``max_episodes``
    episodes (by id)."""
    parts = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in run.rows:
        groups[(str(row["task"]), str(row["agent"]))].append(row)
    for (task, agent), rows in groups.items():
        city, episodes = tasks.get(task, (None, []))
        by_id = {e.id: e for e in episodes}
        shown = sorted(rows, key=lambda r: str(r["episode_id"]))[:max_episodes]
        parts.append(
            f"<h3>{escape(run.name)} · {escape(task)} · {escape(agent)} "
            f"<span class=muted>({len(shown)} of {len(rows)} shown)</span></h3>"
        )
        parts.extend(
            _episode_html(r, city, by_id.get(str(r["episode_id"])), maps_dir, run.name, tiles)
            for r in shown
        )
    return parts
