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
  for (const [href, label] of [["/", "runs"], ["/live", "live"], ["/play", "play"], ["/annotate", "annotate"], ["/glossary", "glossary"]]) {
    header.append(el("a", {href, class: href === here ? "here" : "", text: label}));
  }
  document.body.prepend(header);
}

function showError(where, err) {
  where.replaceChildren(el("p", {class: "error", text: String(err.message || err)}));
}

// A table cell is a value, or {value, text}: sorted by the value, shown as the text (a mean
// shown with its interval sorts by the mean).
function cellValue(cell) { return cell !== null && typeof cell === "object" ? cell.value : cell; }
function cellText(cell) { return cell !== null && typeof cell === "object" ? cell.text : fmt(cell); }

// A figure {mean, ci95, n} as a table cell: "0.420 [0.350, 0.490]", sorted by the mean.
function figureCell(f) {
  if (!f || f.mean === null || f.mean === undefined) return null;
  // no-break spaces: a figure and its interval stay on one line
  const ci = f.ci95 && f.ci95.every((v) => v !== null && Number.isFinite(v)) ? `\u00a0[${fmt(f.ci95[0])},\u00a0${fmt(f.ci95[1])}]` : "";
  return {value: f.mean, text: fmt(f.mean) + ci};
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
      row.cells.forEach((cell) => tr.append(el("td", {text: cellText(cell), class: row.cls || ""})));
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
      const x = cellValue(a.cells[i]), y = cellValue(b.cells[i]);
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
    const name = typeof head === "object" ? head.text : head;  // {text, title}: a glossary hint
    cells[i].append(el("button", {type: "button", class: "sort", title: typeof head === "object" && head.title ? `${head.title} (sort by ${name})` : `sort by ${name}`},
      name, el("span", {class: "arrow", "aria-hidden": "true"})));
    cells[i].addEventListener("click", () => sortBy(i));
    headRow.append(cells[i]);
  });
  table.append(el("thead", {}, headRow), body);
  draw();
  return table;
}

