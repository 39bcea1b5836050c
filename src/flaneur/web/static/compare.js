"use strict";
nav("/compare");
const main = document.getElementById("main");

// Runs side by side: per task set one line per run and agent, then every two runs paired.
async function start() {
  const runs = new URLSearchParams(location.search).getAll("run");
  try {
    const view = await getJSON("/api/compare?" + new URLSearchParams(runs.map((r) => ["run", r])));
    main.replaceChildren(el("h1", {text: `Compare ${view.runs.map((r) => r.name).join(" · ")}`}),
      el("p", {class: "muted", text: "each figure: mean [95% interval]"}));
    for (const {task, lines} of view.tasks) {
      const keys = Object.keys(view.labels).filter((k) => lines.some((l) => figureCell(l.figures[k])));
      main.append(el("h2", {text: task}), el("div", {class: "scroll"}, sortableTable(
        ["run", "agent", "n", ...keys.map((k) => view.labels[k]), "tokens"],
        lines.map((l) => ({cells: [l.run, l.agent, l.rows, ...keys.map((k) => figureCell(l.figures[k])), l.usage.total_tokens ?? null]})))));
      const paired = view.paired.filter((p) => p.task === task);
      if (paired.length) {
        main.append(el("h3", {text: "paired comparison of the runs"}), el("p", {class: "muted", text: view.paired_note}),
          el("div", {class: "scroll"}, sortableTable(view.paired_columns, paired.map((p) => ({cells: p.cells})))));
      } else {
        main.append(el("p", {class: "muted", text: "no paired comparison: the runs share no agent name (or one agent each) on this task set"}));
      }
    }
    document.body.dataset.ready = "1";
  } catch (err) { showError(main, err); }
}
start();
