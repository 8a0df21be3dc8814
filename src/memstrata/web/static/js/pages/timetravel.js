// Time travel: the memory as it stood at a moment. Valid time (as_of): what was true in the world then.
// Record time (known_at): what the store held as current then, before later corrections.
import { api } from "../api.js";
import { field, formatTime, h, localToIso, uid } from "../dom.js";
import { t } from "../i18n.js";
import { hasScope, scopeArgs } from "../state.js";
import { errorBox, memoryLink, memoryMeta, needScopeNotice, notice, pageHeader, submitsToHash } from "../widgets.js";

function nowLocal() {
  const now = new Date();
  now.setMinutes(now.getMinutes() - now.getTimezoneOffset());
  return now.toISOString().slice(0, 16);
}

function form(params, ctx) {
  const at = h("input", { type: "datetime-local", name: "at", value: params.get("at") || nowLocal(), required: true });
  const axis = params.get("axis") || "valid";
  const radio = (value, label) => {
    const id = uid("axis");
    return h("div", { class: "radio" }, h("input", { type: "radio", name: "axis", id, value, checked: axis === value }),
      h("label", { for: id }, label));
  };
  const query = h("input", { type: "search", name: "q", value: params.get("q") || "", autocomplete: "off" });
  const element = h("form", { class: "filters", "aria-label": t("nav.time") },
    field(t("moment"), at),
    h("fieldset", {}, h("legend", {}, t("axis")), radio("valid", t("axisValid")), radio("record", t("axisRecord"))),
    field(t("searchOptional"), query),
    h("button", { type: "submit", class: "primary" }, t("show")));
  return submitsToHash(element, "time", ctx);
}

function row(item) {
  return h("li", { class: "card" }, memoryLink(item), memoryMeta(item),
    h("p", { class: "muted small" },
      `${t("validFrom")} ${formatTime(item.valid_from)} → ${formatTime(item.valid_to)} · `,
      `${t("created")} ${formatTime(item.created_at)} → ${formatTime(item.recorded_to)}`));
}

export async function render(ctx) {
  const view = h("div", {}, pageHeader(t("nav.time"), h("p", { class: "muted" }, t("timeIntro"))));
  if (!hasScope()) return view.append(needScopeNotice()), view;
  view.append(form(ctx.params, ctx));
  const moment = localToIso(ctx.params.get("at"));
  if (!moment) return view;
  const when = ctx.params.get("axis") === "record" ? { known_at: moment } : { as_of: moment };
  const q = (ctx.params.get("q") || "").trim();
  try {
    const items = q
      ? (await api.post("/v1/memories/search", scopeArgs({ query: q, limit: 30, ...when }))).map((hit) => hit.memory)
      : (await api.get("/v1/console/memories", scopeArgs({ limit: 100, ...when }))).items;
    view.append(h("section", { "aria-label": t("results") },
      h("h2", {}, t(ctx.params.get("axis") === "record" ? "heldAt" : "trueAt", { at: formatTime(moment) })),
      items.length ? h("ul", { class: "cards" }, items.map(row)) : notice(t("nothingThen"))));
  } catch (error) {
    view.append(errorBox(error));
  }
  return view;
}
