// Shared helpers. Data from runs is only ever put into the page with textContent or
// setAttribute on fixed attribute names, never parsed as markup.
"use strict";
const SVGNS = "http://www.w3.org/2000/svg";  // the SVG namespace name, never fetched
// The app's settings: a tile layer only when `flaneur serve --tiles` gave one.
const SETTINGS = fetch("/api/settings").then((r) => r.json()).catch(() => ({}));
const MAX_TILES = 64;

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

async function getJSON(url, options) {
  const response = await fetch(url, options);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// State-changing requests carry the server's token (from /api/settings, which only pages of
// this server can read); the server refuses them without it.
async function postJSON(url, body) {
  const settings = await SETTINGS;
  return getJSON(url, {method: "POST",
                       headers: {"Content-Type": "application/json", "X-Flaneur-Token": settings.token || ""},
                       body: JSON.stringify(body)});
}

function fmt(value, digits = 3) {
  if (value === null || value === undefined) return "-";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function nav(here) {
  const header = el("header", {}, el("b", {text: "flaneur"}));
  for (const [href, label] of [["/", "runs"], ["/live", "live"], ["/play", "play"], ["/annotate", "annotate"]]) {
    header.append(el("a", {href, class: href === here ? "here" : "", text: label}));
  }
  document.body.prepend(header);
}

function showError(where, err) {
  where.replaceChildren(el("p", {class: "error", text: String(err.message || err)}));
}

// A table whose columns sort on click (numbers numerically, "-" last).
// A table sorted by clicking (or pressing Enter or Space on) a column's header button; the
// sorted column carries aria-sort and an arrow. Rows with `onRow` open with a click or with
// Enter when focused (Tab reaches them).
function sortableTable(heads, rows, onRow) {
  const table = el("table");
  const headRow = el("tr");
  const body = el("tbody");
  let order = {col: -1, dir: 1};
  const draw = () => {
    body.replaceChildren();
    for (const row of rows) {
      const tr = el("tr");
      row.cells.forEach((cell) => tr.append(el("td", {text: fmt(cell), class: row.cls || ""})));
      if (onRow) {
        tr.style.cursor = "pointer";
        tr.tabIndex = 0;
        tr.addEventListener("click", () => onRow(row));
        tr.addEventListener("keydown", (ev) => { if (ev.key === "Enter") onRow(row); });
      }
      body.append(tr);
    }
  };
  const cells = heads.map((head) => el("th", {"aria-sort": "none"}));
  const sortBy = (i) => {
    order = {col: i, dir: order.col === i ? -order.dir : 1};
    rows.sort((a, b) => {
      const x = a.cells[i], y = b.cells[i];
      if (x === y) return 0;
      if (x === null || x === undefined || x === "-") return 1;
      if (y === null || y === undefined || y === "-") return -1;
      return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * order.dir;
    });
    cells.forEach((th, k) => {
      const sorted = k === order.col ? (order.dir > 0 ? "ascending" : "descending") : "none";
      th.setAttribute("aria-sort", sorted);
      th.querySelector(".arrow").textContent = sorted === "none" ? "" : (sorted === "ascending" ? " ▲" : " ▼");
    });
    draw();
  };
  heads.forEach((head, i) => {  // the button's click (a key press too) reaches the header
    cells[i].append(el("button", {type: "button", class: "sort", title: `sort by ${head}`},
      head, el("span", {class: "arrow", "aria-hidden": "true"})));
    cells[i].addEventListener("click", () => sortBy(i));
    headRow.append(cells[i]);
  });
  table.append(el("thead", {}, headRow), body);
  draw();
  return table;
}

// An SVG street map: streets, reference path, agent path, goals; returns {svg, marker(node, heading)}.
function streetMap(map, layers, size = 420) {
  const [x0, y0, x1, y1] = map.bounds;
  const span = Math.max(x1 - x0, y1 - y0) || 1;
  const cx = (x0 + x1) / 2 - span / 2, cy = (y0 + y1) / 2 - span / 2;
  const px = ([x, y]) => [((x - cx) / span) * size, size - ((y - cy) / span) * size];
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("class", "map");
  svg.setAttribute("width", size); svg.setAttribute("height", size);
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  const add = (tag, attrs) => {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    svg.append(node);
    return node;
  };
  const ground = add("g", {class: "tiles"});
  SETTINGS.then((settings) => { if (settings.tiles) addTiles(ground, map, settings.tiles, px, [cx, cy, span], size); });
  for (const s of map.segments) {
    const [a, b] = [px([s[0], s[1]]), px([s[2], s[3]])];
    add("line", {x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: "#c8c8c8", "stroke-width": 2});
  }
  for (const layer of layers) {
    const pts = layer.nodes.filter((n) => map.nodes[n]).map((n) => px(map.nodes[n]).join(","));
    if (pts.length) add("polyline", {points: pts.join(" "), fill: "none", stroke: layer.colour,
      "stroke-width": layer.width || 4, "stroke-opacity": 0.8, "stroke-linejoin": "round",
      "stroke-dasharray": layer.dash || ""});
  }
  const dot = (node, colour, r) => {
    if (!map.nodes[node]) return;
    const [x, y] = px(map.nodes[node]);
    add("circle", {cx: x, cy: y, r, fill: colour});
  };
  for (const layer of layers) for (const n of layer.dots || []) dot(n, layer.colour, 6);
  const marker = add("polygon", {points: "0,-10 6,6 0,2 -6,6", fill: "#1a202c", visibility: "hidden"});
  return {svg, bounds: map.bounds,
    // metres of the city projection under a mouse event (inverse of px)
    metres(ev) {
      const box = svg.getBoundingClientRect();
      const [x, y] = [(ev.clientX - box.left) * size / box.width, (ev.clientY - box.top) * size / box.height];
      return [cx + (x / size) * span, cy + ((size - y) / size) * span];
    },
    marker(node, heading) {
    if (!map.nodes[node]) { marker.setAttribute("visibility", "hidden"); return; }
    const [x, y] = px(map.nodes[node]);
    marker.setAttribute("transform", `translate(${x},${y}) rotate(${heading})`);
    marker.setAttribute("visibility", "visible");
  }};
}

// Raster tiles (Web Mercator {z}/{x}/{y}) under the streets of a map. Latitude and longitude
// are mapped linearly onto the map's metres between its corners (the local projection is
// near-linear over the few kilometres a map shows).
function addTiles(group, map, template, px, [cx, cy, span], size) {
  if (!map.corners) return;
  const [[la0, ln0], [la1, ln1]] = map.corners;
  const [x0, y0, x1, y1] = map.bounds;
  if (la1 === la0 || ln1 === ln0) return;
  const toXY = (lat, lng) => [x0 + ((lng - ln0) / (ln1 - ln0)) * (x1 - x0), y0 + ((lat - la0) / (la1 - la0)) * (y1 - y0)];
  const latOf = (y) => la0 + ((y - y0) / (y1 - y0)) * (la1 - la0);
  const lngOf = (x) => ln0 + ((x - x0) / (x1 - x0)) * (ln1 - ln0);
  const [south, north, west, east] = [latOf(cy), latOf(cy + span), lngOf(cx), lngOf(cx + span)];
  const metresPerPixel = span / size;
  const rad = Math.PI / 180;
  const z = Math.max(1, Math.min(19, Math.round(Math.log2((156543.03 * Math.cos(((south + north) / 2) * rad)) / metresPerPixel))));
  const n = 2 ** z;
  const tileX = (lng) => Math.floor(((lng + 180) / 360) * n);
  const tileY = (lat) => Math.floor(((1 - Math.log(Math.tan(lat * rad) + 1 / Math.cos(lat * rad)) / Math.PI) / 2) * n);
  const lngAt = (x) => (x / n) * 360 - 180;
  const latAt = (y) => Math.atan(Math.sinh(Math.PI - (2 * Math.PI * y) / n)) / rad;
  const tiles = [];
  for (let x = tileX(west); x <= tileX(east); x++) for (let y = tileY(north); y <= tileY(south); y++) tiles.push([x, y]);
  for (const [x, y] of tiles.slice(0, MAX_TILES)) {
    const [ax, ay] = px(toXY(latAt(y), lngAt(x)));
    const [bx, by] = px(toXY(latAt(y + 1), lngAt(x + 1)));
    const href = template.replace("{z}", z).replace("{x}", x).replace("{y}", y);
    const image = document.createElementNS(SVGNS, "image");
    for (const [k, v] of Object.entries({href, x: ax, y: ay, width: bx - ax, height: by - ay, opacity: 0.55, preserveAspectRatio: "none"})) image.setAttribute(k, v);
    group.append(image);
  }
  const credit = document.createElementNS(SVGNS, "text");
  for (const [k, v] of Object.entries({x: 4, y: size - 4, "font-size": 9, fill: "#4a5568"})) credit.setAttribute(k, v);
  credit.textContent = `tiles: ${new URL(template.replace(/[{}]/g, "")).host}`;
  group.append(credit);
}

function viewURL(params) {
  return "/api/view?" + new URLSearchParams(params).toString();
}

// Street views of one step, one figure per direction.
function viewStrip(container, base, node, directions) {
  container.replaceChildren();
  for (const d of directions) {
    const img = el("img", {alt: `view ${d.label}`, src: viewURL({...base, node, heading: String(d.heading)})});
    const caption = d.label.endsWith("°") ? d.label : `${d.label} · ${d.heading.toFixed(0)}°`;
    container.append(el("figure", {class: d.chosen ? "chosen" : ""}, img, el("figcaption", {text: caption})));
  }
}
