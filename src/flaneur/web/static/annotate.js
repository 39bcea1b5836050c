"use strict";
nav("/annotate");
const main = document.getElementById("main");

// The route viewer: map, step slider, the view along the route, the instruction box, save.
function showSteps(box, route, task, extra, note) {
  const map = streetMap(route.map, [
    {nodes: route.steps.map((s) => s.node), colour: "#2b6cb0", width: 5, name: "route"},
    {nodes: [], colour: "#c53030", marks: route.goals.map((node) => ({node, shape: "diamond", label: "goal"}))},
    {nodes: [], colour: "#276749", marks: route.steps.length ? [{node: route.steps[0].node, label: "start"}] : []},
  ]);
  const slider = el("input", {type: "range", min: 0, max: route.steps.length - 1, value: 0, id: "step", "aria-label": "step along the route"});
  const views = el("div", {class: "views", id: "views"});
  const label = el("span", {id: "step-label"});
  const text = el("textarea", {id: "instruction", "aria-label": "your instruction", placeholder: "Write the directions a person needs to walk this route…"});
  const name = el("input", {id: "file", value: "annotations", "aria-label": "file name"});
  const who = el("input", {id: "annotator", "aria-label": "your name", placeholder: "your name", value: localStorage.getItem("flaneur-player") || ""});
  const saved = el("p", {id: "saved", class: "muted"});
  const save = el("button", {id: "save", text: "save", on: {click: async () => {
    try {
      const r = await postJSON("/api/annotate", {task, ...extra, instruction: text.value, file: name.value, annotator: who.value});
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
  box.replaceChildren(note,
    el("div", {class: "cols"}, map.svg, el("div", {}, el("div", {class: "panel"}, slider, label), views)),
    el("h3", {text: "your instruction"}), text, el("div", {class: "panel"}, el("label", {text: "file "}), name, ".jsonl ",
      el("label", {text: " annotator "}), who, " ", save), saved);
  show(0);
  return map;
}

async function showRoute(task, id) {
  const box = document.getElementById("route");
  let route;
  try { route = await getJSON("/api/route?" + new URLSearchParams({task, id})); } catch (err) { showError(box, err); return; }
  showSteps(box, route, task, {episode_id: id}, el("p", {class: "muted", text: `original instruction: ${route.original}`}));
}

// Drawing: click a start and an end on the streets around the chosen episode; the server
// snaps both to viewpoints and joins them by the shortest walk (the Directions service).
// A click is read in the map's metres through the SVG's screen transform (map.metres), so it
// lands where it was made however CSS scales the map (a phone's narrow screen).
async function showDraw(task, id) {
  const box = document.getElementById("route");
  let area;
  try { area = await getJSON("/api/draw?" + new URLSearchParams({task, id})); } catch (err) { showError(box, err); return; }
  const status = el("p", {id: "draw-status", class: "muted", text: "click the start of your route on the map"});
  const drawing = el("div", {id: "drawing"});
  let first = null;
  const attach = (map) => {
    map.svg.classList.add("drawable");
    map.svg.addEventListener("click", async (ev) => {
      const xy = map.metres(ev);
      const at = xy.map((v) => v.toFixed(1)).join(",");
      if (first === null) {
        first = at;
        map.pin(xy, "#276749", "start");
        status.textContent = "now click the end of your route";
        return;
      }
      const points = {from: first, to: at};
      first = null;
      try {
        const route = await getJSON("/api/draw?" + new URLSearchParams({task, id, ...points}));
        const hint = el("details", {id: "directions"}, el("summary", {text: `${route.steps.length} viewpoints · ${route.distance_m} m · computed directions (hint)`}),
          el("ol", {}, ...route.directions.map((d) => el("li", {text: d}))));
        status.textContent = `route ${route.start} → ${route.end} · click the map twice to draw another`;
        const next = showSteps(drawing, route, task, {from: route.start, to: route.end}, hint);
        attach(next);
        drawing.dataset.ready = "1";
      } catch (err) { map.pin(null); status.textContent = String(err.message); }
    });
  };
  const map = streetMap(area.map, [{nodes: [], colour: "#2b6cb0"}]);
  attach(map);
  drawing.replaceChildren(map.svg);
  box.replaceChildren(status, drawing);
}

async function start() {
  const tasks = await getJSON("/api/tasks");
  const task = el("select", {id: "task", "aria-label": "task set"});
  for (const t of tasks) task.append(el("option", {value: t.id, text: t.id}));
  const episode = el("select", {id: "episode", "aria-label": "episode"});
  const mode = el("select", {id: "mode", "aria-label": "route to annotate"}, el("option", {value: "route", text: "its route"}),
    el("option", {value: "draw", text: "a route I draw on the map around it"}));
  const wanted = new URLSearchParams(location.search);
  if (wanted.get("task")) task.value = wanted.get("task");
  if (wanted.get("mode") === "draw") mode.value = "draw";
  const show = () => (mode.value === "draw" ? showDraw : showRoute)(task.value, episode.value);
  const fill = async () => {
    const list = await getJSON("/api/episodes?" + new URLSearchParams({task: task.value}));
    episode.replaceChildren(...list.map((e) => el("option", {value: e.id, text: `${e.id} · ${e.instruction}`})));
    show();
  };
  task.addEventListener("change", fill);
  episode.addEventListener("change", show);
  mode.addEventListener("change", show);
  main.replaceChildren(el("h1", {text: "Annotate a route"}),
    el("div", {class: "panel"}, el("label", {text: "task set "}), task, el("label", {text: " episode "}), episode,
      el("label", {text: " annotate "}), mode),
    el("div", {id: "route"}));
  fill();
}
start().catch((err) => showError(main, err));