// An SVG street map of /api JSON (metres, y north): the streets and their names, the layers'
// paths in order (a later layer on top), their dots and labelled marks, a scale bar and the
// agent's marker. A layer is {nodes, colour, width, opacity, dash, name (a class of its
// path), dots: [node], marks: [{node, label, shape: "circle" | "diamond"}]}.
// Returns {svg, bounds, metres(event), marker(node, heading), pin([x, y], colour, label)}.
function streetMap(map, layers, size = 420) {
  const [x0, y0, x1, y1] = map.bounds;
  const span = Math.max(x1 - x0, y1 - y0) || 1;
  const cx = (x0 + x1) / 2 - span / 2, cy = (y0 + y1) / 2 - span / 2;
  const px = ([x, y]) => [((x - cx) / span) * size, size - ((y - cy) / span) * size];
  const svg = document.createElementNS(SVGNS, "svg");
  for (const [k, v] of Object.entries({class: "map", width: size, height: size, viewBox: `0 0 ${size} ${size}`,
    role: "img", "aria-label": "street map"})) svg.setAttribute(k, v);
  const add = (tag, attrs, parent = svg) => {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    parent.append(node);
    return node;
  };
  const ground = add("g", {class: "tiles"});
  SETTINGS.then((settings) => { if (settings.tiles) addTiles(ground, map, settings.tiles, px, [cx, cy, span], size); });
  for (const s of map.segments) {
    const [a, b] = [px([s[0], s[1]]), px([s[2], s[3]])];
    add("line", {x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: "#c8c8c8", "stroke-width": 2});
  }
  const paths = layers.map((layer) => layer.nodes.filter((n) => map.nodes[n]).map((n) => px(map.nodes[n])));
  const drawn = paths.flatMap((xy) => xy.slice(1).map((p, i) => [xy[i], p]));  // segments labels keep clear of
  streetNames(add, map.streets || [], px, `map${++MAP_COUNT}`, drawn);
  for (const [k, layer] of layers.entries()) {
    const pts = paths[k].map((p) => p.join(","));
    if (pts.length) add("polyline", {points: pts.join(" "), fill: "none", stroke: layer.colour, class: layer.name || "",
      "stroke-width": layer.width || 4, "stroke-opacity": layer.opacity || 0.8, "stroke-linejoin": "round",
      "stroke-linecap": "round", "stroke-dasharray": layer.dash || ""});
  }
  const dot = (node, colour, r) => {
    if (!map.nodes[node]) return;
    const [x, y] = px(map.nodes[node]);
    add("circle", {cx: x, cy: y, r, fill: colour});
  };
  for (const layer of layers) for (const n of layer.dots || []) dot(n, layer.colour, 6);
  for (const layer of layers) {
    for (const m of layer.marks || []) if (map.nodes[m.node]) mapMark(add, px(map.nodes[m.node]), layer.colour, m, size, drawn);
  }
  scaleBar(add, map.scale_m, span, size);
  const pins = add("g", {class: "pins"});
  const marker = add("polygon", {points: "0,-10 6,6 0,2 -6,6", fill: "#1a202c", visibility: "hidden"});
  return {svg, bounds: map.bounds,
    // metres of the city projection under a mouse event: the event's screen point through the
    // inverse of the SVG's screen transform (CSS scaling, letterboxing, borders, scrolling)
    metres(ev) {
      const screen = svg.getScreenCTM();
      if (!screen) return [NaN, NaN];
      const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(screen.inverse());
      return [cx + (p.x / size) * span, cy + ((size - p.y) / size) * span];
    },
    // a labelled mark at metres [x, y] (replacing the previous one), or none
    pin(xy, colour, label) {
      pins.replaceChildren();
      if (xy) mapMark((tag, attrs, parent = pins) => add(tag, attrs, parent), px(xy), colour, {label}, size);
    },
    marker(node, heading) {
    if (!map.nodes[node]) { marker.setAttribute("visibility", "hidden"); return; }
    const [x, y] = px(map.nodes[node]);
    marker.setAttribute("transform", `translate(${x},${y}) rotate(${heading})`);
    marker.setAttribute("visibility", "visible");
  }};
}
let MAP_COUNT = 0;  // maps drawn on this page, so that their street-name paths have unique ids
const NAME_CHAR_PX = 5.6;  // about the width of a character of the 10 px street names
const HALO = {stroke: "#fafafa", "stroke-width": 3, "paint-order": "stroke", "stroke-linejoin": "round"};

// Street names written along their streets (the longest stretch of each, from the server):
// centred on the stretch, or moved along it, where the name fits and does not run into a
// name already written; a name whose street a path is drawn on goes beside the street.
function streetNames(add, streets, px, mapId, drawn) {
  const group = add("g", {class: "street-names"});
  const written = [];  // each name written as a segment: its two ends in pixels
  streets.forEach((street, k) => {
    const pts = street.points.map(px);
    const lengths = pts.slice(1).map((p, i) => Math.hypot(p[0] - pts[i][0], p[1] - pts[i][1]));
    const total = lengths.reduce((a, b) => a + b, 0);
    const half = (street.name.length * NAME_CHAR_PX) / 2 + 4;
    const at = (d) => {  // the point `d` pixels along the stretch
      let i = 0;
      while (i < lengths.length - 1 && d > lengths[i]) d -= lengths[i++];
      const t = lengths[i] ? Math.min(1, d / lengths[i]) : 0;
      return [pts[i][0] + t * (pts[i + 1][0] - pts[i][0]), pts[i][1] + t * (pts[i + 1][1] - pts[i][1])];
    };
    const place = [0.5, 0.3, 0.7, 0.15, 0.85].map((f) => f * total)
      .filter((d) => d >= half && d <= total - half)
      .map((d) => ({d, ends: [at(d - half), at(d + half)]}))
      .find(({ends}) => !written.some((other) => segmentsGap(ends, other) < 8));
    if (!place) return;
    written.push(place.ends);
    const id = `${mapId}-street-${k}`;
    add("path", {id, d: "M" + pts.map((p) => p.map((v) => v.toFixed(1)).join(",")).join(" L"), fill: "none"}, group);
    const covered = drawn.some(([a, b]) => segmentGap(at(place.d), a, b) < 6);
    const text = add("text", {class: "street-name", "font-size": 10, fill: "#4a5568", dy: covered ? -6 : 3.5, ...HALO}, group);
    const along = add("textPath", {href: `#${id}`, startOffset: (place.d / total * 100).toFixed(1) + "%", "text-anchor": "middle"}, text);
    along.textContent = street.name;
  });
}

