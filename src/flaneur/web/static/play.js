"use strict";
nav("/play");
const main = document.getElementById("main");
const TURN_KEYS = {ArrowUp: "forward", ArrowLeft: "left", ArrowRight: "right", ArrowDown: "turn_around"};
const TURN_ARROWS = {forward: "↑ forward", left: "← left", right: "→ right", turn_around: "↓ turn around", stop: "■ stop (Enter)"};
const SHORTCUTS = Object.fromEntries(Object.entries(TURN_KEYS).map(([key, label]) => [label, key]));
// Keys typed into a form control, with a modifier (browser shortcuts such as Alt+←) or on a
// focused button or link (Enter and Space press it) are not the game's.
const TYPING = ["INPUT", "SELECT", "TEXTAREA"];
let state = null;
let busy = false;
let pressed = null;  // the slot of the action button last pressed (focus returns to it), null after a key

// A label and its control, kept together on one line where the line breaks.
function field(text, control) {
  return el("span", {class: "field"}, el("label", {for: control.id, text}), " ", control);
}

function setup([tasks, runs]) {
  const player = el("input", {id: "player", "aria-label": "your name", placeholder: "your name", value: localStorage.getItem("flaneur-player") || ""});
  const task = el("select", {id: "task", "aria-label": "task set"});
  for (const t of tasks) task.append(el("option", {value: t.id, text: `${t.id} (${t.scheme || "file"})`}));
  const episode = el("select", {id: "episode", "aria-label": "episode"});
  const into = el("select", {id: "into", "aria-label": "where to save", title: "where your finished episodes are saved"},
    el("option", {value: "", text: "my own run folder (human-<name>)"}));
  for (const r of runs) if (!r.live) into.append(el("option", {value: r.key, text: `beside the agents of run ${r.name}`}));
  const fill = async () => {
    try {
      const list = await getJSON("/api/episodes?" + new URLSearchParams({task: task.value, player: player.value, into: into.value}));
      const left = list.filter((e) => !e.played).length;
      episode.replaceChildren(el("option", {value: "", text: `next unplayed (${left} of ${list.length} left)`}));
      for (const e of list) episode.append(el("option", {value: e.id, text: `${e.played ? "✓ " : ""}${e.id} · ${e.category || ""}`}));
    } catch (err) { showError(document.getElementById("play"), err); }
  };
  task.addEventListener("change", fill);
  player.addEventListener("change", fill);
  into.addEventListener("change", fill);
  const startButton = el("button", {id: "start", text: "start", on: {click: () => begin(task.value, episode.value, player.value, into.value)}});
  player.addEventListener("keydown", (ev) => {  // Enter in the name starts, unless an episode is under way
    if (ev.key === "Enter" && (!state || state.done)) startButton.click();
  });
  main.replaceChildren(el("h1", {text: "Play"}),
    el("p", {class: "muted", text: "Find the goal using only the street views. Keys: ↑ ← → ↓ (turns), 1–9 to take a street (headings, nodes), Enter to stop where you are; or Tab to a button and press Enter or Space."}),
    el("div", {class: "panel"}, field("player", player), field("task set", task), field("episode", episode),
      field("save", into), startButton),
    el("div", {id: "play"}));
  const wanted = new URLSearchParams(location.search).get("task");
  if (wanted) task.value = wanted;
  (player.value ? startButton : player).focus();
  fill();
}

async function begin(task, episodeId, player, into) {
  localStorage.setItem("flaneur-player", player);
  pressed = null;
  try {
    state = await postJSON("/api/play", {task, episode_id: episodeId || null, player, into: into || null});
    state.into = into || null;
    draw();
  } catch (err) { showError(document.getElementById("play"), err); }
}

async function act(body) {
  if (!state || state.done || busy) return;
  busy = true;
  try {
    const into = state.into;
    state = await postJSON(`/api/play/${encodeURIComponent(state.session)}`, body);
    state.into = into;
    draw();
  } catch (err) { showError(document.getElementById("play"), err); }
  busy = false;
}

