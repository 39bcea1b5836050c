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

const COLOURS = {reference: "#2b6cb0", agent: "#dd6b20", start: "#276749", goal: "#c53030"};
const FULL_WIDTH = 960;  // pixels across a view opened at full size (the server renders 64 to 1280)

// The map's legend, each entry with a swatch drawn as on the map.
function legend() {
  const swatch = (tag, attrs) => {
    const svg = document.createElementNS(SVGNS, "svg");
    for (const [k, v] of Object.entries({width: 26, height: 14, viewBox: "0 0 26 14", "aria-hidden": "true"})) svg.setAttribute(k, v);
    const shape = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs)) shape.setAttribute(k, v);
    svg.append(shape);
    return svg;
  };
  const line = (colour, width, opacity) => swatch("line", {x1: 2, y1: 7, x2: 24, y2: 7, stroke: colour, "stroke-width": width, "stroke-opacity": opacity, "stroke-linecap": "round"});
  const entries = [
    [line(COLOURS.reference, 9, 0.4), "reference path"],
    [line(COLOURS.agent, 3.5, 1), "agent's path"],
    [swatch("circle", {cx: 13, cy: 7, r: 6, fill: COLOURS.start}), "start"],
    [swatch("polygon", {points: "13,0 20,7 13,14 6,7", fill: COLOURS.goal}), "goal"],
    [swatch("polygon", {points: "13,1 18,13 13,10 8,13", fill: "#1a202c"}), "agent at this step"],
  ];
  return el("ul", {class: "legend", id: "legend", "aria-label": "map legend"},
    ...entries.map(([icon, text]) => el("li", {}, icon, text)));
}

// One modal dialog for a view at full size: Escape, the close button or a click beside the
// picture closes it, and focus goes back to the thumbnail that opened it.
function viewDialog() {
  const img = el("img", {id: "full-view-img", alt: ""});
  const title = el("h3", {id: "full-view-title"});
  const close = el("button", {type: "button", id: "full-view-close", text: "✕ close"});
  const dialog = el("dialog", {id: "full-view", "aria-labelledby": "full-view-title"},
    el("div", {class: "full-view-head"}, title, close), img);
  let opener = null;
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (ev) => { if (ev.target === dialog) dialog.close(); });
  dialog.addEventListener("close", () => { if (opener) opener.focus(); });
  document.body.append(dialog);
  return {dialog, open(src, caption, from) {
    opener = from;
    title.textContent = caption;
    img.alt = `street view, ${caption}`;
    img.removeAttribute("src");
    img.setAttribute("src", src);
    dialog.showModal();
    close.focus();
  }};
}

async function start() {
  let data;
  try {
    data = await getJSON(`/api/runs/${encodeURIComponent(params.get("run") || "")}/episode?` +
      new URLSearchParams({task: params.get("task") || "", agent: params.get("agent") || "", id: params.get("id") || ""}));
  } catch (err) { showError(main, err); return; }
  const base = {task: data.task, run: params.get("run")};
  const labelGoals = data.goals.length <= 3;  // more goals (any of several places) are marked, not named
  const map = streetMap(data.map, [  // the agent's path over the reference, the start on top
    {nodes: data.reference, colour: COLOURS.reference, width: 9, opacity: 0.4, name: "reference"},
    {nodes: data.path, colour: COLOURS.agent, width: 3.5, opacity: 1, name: "agent"},
    {nodes: [], colour: COLOURS.goal, marks: data.goals.map((node) => ({node, shape: "diamond", label: labelGoals ? "goal" : ""}))},
    {nodes: [], colour: COLOURS.start, marks: data.start ? [{node: data.start, label: "start"}] : []},
  ]);
  const full = viewDialog();
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
      el("div", {}, map.svg, legend(),
        el("details", {}, el("summary", {text: "episode metrics"}), kv(data.metrics))),
      el("div", {}, el("div", {class: "panel"},
        el("button", {id: "prev", text: "◀", title: "previous step (←)", "aria-label": "previous step", on: {click: () => go(-1)}}),
        slider, el("button", {id: "next", text: "▶", title: "next step (→)", "aria-label": "next step", on: {click: () => go(1)}}), label),
        views, detail)));
  if (data.error) main.append(el("p", {class: "error", text: data.error}));
  function show(i) {
    const step = data.steps[i];
    slider.value = i;
    label.textContent = ` step ${i} of ${data.steps.length - 1} · at ${step.node} facing ${step.heading.toFixed(0)}°`;
    map.marker(step.node, step.heading);
    viewStrip(views, base, step.node, step.views);
    openable(views, step, i);
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
  // each view a button that opens it at full size
  function openable(box, step, i) {
    box.querySelectorAll("figure").forEach((figure, k) => {
      const d = step.views[k], img = figure.querySelector("img");
      const name = d.label.endsWith("°") ? d.label : `${d.label} · ${d.heading.toFixed(0)}°`;
      const button = el("button", {type: "button", class: "view-open", title: "open at full size",
        "aria-label": `open view ${d.label} at full size`});
      figure.replaceChild(button, img);
      button.append(img);
      button.addEventListener("click", () => full.open(
        viewURL({...base, node: step.node, heading: String(d.heading), width: String(FULL_WIDTH)}),
        `step ${i} · at ${step.node} · ${name}`, button));
    });
  }
  function go(delta) { show(Math.max(0, Math.min(data.steps.length - 1, Number(slider.value) + delta))); }
  slider.addEventListener("input", () => show(Number(slider.value)));
  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.altKey || ev.metaKey) return;  // browser shortcuts (Alt+← is back)
    if (full.dialog.open) return;  // a full-size view is open: Escape closes it, nothing steps
    if (ev.key === "ArrowRight" || ev.key === "l") { go(1); ev.preventDefault(); }
    if (ev.key === "ArrowLeft" || ev.key === "h") { go(-1); ev.preventDefault(); }
    if (ev.key === "Home") show(0);
    if (ev.key === "End") show(data.steps.length - 1);
  });
  show(0);
  document.body.dataset.ready = String(performance.now());
}
start();