// Distance between segments [a, b] and [c, d] (0 where they cross).
function segmentsGap([a, b], [c, d]) {
  const side = (p, q, r) => Math.sign((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]));
  if (side(a, b, c) * side(a, b, d) < 0 && side(c, d, a) * side(c, d, b) < 0) return 0;
  return Math.min(segmentGap(a, c, d), segmentGap(b, c, d), segmentGap(c, a, b), segmentGap(d, a, b));
}

// A labelled mark at SVG point [x, y]: a circle or a diamond with a white rim, its label on
// the side (right, left, above, below) farthest from the `drawn` segments and inside the map.
function mapMark(add, [x, y], colour, {label, shape}, size, drawn = []) {
  const group = add("g", {class: "mark", "data-label": label || ""});
  const attrs = {fill: colour, stroke: "#fff", "stroke-width": 2};
  if (shape === "diamond") add("polygon", {points: `${x},${y - 9} ${x + 9},${y} ${x},${y + 9} ${x - 9},${y}`, ...attrs}, group);
  else add("circle", {cx: x, cy: y, r: 7, ...attrs}, group);
  if (!label) return;
  const half = (label.length * 6.5) / 2;
  const sides = [[x + 11, y + 4, "start", x + 11 + half, y], [x - 11, y + 4, "end", x - 11 - half, y],
    [x, y - 13, "middle", x, y - 17], [x, y + 20, "middle", x, y + 16]];
  const clear = ([, , , u, v]) => {
    const inside = u - half > 0 && u + half < size && v > 8 && v < size - 8;
    const gaps = drawn.map(([a, b]) => segmentGap([u, v], a, b));
    return (inside ? 0 : -1000) + Math.min(40, ...gaps);
  };
  const [tx, ty, anchor] = sides.reduce((best, side) => (clear(side) > clear(best) ? side : best));
  const text = add("text", {x: tx, y: ty, "text-anchor": anchor, "font-size": 11, "font-weight": "bold", fill: colour, ...HALO}, group);
  text.textContent = label;
}

// Distance from point p to the segment from a to b.
function segmentGap([px, py], [ax, ay], [bx, by]) {
  const [dx, dy] = [bx - ax, by - ay];
  const t = dx || dy ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy))) : 0;
  return Math.hypot(px - ax - t * dx, py - ay - t * dy);
}

// A scale bar of `metres` (a round length from the server) in the map's bottom right corner.
function scaleBar(add, metres, span, size) {
  if (!metres) return;
  const length = (metres / span) * size, right = size - 12, y = size - 10;
  const group = add("g", {class: "scale"});
  add("rect", {x: right - length - 8, y: y - 19, width: length + 16, height: 24, rx: 3, fill: "#fafafa", "fill-opacity": 0.85}, group);
  add("path", {d: `M${right - length},${y - 5} V${y} H${right} V${y - 5}`, fill: "none", stroke: "#1a202c", "stroke-width": 1.5}, group);
  const text = add("text", {x: right - length / 2, y: y - 7, "text-anchor": "middle", "font-size": 10, fill: "#1a202c"}, group);
  text.textContent = metres >= 1000 ? `${metres / 1000} km` : `${metres} m`;
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