// Draw the episode's state. Focus goes where a keyboard player goes on: the action button they
// pressed (its slot); else the instruction at the start and the step line after a game key
// (read out by a screen reader; Enter stops from there); at the end the next-episode button.
function draw() {
  const box = document.getElementById("play");
  const base = {task: state.task};
  const views = el("div", {class: "views", id: "views"});
  box.replaceChildren(el("h2", {text: `${state.episode_id} · ${state.player}`}),
    el("div", {class: "instruction", id: "instruction", tabindex: "-1", text: state.instruction}),
    el("p", {id: "status", class: "muted", tabindex: "-1", text: `step ${state.steps} of ${state.max_steps} · facing ${state.heading.toFixed(0)}° · ${state.scheme} scheme`}),
    views);
  if (state.done) {
    const result = el("div", {class: "panel", id: "result"},
      el("b", {class: state.success ? "ok" : "bad", text: state.success ? "Reached the goal!" : "Not at the goal."}),
      el("span", {text: ` ${state.termination} after ${state.steps} steps · saved in ${state.saved_to || "-"}`}));
    const next = el("button", {id: "again", text: "next episode (N)", on: {click: () => begin(state.task, "", state.player, state.into)}});
    box.append(result, next);
    if (state.map) box.append(streetMap(state.map, [{nodes: state.path, colour: "#dd6b20", width: 3, dots: [state.path[0]]}], 300).svg);
    document.body.dataset.done = "1";
    next.focus();
    return;
  }
  document.body.dataset.done = "0";
  viewStrip(views, base, state.node, state.views);
  const buttons = el("div", {class: "panel", id: "choices"});
  for (const c of state.choices) {
    const text = state.scheme === "turns" ? (TURN_ARROWS[c.label] || c.label)
      : c.slot === 0 ? "■ stop (Enter)" : `${c.slot} · ${c.label}${c.heading !== undefined ? " · " + c.heading.toFixed(0) + "°" : ""}`;
    const key = c.slot === 0 ? "Enter" : state.scheme === "turns" ? SHORTCUTS[c.label] : c.slot < 10 ? String(c.slot) : null;
    buttons.append(el("button", {class: c.slot === 0 ? "stop" : "", "data-slot": c.slot, text, ...(key ? {"aria-keyshortcuts": key} : {}),
      on: {click: () => { pressed = c.slot; act({slot: c.slot}); }}}));
  }
  box.append(buttons);
  const again = pressed === null ? null : buttons.querySelector(`button[data-slot="${pressed}"]`);
  (again || document.getElementById(state.steps ? "status" : "instruction")).focus({preventScroll: !again});
  if (state.last_invalid) box.append(el("p", {class: "bad", text: `last action was invalid: ${state.last_invalid}`}));
}

document.addEventListener("keydown", (ev) => {
  const target = ev.target || document.body;
  if (!state || ev.ctrlKey || ev.altKey || ev.metaKey || TYPING.includes(target.tagName) || target.isContentEditable) return;
  if ((ev.key === "Enter" || ev.key === " ") && target.closest("button, a, summary")) return;
  if (state.done) { if (ev.key === "n" || ev.key === "N") begin(state.task, "", state.player, state.into); return; }
  let choice = null;
  if (ev.key === "Enter" || ev.key === "0") choice = state.choices.find((c) => c.slot === 0);
  else if (state.scheme === "turns" && TURN_KEYS[ev.key]) choice = state.choices.find((c) => c.label === TURN_KEYS[ev.key]);
  else if (/^[1-9]$/.test(ev.key)) choice = state.choices.find((c) => c.slot === Number(ev.key));
  if (choice) { ev.preventDefault(); pressed = null; act({slot: choice.slot}); }
});

Promise.all([getJSON("/api/tasks"), getJSON("/api/runs")]).then(setup).catch((err) => showError(main, err));
