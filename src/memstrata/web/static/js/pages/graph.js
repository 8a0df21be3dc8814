// Graph: entities and relations drawn; click (or Enter on) an entity to expand its neighbours and read
// its relation history. Closed relations stay visible, dashed, as history.
import { api } from "../api.js";
import { field, formatTime, h } from "../dom.js";
import { drawGraph, layout } from "../graph_draw.js";
import { t } from "../i18n.js";
import { hasScope, scopeArgs } from "../state.js";
import { errorBox, needScopeNotice, notice, pageHeader } from "../widgets.js";

const WIDTH = 900;
const HEIGHT = 560;
const SHOW_ALL_UP_TO = 60;  // larger graphs start from one entity, expanded by clicks

function historyList(edges) {
  if (!edges.length) return notice(t("noRelations"));
  return h("ol", { class: "relations" }, edges.map((edge) => {
    const closed = edge.record.valid_to !== null;
    return h("li", { class: closed ? "closed" : "current" },
      h("span", { lang: "zh" }, `${edge.source} `), h("strong", {}, edge.relation), h("span", {}, ` ${edge.target}`),
      h("span", { class: "muted small" },
        ` · ${formatTime(edge.record.valid_from)} → ${closed ? formatTime(edge.record.valid_to) : t("now")}`),
      closed ? h("span", { class: "badge closed" }, t("closedEdge")) : null);
  }));
}

export async function render(ctx) {
  const view = h("div", {}, pageHeader(t("nav.graph"), h("p", { class: "muted" }, t("graphIntro"))));
  if (!hasScope()) return view.append(needScopeNotice()), view;
  let whole;
  try {
    whole = await api.get("/v1/graph/export", scopeArgs({ format: "json", include_closed: true }));
  } catch (error) {
    return view.append(errorBox(error)), view;
  }
  if (!whole.entities.length) return view.append(notice(t("graphEmpty"))), view;
  const entities = new Map(whole.entities.map((entity) => [entity.id, entity]));
  const relations = new Map();
  const shown = new Set();
  if (whole.entities.length <= SHOW_ALL_UP_TO) {
    whole.entities.forEach((entity) => shown.add(entity.id));
    whole.relations.forEach((relation) => relations.set(relation.id, relation));
  }
  let positions = new Map();
  let selected = null;
  const canvas = h("div", { class: "graph-canvas" });
  const side = h("aside", { class: "graph-side", "aria-live": "polite" }, h("p", { class: "muted" }, t("graphPick")));

  const redraw = (anchor) => {
    const ids = [...shown];
    const visible = [...relations.values()].filter((r) => shown.has(r.source_id) && shown.has(r.target_id));
    positions = layout(ids, visible, positions, { width: WIDTH, height: HEIGHT, anchor });
    canvas.replaceChildren(drawGraph({ entities, relations: visible, positions, selected, width: WIDTH, height: HEIGHT,
      onSelect: (id) => expand(id) }));
  };

  const expand = async (id) => {
    selected = id;
    const entity = entities.get(id);
    side.replaceChildren(h("h2", {}, entity.name), h("p", { class: "muted" }, t("loading")));
    try {
      const [near, history] = await Promise.all([
        api.get("/v1/graph/neighbors", scopeArgs({ entity: id, hops: 1, include_closed: true })),
        api.get("/v1/graph/relations", scopeArgs({ entity: id })),
      ]);
      near.entities.forEach((one) => { entities.set(one.id, one); shown.add(one.id); });
      near.relations.forEach((relation) => relations.set(relation.id, relation));
      shown.add(id);
      redraw(id);
      side.replaceChildren(h("h2", {}, entity.name),
        h("p", { class: "muted" }, `${entity.type}${entity.aliases.length ? ` · ${t("aliases")}: ${entity.aliases.join(", ")}` : ""}`),
        h("h3", {}, t("relationHistory")), historyList(history));
    } catch (error) {
      side.replaceChildren(errorBox(error));
    }
    const node = canvas.querySelector(`[data-entity="${CSS.escape(entity.name)}"]`);
    if (node) node.focus();
  };

  const filter = h("input", { type: "search", autocomplete: "off" });
  const list = h("ul", { class: "entity-list" });
  const fill = () => {
    const wanted = filter.value.trim().toLowerCase();
    list.replaceChildren(...whole.entities
      .filter((entity) => !wanted || [entity.name, ...entity.aliases].some((name) => name.toLowerCase().includes(wanted)))
      .slice(0, 200)
      .map((entity) => h("li", {}, h("button", { type: "button", class: "link", onclick: () => expand(entity.id) },
        entity.name), h("span", { class: "muted small" }, ` ${entity.type}`))));
  };
  filter.addEventListener("input", fill);
  fill();
  view.append(
    h("div", { class: "legend", "aria-label": t("legend") }, h("span", { class: "swatch current" }), t("currentEdge"),
      h("span", { class: "swatch closed" }), t("closedEdge"),
      h("span", { class: "muted" }, ` · ${t("entitiesCount", { n: whole.entities.length, r: whole.relations.length })}`)),
    h("div", { class: "graph-layout" },
      h("nav", { class: "graph-entities", "aria-label": t("entities") }, field(t("findEntity"), filter), list),
      canvas, side));
  redraw(null);
  return view;
}
