// Memories: search with the score breakdown, or browse with filters (kind, status, key prefix, time), paged.
import { api } from "../api.js";
import { dateToIso, field, h } from "../dom.js";
import { t } from "../i18n.js";
import { hasScope, scopeArgs } from "../state.js";
import {
  breakdownTable, errorBox, memoryLink, memoryMeta, needScopeNotice, notice, pageHeader, pager, submitsToHash,
} from "../widgets.js";

const PAGE = 20;
export const STATUSES = ["active", "pending", "archived", "deleted", "superseded"];
const KINDS = ["fact", "preference", "episode", "procedure", "knowledge", "plan", "note"];

function filtersOf(params) {
  const status = params.get("status") || "active";
  const filters = {
    status: status === "any" ? STATUSES : [status],
  };
  if (params.get("kind")) filters.kind = [params.get("kind")];
  if (params.get("key")) filters.key_prefix = params.get("key");
  const gte = dateToIso(params.get("from"));
  const lt = dateToIso(params.get("to"), { endOfDay: true });
  if (gte || lt) filters.created_at = { gte, lt };
  return filters;
}

function searchForm(params, ctx) {
  const query = h("input", { type: "search", name: "q", value: params.get("q") || "", placeholder: t("searchHint"),
    "data-shortcut": "search", autocomplete: "off" });
  const kind = h("input", { name: "kind", value: params.get("kind") || "", list: "kinds", autocomplete: "off" });
  const status = h("select", { name: "status" },
    [...STATUSES, "any"].map((value) => h("option", { value, selected: (params.get("status") || "active") === value },
      t(`status.${value}`))));
  const key = h("input", { name: "key", value: params.get("key") || "", placeholder: "project:db", autocomplete: "off" });
  const from = h("input", { type: "date", name: "from", value: params.get("from") || "" });
  const to = h("input", { type: "date", name: "to", value: params.get("to") || "" });
  const form = h("form", { class: "filters", role: "search", "aria-label": t("searchMemories") },
    h("div", { class: "search-row" }, field(t("search"), query),
      h("button", { type: "submit", class: "primary" }, t("searchButton"))),
    h("fieldset", {}, h("legend", {}, t("filters")),
      h("datalist", { id: "kinds" }, KINDS.map((value) => h("option", { value }))),
      field(t("kind"), kind), field(t("statusLabel"), status), field(t("keyPrefix"), key),
      field(t("createdFrom"), from), field(t("createdTo"), to),
      h("button", { type: "button", onclick: () => ctx.navigate("#/memories") }, t("clear"))));
  return submitsToHash(form, "memories", ctx);
}

function hitItem(hit) {
  return h("li", { class: "card hit" },
    h("div", { class: "hit-head" }, memoryLink(hit.memory),
      h("span", { class: "score", title: t("score") }, `${t("score")} ${hit.score.toFixed(3)}`)),
    memoryMeta(hit.memory),
    h("details", { class: "why" }, h("summary", {}, t("whyRanked")), breakdownTable(hit.breakdown)));
}

function memoryItem(item) {
  return h("li", { class: "card" }, memoryLink(item), memoryMeta(item));
}

async function results(params, ctx) {
  const q = (params.get("q") || "").trim();
  if (q) {
    const hits = await api.post("/v1/memories/search", scopeArgs({ query: q, limit: 30, filters: filtersOf(params) }));
    if (!hits.length) return notice(t("noHits"));
    return h("section", { "aria-label": t("results") },
      h("p", { class: "muted" }, t(hits.length === 1 ? "hitFor" : "hitsFor", { n: hits.length, q })),
      h("ol", { class: "cards" }, hits.map(hitItem)));
  }
  const offset = Number(params.get("offset") || 0);
  const filters = filtersOf(params);
  const page = await api.get("/v1/console/memories", scopeArgs({
    limit: PAGE, offset, kind: filters.kind, status: filters.status, key_prefix: filters.key_prefix,
    created_from: filters.created_at?.gte, created_to: filters.created_at?.lt,
  }));
  const go = (value) => {
    const next = new URLSearchParams(params);
    next.set("offset", String(value));
    ctx.navigate(`#/memories?${next}`);
  };
  return h("section", { "aria-label": t("results") },
    page.items.length ? h("ul", { class: "cards" }, page.items.map(memoryItem)) : notice(t("noMemories")),
    pager({ offset, limit: PAGE, nextOffset: page.next_offset, count: page.items.length, go }));
}

export async function render(ctx) {
  const view = h("div", {}, pageHeader(t("nav.memories")));
  if (!hasScope()) return view.append(needScopeNotice()), view;
  view.append(searchForm(ctx.params, ctx));
  try {
    view.append(await results(ctx.params, ctx));
  } catch (error) {
    view.append(errorBox(error));
  }
  return view;
}
