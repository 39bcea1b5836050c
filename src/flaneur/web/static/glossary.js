"use strict";
nav("/glossary");
const main = document.getElementById("main");

function textTable(table) { table.classList.add("text"); return table; }

// Every metric with its definition and paper, the run view's columns, and each task kind.
async function start() {
  try {
    const g = await getJSON("/api/glossary?kinds=yes");
    const direction = (m) => (m.higher_is_better === null ? "descriptive" : (m.higher_is_better ? "higher is better" : "lower is better"));
    main.replaceChildren(el("h1", {text: "Glossary"}),
      el("p", {class: "muted", text: "what each figure of the runs pages means (docs/metrics.md gives the formulas in full)"}),
      el("h2", {text: "navigation metrics"}),
      el("div", {class: "scroll"}, textTable(sortableTable(["label", "field", "definition", "source", "system", "direction"],
        g.metrics.map((m) => ({cells: [m.label, m.key, m.definition || "-", m.source || "-", m.system, direction(m)]}))))),
      el("h2", {text: "columns of the runs pages"}),
      el("dl", {}, ...Object.entries(g.columns).flatMap(([k, v]) => [el("dt", {text: k}), el("dd", {text: v})])),
      el("h2", {text: "task kinds and their figures"}),
      ...g.kinds.map((k) => el("details", {id: `kind-${k.name}`}, el("summary", {text: k.name}), el("pre", {text: k.about}))));
    document.body.dataset.ready = "1";
  } catch (err) { showError(main, err); }
}
start();
