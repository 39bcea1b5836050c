"use strict";
nav("/");
const main = document.getElementById("main");
const GLOSSARY = getJSON("/api/glossary").catch(() => ({metrics: []}));

// A run's state as a short text: running, finished, failed (why), interrupted (resumable).
function stateText(r) {
  if (r.status === "failed") return `failed: ${r.reason}`;
  if (r.status === "interrupted") return "interrupted (resumable)";
  return r.status || (r.live ? "running" : "finished");
}

function replayLink(run, e) {
  return "/replay?" + new URLSearchParams({run, task: e.task, agent: e.agent, id: e.episode_id});
}

// Column heads of metrics, with the glossary's definition as the hint.
async function metricHeads(keys, labels) {
  const defs = Object.fromEntries(((await GLOSSARY).metrics || []).map((m) => [m.key, m]));
  return keys.map((k) => ({text: labels[k] || k, title: defs[k] ? `${defs[k].definition} (${defs[k].source})` : "see the glossary"}));
}

function totalsText(t) {
  const cost = t.cost_usd ? ` · $${t.cost_usd.toFixed(4)}` : "";
  return `${t.rows} rows · ${t.successes} succeeded · ${t.errors} errors · ${t.calls} model calls · ${t.total_tokens} tokens${cost}`;
}

async function taskSection(box, run, task) {
  const mine = run.tables.filter((t) => t.task === task);
  const keys = Object.keys(run.labels).filter((k) => mine.some((t) => figureCell(t.figures[k])));
  const heads = await metricHeads(keys, run.labels);
  box.append(el("h3", {text: `${task} (${mine[0].kind === "navigation" ? mine[0].scheme + " scheme" : mine[0].kind})`}),
    el("p", {class: "muted", text: "each figure: mean [95% interval]; hover a column head for its definition"}));
  box.append(el("div", {class: "scroll"}, sortableTable(["agent", "n", ...heads, "ended", "tokens"],
    mine.map((t) => ({cells: [t.agent, t.rows, ...keys.map((k) => figureCell(t.figures[k])),
      Object.entries(t.by_termination).map(([k, v]) => `${k} ${v}`).join(", "), t.usage.total_tokens ?? null]})))));
  const cats = [...new Set(mine.flatMap((t) => Object.keys(t.categories)))];
  if (cats.length) {
    box.append(el("h4", {text: "by category"}));
    const charted = keys.filter((k) => mine.some((t) => Object.values(t.categories).some((g) => figureCell(g.figures[k]))));
    if (charted.length) box.append(categoryChart(run.key, task, charted, run.labels));
    const rows = [];
    for (const t of mine) for (const c of cats) {
      const g = t.categories[c];
      if (g) rows.push({cells: [c, t.agent, g.episodes, ...keys.map((k) => figureCell(g.figures[k]))]});
    }
    box.append(el("div", {class: "scroll"}, sortableTable(["category", "agent", "n", ...heads], rows)));
  }
  const paired = run.paired.filter((p) => p.task === task);
  if (paired.length) {
    box.append(el("h4", {text: "paired comparison"}), el("p", {class: "muted", text: run.paired_note}));
    box.append(el("div", {class: "scroll"}, sortableTable(run.paired_columns, paired.map((p) => ({cells: p.cells})))));
  }
}

// A chart of one figure by category (drawn by the server as an image), with a metric menu.
function categoryChart(key, task, metrics, labels) {
  const img = el("img", {class: "chart"});
  const pick = el("select", {"aria-label": `figure charted by category for ${task}`});
  for (const k of metrics) pick.append(el("option", {value: k, text: labels[k] || k}));
  const draw = () => {
    img.src = `/api/runs/${encodeURIComponent(key)}/chart.svg?` + new URLSearchParams({task, metric: pick.value});
    img.alt = `${task}: ${labels[pick.value] || pick.value} by category, one bar per agent with its 95% interval`;
  };
  pick.addEventListener("change", draw);
  draw();
  return el("div", {class: "panel"}, el("label", {}, "chart: ", pick), el("div", {}, img));
}

const FILTERS = [["agent", "agent"], ["task", "task"], ["category", "category"]];

