"use strict";
nav("/replay");
const main = document.getElementById("main");
const params = new URLSearchParams(location.search);

function kv(obj) {
  const table = el("table", {class: "kv"});
  for (const [k, v] of Object.entries(obj || {})) {
    if (v === null || v === undefined || v === "") continue;
    table.append(el("tr", {}, el("td", {text: k}), el("td", {text: fmt(v)})));
  }
  return table;
}

async function start() {
  let data;
  try {
    data = await getJSON(`/api/runs/${encodeURIComponent(params.get("run") || "")}/episode?` +
      new URLSearchParams({task: params.get("task") || "", agent: params.get("agent") || "", id: params.get("id") || ""}));
  } catch (err) { showError(main, err); return; }
  const base = {task: data.task, run: params.get("run")};
  const map = streetMap(data.map, [
    {nodes: data.reference, colour: "#2b6cb0", width: 6},
    {nodes: data.path, colour: "#dd6b20", width: 3, dots: [data.path[0]]},
    {nodes: [], colour: "#c53030", dots: data.goals},
  ]);
  const slider = el("input", {type: "range", min: 0, max: data.steps.length - 1, value: 0, id: "step", "aria-label": "step"});
  const label = el("span", {id: "step-label"});
  const views = el("div", {class: "views", id: "views"});
  const detail = el("div", {id: "detail"});
  const ok = data.metrics && (data.metrics.tc || data.metrics.tcp || data.metrics.sr);
  main.replaceChildren(
    el("h2", {text: `${data.episode_id} · ${data.agent}${data.player ? " (" + data.player + ")" : ""} · ${data.task}`}),
    el("p", {class: ok ? "ok" : "bad", text: `${data.termination} · ${data.steps.length - 1} actions · ${data.scheme} scheme`}),
    el("p", {class: "muted", id: "imagery", text: data.views && !data.views.startsWith("synthetic")
      ? `views: the run's ${data.views.split(":")[0]} imagery where the app has it offline (panorama files, the view cache), synthetic elsewhere`
      : "views: synthetic (re-rendered)"}),
    el("div", {class: "instruction", id: "instruction", text: data.instruction}),
    el("div", {class: "cols"},
      el("div", {}, map.svg, el("p", {class: "muted", text: "blue: reference · orange: agent · red: goals"}),
        el("details", {}, el("summary", {text: "episode metrics"}), kv(data.metrics))),
      el("div", {}, el("div", {class: "panel"},
        el("button", {id: "prev", text: "◀", title: "previous step (←)", on: {click: () => go(-1)}}),
        slider, el("button", {id: "next", text: "▶", title: "next step (→)", on: {click: () => go(1)}}), label),
        views, detail)));
  if (data.error) main.append(el("p", {class: "error", text: data.error}));
  function show(i) {
    const step = data.steps[i];
    slider.value = i;
    label.textContent = ` step ${i} of ${data.steps.length - 1} · at ${step.node} facing ${step.heading.toFixed(0)}°`;
    map.marker(step.node, step.heading);
    viewStrip(views, base, step.node, step.views);
    detail.replaceChildren();
    if (step.action !== undefined) {
      detail.append(el("div", {class: "panel"}, el("b", {text: "action: "}), el("span", {id: "action", text: String(step.action)}),
        step.invalid ? el("span", {class: "bad", text: ` · invalid: ${step.invalid.reason}`}) : null));
      if (step.text) detail.append(el("h4", {text: "observation text"}), el("pre", {text: step.text}));
      const rec = step.record || {};
      if (rec.prompt) detail.append(el("h4", {text: "prompt"}), el("pre", {text: String(rec.prompt)}));
      if (rec.raw_output) detail.append(el("h4", {text: "raw model output"}), el("pre", {id: "raw", text: String(rec.raw_output)}));
      const rest = Object.fromEntries(Object.entries(rec).filter(([k]) => k !== "raw_output" && k !== "prompt"));
      if (Object.keys(rest).length) detail.append(el("h4", {text: "step record (parsed action, parse failures, tokens, latency…)"}), kv(rest));
    } else {
      detail.append(el("div", {class: "panel", text: `final position · ${data.termination}`}), kv(data.usage));
    }
  }
  function go(delta) { show(Math.max(0, Math.min(data.steps.length - 1, Number(slider.value) + delta))); }
  slider.addEventListener("input", () => show(Number(slider.value)));
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowRight" || ev.key === "l") { go(1); ev.preventDefault(); }
    if (ev.key === "ArrowLeft" || ev.key === "h") { go(-1); ev.preventDefault(); }
    if (ev.key === "Home") show(0);
    if (ev.key === "End") show(data.steps.length - 1);
  });
  show(0);
  document.body.dataset.ready = String(performance.now());
}
start();
