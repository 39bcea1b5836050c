"use strict";
nav("/annotate");
const main = document.getElementById("main");

async function showRoute(task, id) {
  const box = document.getElementById("route");
  let route;
  try { route = await getJSON("/api/route?" + new URLSearchParams({task, id})); } catch (err) { showError(box, err); return; }
  const map = streetMap(route.map, [{nodes: route.steps.map((s) => s.node), colour: "#2b6cb0", width: 5, dots: route.goals}]);
  const slider = el("input", {type: "range", min: 0, max: route.steps.length - 1, value: 0, id: "step"});
  const views = el("div", {class: "views"});
  const label = el("span", {});
  const text = el("textarea", {id: "instruction", placeholder: "Write the directions a person needs to walk this route…"});
  const name = el("input", {id: "file", value: "annotations"});
  const who = el("input", {id: "annotator", placeholder: "your name", value: localStorage.getItem("flaneur-player") || ""});
  const saved = el("p", {id: "saved", class: "muted"});
  const save = el("button", {id: "save", text: "save", on: {click: async () => {
    try {
      const r = await postJSON("/api/annotate", {task, episode_id: id, instruction: text.value, file: name.value, annotator: who.value});
      saved.textContent = `saved ${r.episode_id} in ${r.path} (${r.episodes} episodes) · run it with: flaneur run --tasks ${r.path} --agent oracle --out DIR`;
    } catch (err) { saved.textContent = String(err.message); }
  }}});
  const show = (i) => {
    const s = route.steps[i];
    label.textContent = ` node ${i + 1} of ${route.steps.length}`;
    map.marker(s.node, s.heading);
    viewStrip(views, {task}, s.node, [{label: "ahead", heading: s.heading}]);
  };
  slider.addEventListener("input", () => show(Number(slider.value)));
  box.replaceChildren(el("p", {class: "muted", text: `original instruction: ${route.original}`}),
    el("div", {class: "cols"}, map.svg, el("div", {}, el("div", {class: "panel"}, slider, label), views)),
    el("h3", {text: "your instruction"}), text, el("div", {class: "panel"}, el("label", {text: "file "}), name, ".jsonl ",
      el("label", {text: " annotator "}), who, " ", save), saved);
  show(0);
}

async function start() {
  const tasks = await getJSON("/api/tasks");
  const task = el("select", {id: "task"});
  for (const t of tasks) task.append(el("option", {value: t.id, text: t.id}));
  const episode = el("select", {id: "episode"});
  const fill = async () => {
    const list = await getJSON("/api/episodes?" + new URLSearchParams({task: task.value}));
    episode.replaceChildren(...list.map((e) => el("option", {value: e.id, text: `${e.id} · ${e.instruction}`})));
    showRoute(task.value, episode.value);
  };
  task.addEventListener("change", fill);
  episode.addEventListener("change", () => showRoute(task.value, episode.value));
  main.replaceChildren(el("h1", {text: "Annotate a route"}),
    el("div", {class: "panel"}, el("label", {text: "task set "}), task, el("label", {text: " route "}), episode),
    el("div", {id: "route"}));
  fill();
}
start().catch((err) => showError(main, err));
