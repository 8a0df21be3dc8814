// Drawing the graph: a small force-directed layout and an SVG of nodes and edges, no library.
// Closed relations (no longer true) are drawn dashed with their end date: the graph keeps its history.
import { t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) el.append(child);
  return el;
}

/** Positions for every node id; nodes already placed keep their place (expanding does not reshuffle). */
export function layout(ids, edges, placed, { width, height, iterations = 250, anchor = null }) {
  const pos = new Map();
  const fixed = new Set();
  const start = anchor && placed.get(anchor) ? placed.get(anchor) : { x: width / 2, y: height / 2 };
  ids.forEach((id, index) => {
    if (placed.has(id)) {
      pos.set(id, { ...placed.get(id) });
      fixed.add(id);
    } else {
      const angle = (index / Math.max(ids.length, 1)) * 2 * Math.PI;
      pos.set(id, { x: start.x + 60 * Math.cos(angle) + Math.random(), y: start.y + 60 * Math.sin(angle) + Math.random() });
    }
  });
  const links = edges.filter((edge) => pos.has(edge.source_id) && pos.has(edge.target_id));
  const area = width * height;
  const k = Math.min(140, Math.sqrt(area / Math.max(ids.length, 1)) * 0.45);
  for (let step = 0; step < iterations; step += 1) {
    const heat = 1 - step / iterations;
    const move = new Map(ids.map((id) => [id, { x: 0, y: 0 }]));
    for (let i = 0; i < ids.length; i += 1) {
      for (let j = i + 1; j < ids.length; j += 1) {
        const a = pos.get(ids[i]);
        const b = pos.get(ids[j]);
        const dx = a.x - b.x || 0.01;
        const dy = a.y - b.y || 0.01;
        const dist2 = dx * dx + dy * dy;
        const force = (k * k) / dist2;
        move.get(ids[i]).x += dx * force; move.get(ids[i]).y += dy * force;
        move.get(ids[j]).x -= dx * force; move.get(ids[j]).y -= dy * force;
      }
    }
    for (const edge of links) {
      const a = pos.get(edge.source_id);
      const b = pos.get(edge.target_id);
      const dx = a.x - b.x;
      const dy = a.y - b.y;
      const dist = Math.sqrt(dx * dx + dy * dy) || 0.01;
      const force = (dist - k) / dist / 2;
      move.get(edge.source_id).x -= dx * force; move.get(edge.source_id).y -= dy * force;
      move.get(edge.target_id).x += dx * force; move.get(edge.target_id).y += dy * force;
    }
    for (const id of ids) {
      if (fixed.has(id)) continue;
      const p = pos.get(id);
      const m = move.get(id);
      m.x += (width / 2 - p.x) * 0.08;  // gravity keeps separate islands on screen and near each other
      m.y += (height / 2 - p.y) * 0.08;
      const length = Math.sqrt(m.x * m.x + m.y * m.y) || 1;
      const limit = 12 * heat + 0.5;
      p.x = Math.min(width - 40, Math.max(40, p.x + (m.x / length) * Math.min(length, limit)));
      p.y = Math.min(height - 30, Math.max(30, p.y + (m.y / length) * Math.min(length, limit)));
    }
  }
  return pos;
}

function dateOnly(value) {
  return value ? String(value).slice(0, 10) : "";
}

/** The SVG for entities (Map id -> entity) and relations, at positions; ``onSelect(id)`` on click or Enter. */
export function drawGraph({ entities, relations, positions, selected, width, height, onSelect }) {
  const edgeEls = relations
    .filter((relation) => positions.has(relation.source_id) && positions.has(relation.target_id))
    .map((relation) => {
      const a = positions.get(relation.source_id);
      const b = positions.get(relation.target_id);
      const closed = relation.valid_to !== null && relation.valid_to !== undefined;
      const label = closed ? `${relation.relation} (${t("until")} ${dateOnly(relation.valid_to)})` : relation.relation;
      return s("g", { class: `edge${closed ? " closed" : ""}`, "data-relation": relation.id },
        s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "marker-end": "url(#arrow)" }),
        s("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, "text-anchor": "middle" }, label),
        s("title", {}, `${entities.get(relation.source_id)?.name ?? "?"} ${label} ${entities.get(relation.target_id)?.name ?? "?"}`));
    });
  const nodeEls = [...positions.entries()].map(([id, p]) => {
    const entity = entities.get(id);
    if (!entity) return null;
    const activate = () => onSelect(id);
    return s("g", {
      class: `node type-${entity.type}${selected === id ? " selected" : ""}`, transform: `translate(${p.x},${p.y})`,
      tabindex: 0, role: "button", "aria-label": `${entity.name} (${entity.type})`, "data-entity": entity.name,
      onclick: activate,
      onkeydown: (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          activate();
        }
      },
    }, s("circle", { r: 14 }), s("text", { y: 28, "text-anchor": "middle" }, entity.name),
    s("title", {}, `${entity.name} · ${entity.type}${entity.aliases.length ? ` · ${entity.aliases.join(", ")}` : ""}`));
  });
  return s("svg", { viewBox: `0 0 ${width} ${height}`, class: "graph", role: "group", "aria-label": t("graphDrawing") },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 24, refY: 5, markerWidth: 6, markerHeight: 6,
      orient: "auto-start-reverse" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z" }))),
    s("g", { class: "edges" }, edgeEls), s("g", { class: "nodes" }, nodeEls));
}
