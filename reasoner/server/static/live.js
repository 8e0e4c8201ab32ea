// The live page: detections from /live/events (server-sent events) in a table and, where the
// knowledge gives their arguments WGS84 coordinates, on a map of US state borders drawn as SVG
// (an equirectangular projection, x scaled by the cosine of the view's middle latitude).
// A finished replay gets a time slider; clicking a detection shows the input events it was
// built from and its RDF description, read from /sparql.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const COLOURS = ["#f2c200", "#e4572e", "#4c72b0", "#55a868", "#8172b2", "#937860", "#da8bc3"];
const CONTIGUOUS_US = {west: -125, east: -66, south: 24, north: 50};

const detections = [];
const colours = new Map();
let states = [];
let finished = false;
let limit = Infinity;
let selected = null;
let drawn = null; // the view the state borders were last drawn for
let pending = false;

const map = document.getElementById("map");
const rows = document.querySelector("#detections tbody");
const state = document.getElementById("state");
const slider = document.getElementById("slider");
const sliderTime = document.getElementById("slider-time");

function text(value) {
  if (Array.isArray(value)) return `[${value.map(text).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    if ("iri" in value) return `<${value.iri}>`;
    return `${value.functor}(${value.args.map(text).join(", ")})`;
  }
  return String(value);
}

function time(record, t) {
  return record.dates ? new Date(t * 1000).toISOString().replace(".000Z", "Z") : String(t);
}

function colour(name) {
  if (!colours.has(name)) {
    colours.set(name, COLOURS[colours.size % COLOURS.length]);
    const item = document.createElement("span");
    const dot = document.createElement("i");
    dot.setAttribute("class", `dot-${colours.size - 1}`);
    dot.dataset.colour = colours.get(name);
    item.append(dot, name);
    document.getElementById("legend").append(item);
    paintLegend();
  }
  return colours.get(name);
}

function paintLegend() {
  // CSSOM properties (not style attributes), which the Content-Security-Policy allows.
  for (const dot of document.querySelectorAll("#legend i")) dot.style.background = dot.dataset.colour;
}

function cells(row, values) {
  for (const value of values) {
    const cell = document.createElement("td");
    cell.textContent = value;
    row.append(cell);
  }
}

function visible(record) {
  return record.end <= limit;
}

function addDetection(record) {
  detections.push(record);
  const row = document.createElement("tr");
  row.dataset.id = String(record.id);
  cells(row, [record.id, record.name, record.args.map(text).join(", "),
    time(record, record.start), time(record, record.end)]);
  row.addEventListener("click", () => select(record));
  row.classList.toggle("hidden", !visible(record));
  const table = rows.closest(".table-wrap");
  const following = table.scrollTop + table.clientHeight >= table.scrollHeight - 40;
  rows.append(row);
  if (following) table.scrollTop = table.scrollHeight; // keep the newest in view
  colour(record.name);
  schedule();
}

function schedule() {
  if (!pending) {
    pending = true;
    requestAnimationFrame(() => { pending = false; render(); });
  }
}

function places() {
  // Each located position once (a place's IRI and its name are one marker, labelled by the
  // name), with the detections naming it. A marker shows its most telling detection: that of
  // the rarest event among them (a warning rather than one of many readings), the latest one
  // of that event. Markers that are some detection's first argument (what it is about) are
  // labelled; the others (places mentioned) have their name as a tooltip.
  const found = new Map();
  const frequency = new Map();
  for (const record of detections) {
    if (!visible(record)) continue;
    frequency.set(record.name, (frequency.get(record.name) || 0) + 1);
    const here = new Set();
    const first = text(record.args[0]);
    for (const place of record.places) {
      const position = `${place.lat},${place.lon}`;
      const entry = found.get(position) || {lat: place.lat, lon: place.lon, records: []};
      const iri = place.arg !== null && typeof place.arg === "object";
      if (!entry.key || (entry.iri && !iri)) Object.assign(entry, {key: text(place.arg), iri});
      if (text(place.arg) === first) entry.subject = true;
      if (!here.has(position)) entry.records.push(record);
      here.add(position);
      found.set(position, entry);
    }
  }
  const located = [...found.values()];
  for (const entry of located) {
    entry.count = entry.records.length;
    entry.shown = entry.records.reduce((best, record) =>
      frequency.get(record.name) <= frequency.get(best.name) ? record : best);
    entry.rank = frequency.get(entry.shown.name);
  }
  return located.sort((a, b) => b.rank - a.rank); // the rarest events drawn last, on top
}

function view(located) {
  if (located.length === 0) return CONTIGUOUS_US;
  const lats = located.map((p) => p.lat), lons = located.map((p) => p.lon);
  const south = Math.min(...lats), north = Math.max(...lats);
  const west = Math.min(...lons), east = Math.max(...lons);
  const pad = Math.max(1.5, 0.2 * Math.max(north - south, east - west));
  return {west: west - pad, east: east + pad, south: south - pad, north: north + pad};
}

function render() {
  const located = places();
  const box = view(located);
  const k = Math.cos(((box.north + box.south) / 2) * Math.PI / 180);
  map.setAttribute("viewBox",
    `${box.west * k} ${-box.north} ${(box.east - box.west) * k} ${box.north - box.south}`);
  if (!drawn || Math.abs(drawn - k) > 1e-3) drawStates(k);
  const size = Math.max(box.east - box.west, box.north - box.south);
  const markers = document.getElementById("markers");
  markers.replaceChildren();
  for (const place of located) {
    const group = document.createElementNS(SVG_NS, "g");
    const circle = document.createElementNS(SVG_NS, "circle");
    circle.setAttribute("cx", place.lon * k);
    circle.setAttribute("cy", -place.lat);
    circle.setAttribute("r", size * (0.008 + 0.002 * Math.min(place.count, 5)));
    circle.setAttribute("fill", colour(place.shown.name));
    circle.setAttribute("class", place.records.includes(selected) ? "marker selected" : "marker");
    circle.dataset.key = place.key;
    circle.dataset.event = place.shown.name;
    const title = document.createElementNS(SVG_NS, "title");
    title.textContent = `${place.key}: ${place.count} detections, shown: ${place.shown.name}`;
    circle.append(title);
    circle.addEventListener("click", () => select(place.shown));
    const label = document.createElementNS(SVG_NS, "text");
    label.setAttribute("x", place.lon * k + size * 0.015);
    label.setAttribute("y", -place.lat - size * 0.01);
    label.setAttribute("font-size", size * 0.025);
    label.setAttribute("stroke-width", size * 0.004);
    label.setAttribute("class", "label");
    label.textContent = place.key;
    group.append(circle);
    if (place.subject) group.append(label);
    markers.append(group);
  }
  const shown = detections.filter(visible).length;
  state.textContent = finished
    ? `replay finished: ${detections.length} detections (${shown} shown)`
    : `replaying: ${detections.length} detections so far`;
}

function drawStates(k) {
  drawn = k;
  const group = document.getElementById("states");
  group.replaceChildren();
  for (const feature of states) {
    const polygons = feature.geometry.type === "Polygon"
      ? [feature.geometry.coordinates] : feature.geometry.coordinates;
    const d = polygons.map((rings) => rings.map((ring) =>
      "M" + ring.map(([lon, lat]) => `${(lon * k).toFixed(3)},${-lat}`).join("L") + "Z").join(""))
      .join("");
    const path = document.createElementNS(SVG_NS, "path");
    path.setAttribute("d", d);
    path.setAttribute("class", "state");
    const title = document.createElementNS(SVG_NS, "title");
    title.textContent = feature.properties.name;
    path.append(title);
    group.append(path);
  }
}

async function select(record) {
  selected = record;
  for (const row of rows.querySelectorAll("tr.selected")) row.classList.remove("selected");
  const row = rows.querySelector(`tr[data-id="${record.id}"]`);
  if (row) row.classList.add("selected");
  schedule();
  document.getElementById("detail").hidden = false;
  document.getElementById("detail-title").textContent =
    `#${record.id} ${record.name}(${record.args.map(text).join(", ")})`;
  const sources = document.querySelector("#sources tbody");
  sources.replaceChildren();
  for (const source of record.sources) {
    const line = document.createElement("tr");
    cells(line, [source.name, source.args.map(text).join(", "),
      time(record, source.start), time(record, source.end)]);
    sources.append(line);
  }
  document.getElementById("no-sources").hidden = record.sources.length > 0;
  const rdf = document.getElementById("rdf");
  rdf.textContent = "…";
  const query = `CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <urn:reasoner:graph:detections> {
    <${record.iri}> (!<urn:reasoner:none>)* ?s . ?s ?p ?o } }`;
  try {
    const response = await fetch("/sparql", {method: "POST", body: new URLSearchParams({query}),
      headers: {Accept: "text/turtle"}});
    const body = await response.text();
    if (selected === record) rdf.textContent = response.ok ? body : `error ${response.status}: ${body}`;
  } catch (error) {
    rdf.textContent = `error: ${error}`;
  }
}

function enableSlider() {
  const ends = [...new Set(detections.map((r) => r.end))].sort((a, b) => a - b);
  if (ends.length === 0) return;
  slider.max = String(ends.length - 1);
  slider.value = slider.max;
  slider.disabled = false;
  const show = () => {
    limit = ends[Number(slider.value)];
    sliderTime.textContent = time(detections[0], limit);
    for (const row of rows.children) {
      row.classList.toggle("hidden", !visible(detections[Number(row.dataset.id)]));
    }
    render();
  };
  slider.addEventListener("input", show);
  show();
}

async function start() {
  try {
    const response = await fetch("/static/vendor/us-states.geojson");
    states = (await response.json()).features;
  } catch (error) {
    state.textContent = `no state borders: ${error}`;
  }
  render();
  const source = new EventSource("/live/events");
  source.addEventListener("detection", (event) => addDetection(JSON.parse(event.data)));
  source.addEventListener("done", () => {
    if (finished) return; // sent again after a reconnection
    finished = true;
    enableSlider();
    render();
  });
  source.addEventListener("error", () => {
    if (!finished) state.textContent = `connection lost, retrying … (${detections.length} so far)`;
  });
}

start();
