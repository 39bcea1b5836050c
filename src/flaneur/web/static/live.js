"use strict";
nav("/live");
const main = document.getElementById("main");

async function watch(key) {
  const box = document.getElementById("live");
  const progress = el("div", {class: "panel", id: "progress", text: "waiting for rows…"});
  const table = el("table", {id: "rows"}, el("tr", {}, ...["#", "episode", "task", "agent", "category", "ended", "steps", "success"].map((h) => el("th", {text: h}))));
  box.replaceChildren(el("h2", {text: `run ${key}`}), progress, table);
  let n = 0;
  const source = new EventSource(`/api/runs/${encodeURIComponent(key)}/events`);
  source.addEventListener("row", (ev) => {
    const r = JSON.parse(ev.data);
    n += 1;
    const link = el("a", {href: "/replay?" + new URLSearchParams({run: key, task: r.task, agent: r.agent, id: r.episode_id}), text: String(r.episode_id)});
    table.append(el("tr", {class: r.success ? "ok" : ""}, el("td", {text: String(n)}), el("td", {}, link),
      ...[r.task, r.agent, r.category, r.termination, r.steps, r.success ? "yes" : "no"].map((v) => el("td", {text: fmt(v)}))));
  });
  source.addEventListener("progress", (ev) => {
    const p = JSON.parse(ev.data);
    const of = p.total === null ? `${p.done} episodes` : `${p.done} of ${p.total} episodes`;
    const bar = el("progress", {id: "bar", max: p.total || 1, value: p.total ? p.done : 0, "aria-label": "episodes done"});
    // each agent apart: a mean over several agents would say nothing about any of them
    progress.replaceChildren(el("span", {id: "count", text: of}), " ", bar,
      el("span", {text: ` · ${p.rows} rows · ${p.successes} successes`}),
      el("div", {id: "per-agent"}, sortableTable(["task", "agent", "n", "success [95% interval]", "errors"],
        p.agents.map((a) => ({cells: [a.task, a.agent, a.n, figureCell({mean: a.success, ci95: a.ci95}), a.errors]})))));
  });
  source.addEventListener("done", () => { progress.append(el("b", {id: "finished", text: " · run finished"})); source.close(); });
}

async function start() {
  const runs = await getJSON("/api/runs");
  const pick = el("select", {id: "run", "aria-label": "run"});
  for (const r of runs) pick.append(el("option", {value: r.key, text: `${r.name}${r.live ? " (in progress)" : ""}`}));
  const wanted = new URLSearchParams(location.search).get("run") || (runs.find((r) => r.live) || runs[0] || {}).key;
  if (wanted) pick.value = wanted;
  pick.addEventListener("change", () => watch(pick.value));
  main.replaceChildren(el("h1", {text: "Live"}), el("p", {class: "muted", text: "New episodes appear as `flaneur run` appends them to the run folder."}),
    el("div", {class: "panel"}, el("label", {text: "run "}), pick), el("div", {id: "live"}));
  if (wanted) watch(wanted);
}
start().catch((err) => showError(main, err));
