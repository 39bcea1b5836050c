"use strict";
nav("/");
const main = document.getElementById("main");

// A run's state as a short text: running, finished, failed (why), interrupted (resumable).
function stateText(r) {
  if (r.status === "failed") return `failed: ${r.reason}`;
  if (r.status === "interrupted") return "interrupted (resumable)";
  return r.status || (r.live ? "running" : "finished");
}

function replayLink(run, e) {
  return "/replay?" + new URLSearchParams({run, task: e.task, agent: e.agent, id: e.episode_id});
}

async function showRun(key) {
  const box = document.getElementById("run");
  try {
    const run = await getJSON(`/api/runs/${encodeURIComponent(key)}`);
    box.replaceChildren(el("h2", {text: `run ${run.name}`}),
      el("p", {class: "muted", text: `${run.progress.rows} rows · seed ${fmt(run.seed)} · model ${fmt(run.model)} · ${stateText(run)}`}));
    if (run.status === "interrupted") {
      box.append(el("p", {}, run.resume ? "to finish it: " : "to finish it, rerun its command with --resume",
        run.resume ? el("code", {text: run.resume}) : null));
    }
    for (const w of run.warnings || []) box.append(el("p", {class: "bad", text: `warning: ${w}`}));
    if (run.live) box.append(el("p", {}, el("a", {href: "/live?run=" + encodeURIComponent(key), text: "watch live"})));
    const keys = Object.keys(run.labels).filter((k) => run.tables.some((t) => t.means[k] !== undefined && t.means[k] !== null));
    for (const task of [...new Set(run.tables.map((t) => t.task))]) {
      const mine = run.tables.filter((t) => t.task === task);
      box.append(el("h3", {text: `${task} (${mine[0].scheme} scheme)`}));
      box.append(sortableTable(["agent", "n", ...keys.map((k) => run.labels[k]), "ended"],
        mine.map((t) => ({cells: [t.agent, t.rows, ...keys.map((k) => t.means[k] ?? null),
          Object.entries(t.by_termination).map(([k, v]) => `${k} ${v}`).join(", ")]}))));
      const cats = [...new Set(mine.flatMap((t) => Object.keys(t.categories)))];
      if (cats.length) {
        box.append(el("h4", {text: "by category"}));
        const rows = [];
        for (const t of mine) for (const c of cats) {
          const g = t.categories[c];
          if (g) rows.push({cells: [c, t.agent, g.episodes, ...keys.map((k) => g.means[k] ?? null)]});
        }
        box.append(sortableTable(["category", "agent", "n", ...keys.map((k) => run.labels[k])], rows));
      }
      const paired = run.paired.filter((p) => p.task === task);
      if (paired.length) {
        box.append(el("h4", {text: "paired comparison"}), el("p", {class: "muted", text: run.paired_note}));
        box.append(sortableTable(run.paired_columns, paired.map((p) => ({cells: p.cells}))));
      }
    }
    box.append(el("h3", {text: "episodes"}), el("p", {class: "muted", text: "click a row to replay it"}));
    box.append(sortableTable(["episode", "task", "agent", "category", "ended", "steps", "success"],
      run.episodes.map((e) => ({e, cls: e.success ? "ok" : "", cells: [e.episode_id, e.task,
        e.player ? `${e.agent} (${e.player})` : e.agent, e.category, e.termination, e.steps, e.success ? "yes" : "no"]})),
      (row) => { window.location.href = replayLink(key, row.e); }));
  } catch (err) { showError(box, err); }
}

async function start() {
  try {
    const runs = await getJSON("/api/runs");
    main.replaceChildren(el("h1", {text: "Runs"}));
    if (!runs.length) main.append(el("p", {text: "No run folders here yet: run `flaneur run ... --out DIR` in a served folder."}));
    main.append(sortableTable(["run", "agents", "tasks", "rows", "success", "state"],
      runs.map((r) => ({r, cells: [r.name, r.agents.join(", "), r.tasks.join(", "), r.rows,
        r.success_rate, stateText(r)]})),
      (row) => { history.replaceState(null, "", "/?run=" + encodeURIComponent(row.r.key)); showRun(row.r.key); }));
    main.append(el("div", {id: "run"}));
    const wanted = new URLSearchParams(location.search).get("run") || (runs[0] && runs[0].key);
    if (wanted) showRun(wanted);
  } catch (err) { showError(main, err); }
}
start();