// The episodes table with its filters, search, totals, exports and error panel.
function episodesSection(box, key, run) {
  const form = el("form", {class: "filters", role: "search"});
  const fields = {};
  for (const [name, label] of FILTERS) {
    fields[name] = el("select", {name, "aria-label": `filter by ${label}`}, el("option", {value: "", text: `any ${label}`}));
    for (const v of run.facets[name] || []) fields[name].append(el("option", {value: v, text: v}));
  }
  for (const [name, yes, no] of [["success", "succeeded", "failed"], ["error", "with an error", "without errors"]]) {
    fields[name] = el("select", {name, "aria-label": `filter by ${name}`},
      el("option", {value: "", text: name === "success" ? "succeeded or not" : "errors or not"}),
      el("option", {value: "yes", text: yes}), el("option", {value: "no", text: no}));
  }
  fields.q = el("input", {name: "q", type: "search", placeholder: "episode id contains…", "aria-label": "search episode ids"});
  form.append(...Object.values(fields));
  const count = el("p", {class: "muted", id: "episode-count"});
  const exports = el("p", {id: "exports"});
  const errors = el("details", {id: "error-log"});
  const tableBox = el("div", {class: "scroll", id: "episodes"});
  box.append(el("h3", {text: "episodes"}), form, count, exports, errors, tableBox);
  let asked = 0;
  const load = async () => {
    const query = new URLSearchParams(Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.value])));
    const mine = ++asked;
    try {
      const data = await getJSON(`/api/runs/${encodeURIComponent(key)}/episodes?${query}`);
      if (mine !== asked) return;  // a newer filter answered first
      count.textContent = `${data.episodes.length} episodes shown (click a row to replay it) · ${totalsText(data.totals)}`;
      exports.replaceChildren("download these rows: ",
        el("a", {href: `/api/runs/${encodeURIComponent(key)}/export?${query}&format=csv`, download: "", text: "CSV"}), " · ",
        el("a", {href: `/api/runs/${encodeURIComponent(key)}/export?${query}&format=jsonl`, download: "", text: "JSONL (whole rows)"}));
      const failed = data.episodes.filter((e) => e.error);
      errors.replaceChildren(el("summary", {text: `error log: ${failed.length} episodes with an error`}),
        failed.length ? el("ul", {}, ...failed.map((e) => el("li", {}, el("a", {href: replayLink(key, e), text: `${e.agent} · ${e.episode_id}`}),
          el("pre", {text: `${e.termination}: ${e.error}`})))) : el("p", {class: "muted", text: "no errors"}));
      tableBox.replaceChildren(sortableTable(["episode", "task", "agent", "category", "ended", "steps", "tokens", "success"],
        data.episodes.map((e) => ({e, cls: e.success ? "ok" : "", cells: [e.episode_id, e.task,
          e.player ? `${e.agent} (${e.player})` : e.agent, e.category, e.termination, e.steps, e.tokens ?? null, e.success ? "yes" : "no"]})),
        (row) => { window.location.href = replayLink(key, row.e); }));
    } catch (err) { showError(tableBox, err); }
  };
  let timer = 0;
  form.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(load, 150); });
  form.addEventListener("submit", (ev) => { ev.preventDefault(); load(); });
  return load();
}

async function showRun(key) {
  const box = document.getElementById("run");
  try {
    const run = await getJSON(`/api/runs/${encodeURIComponent(key)}`);
    box.replaceChildren(el("h2", {text: `run ${run.name}`}),
      el("p", {class: "muted", text: `seed ${fmt(run.seed)} · model ${fmt(run.model)} · ${stateText(run)}`}),
      el("p", {id: "run-totals", text: totalsText(run.totals)}));
    if (run.status === "interrupted") {
      box.append(el("p", {}, run.resume ? "to finish it: " : "to finish it, rerun its command with --resume",
        run.resume ? el("code", {text: run.resume}) : null));
    }
    for (const w of run.warnings || []) box.append(el("p", {class: "bad", text: `warning: ${w}`}));
    if (run.live) box.append(el("p", {}, el("a", {href: "/live?run=" + encodeURIComponent(key), text: "watch live"})));
    for (const task of [...new Set(run.tables.map((t) => t.task))]) await taskSection(box, run, task);
    await episodesSection(box, key, run);
  } catch (err) { showError(box, err); }
}

// Check boxes to pick runs, and a link that compares them side by side.
function compareForm(runs) {
  const link = el("a", {id: "compare-link", text: "compare the chosen runs"});
  const boxes = runs.map((r) => el("input", {type: "checkbox", value: r.key, id: `cmp-${r.key}`}));
  const update = () => {
    const chosen = boxes.filter((b) => b.checked).map((b) => ["run", b.value]);
    if (chosen.length >= 2) link.setAttribute("href", "/compare?" + new URLSearchParams(chosen));
    else link.removeAttribute("href");
    link.textContent = chosen.length >= 2 ? `compare the ${chosen.length} chosen runs` : "choose two or more runs to compare";
  };
  boxes.forEach((b) => b.addEventListener("change", update));
  update();
  return el("fieldset", {class: "panel"}, el("legend", {text: "compare runs side by side"}),
    ...runs.map((r, i) => el("label", {class: "choice"}, boxes[i], ` ${r.name}`)), el("p", {}, link));
}

async function start() {
  try {
    const runs = await getJSON("/api/runs");
    main.replaceChildren(el("h1", {text: "Runs"}));
    if (!runs.length) main.append(el("p", {text: "No run folders here yet: run `flaneur run ... --out DIR` in a served folder."}));
    const lines = runs.flatMap((r) => (r.entries.length ? r.entries : [{}]).map((e) => ({r, e})));
    main.append(el("p", {class: "muted", text: "one line per run, task and agent; success: mean [95% Wilson interval] over its scored episodes; click a line to open its run"}));
    main.append(el("div", {class: "scroll"}, sortableTable(["run", "task", "agent", "n", "success", "errors", "tokens", "state"],
      lines.map(({r, e}) => ({r, cells: [r.name, e.task ?? null, e.agent ?? null, e.n ?? null,
        figureCell({mean: e.success, ci95: e.ci95}), e.errors ?? null, e.tokens ?? null, stateText(r)]})),
      (row) => { history.replaceState(null, "", "/?run=" + encodeURIComponent(row.r.key)); showRun(row.r.key); })));
    if (runs.length >= 2) main.append(compareForm(runs));
    main.append(el("div", {id: "run"}));
    const wanted = new URLSearchParams(location.search).get("run") || (runs[0] && runs[0].key);
    if (wanted) await showRun(wanted);
    document.body.dataset.ready = "1";
  } catch (err) { showError(main, err); }
}
start();
