// One memory: its text, where it came from (the raw turns), its history (old -> new text), and what a
// person may do with it: edit, confirm / reject, archive / restore, delete (soft) and purge (for good).
import { api } from "../api.js";
import { append, badge, field, formatTime, h, scopeLabel } from "../dom.js";
import { t } from "../i18n.js";
import { scopeArgs } from "../state.js";
import { busy, confirmAction, errorBox, guessLang, kindLabel, notice, pageHeader, statusBadge, toast } from "../widgets.js";

function details(item) {
  const rows = [
    [t("kind"), kindLabel(item.kind)],
    [t("statusLabel"), statusBadge(item.status)],
    [t("key"), item.key || "—"],
    [t("confidence"), item.confidence.toFixed(2)],
    [t("scope"), scopeLabel(item.scope)],
    [t("created"), formatTime(item.created_at)],
    [t("updated"), formatTime(item.updated_at)],
    [t("validFrom"), formatTime(item.valid_from)],
    [t("validTo"), formatTime(item.valid_to)],
    [t("recordedTo"), formatTime(item.recorded_to)],
    [t("accessCount"), String(item.access_count)],
    [t("source"), item.provenance.source + (item.provenance.document ? ` · ${item.provenance.document}` : "")],
    ["id", h("code", {}, item.id)],
  ];
  return h("dl", { class: "facts" }, rows.map(([name, value]) => [h("dt", {}, name), h("dd", {}, value)]));
}

function turnsList(turns) {
  if (!turns.length) return notice(t("noTurns"));
  return h("ol", { class: "turns" }, turns.map((turn) =>
    h("li", { class: `turn role-${turn.message.role}` },
      h("div", { class: "meta" }, badge(t(`role.${turn.message.role}`), "role"), " ",
        h("span", { class: "muted" }, formatTime(turn.message.timestamp)),
        turn.scope.session_id ? [" ", h("a", { href: `#/sessions/${encodeURIComponent(turn.scope.session_id)}` },
          `${t("session")} ${turn.scope.session_id}`)] : null),
      h("p", { lang: guessLang(turn.message.content) }, turn.message.content))));
}

function timeline(events) {
  return h("ol", { class: "timeline" }, events.map((event) =>
    h("li", { class: `event action-${event.action}` },
      h("div", { class: "meta" }, badge(t(`action.${event.action}`), `action ${event.action}`), " ",
        h("time", { datetime: event.created_at }, formatTime(event.created_at)), " ",
        h("span", { class: "muted" }, `${t("by")} ${event.actor}`),
        event.reason ? h("span", { class: "reason" }, ` — ${event.reason}`) : null),
      event.old_text !== null && event.old_text !== event.new_text
        ? h("p", { class: "old" }, h("span", { class: "visually-hidden" }, t("oldText")), h("del", { lang: guessLang(event.old_text) }, event.old_text))
        : null,
      event.new_text !== null
        ? h("p", { class: "new" }, h("span", { class: "visually-hidden" }, t("newText")), h("ins", { lang: guessLang(event.new_text) }, event.new_text))
        : null)));
}

function editForm(item, ctx) {
  const text = h("textarea", { name: "text", rows: 3, required: true, lang: guessLang(item.text) }, item.text);
  const reason = h("input", { name: "reason", maxlength: 1000, autocomplete: "off" });
  const save = h("button", { type: "submit", class: "primary" }, t("save"));
  const form = h("form", { class: "edit", hidden: true, "aria-label": t("edit") },
    field(t("text"), text), field(t("reason"), reason, t("reasonHint")),
    h("div", { class: "actions" }, save,
      h("button", { type: "button", onclick: () => { form.hidden = true; } }, t("cancel"))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { text: text.value.trim() };
    if (body.text === item.text.trim()) {  // nothing to save: no history entry would be written either
      toast(t("unchanged"));
      form.hidden = true;
      return;
    }
    if (reason.value.trim()) body.reason = reason.value.trim();
    const done = await busy(save, () => api.patch(`/v1/memories/${encodeURIComponent(item.id)}`, body, scopeArgs()));
    if (done) {
      toast(t("saved"));
      ctx.reload();
    }
  });
  return form;
}

function actions(item, ctx, form) {
  const path = `/v1/memories/${encodeURIComponent(item.id)}`;
  const run = (label, call, message, { after = ctx.reload, kind = "" } = {}) => {
    const button = h("button", { type: "button", class: kind }, label);
    button.addEventListener("click", async () => {
      const done = await busy(button, call);
      if (done !== undefined) {
        toast(message);
        after();
      }
    });
    return button;
  };
  const guarded = (label, dialog, call, message, options) =>
    run(label, async () => ((await confirmAction(dialog)) ? (await call()) ?? true : undefined), message, options);
  const live = item.status !== "deleted" && item.status !== "superseded";
  const buttons = [];
  if (live) {
    buttons.push(h("button", { type: "button", onclick: () => {
      form.hidden = false;
      form.querySelector("textarea").focus();
    } }, t("edit")));
  }
  if (item.status === "pending") {
    buttons.push(run(t("confirm"), () => api.post(`${path}/confirm`, undefined, scopeArgs()), t("confirmed"), { kind: "primary" }));
    buttons.push(guarded(t("reject"), { title: t("rejectTitle"), body: t("rejectBody"), confirmLabel: t("reject") },
      () => api.post(`${path}/reject`, undefined, scopeArgs()), t("rejected")));
  }
  if (item.status === "active") {
    buttons.push(run(t("archive"), () => api.post(`${path}/archive`, undefined, scopeArgs()), t("archived")));
  }
  if (item.status === "archived") {
    buttons.push(run(t("restore"), () => api.post(`${path}/restore`, undefined, scopeArgs()), t("restored"), { kind: "primary" }));
  }
  if (live) {
    buttons.push(guarded(t("delete"), { title: t("deleteTitle"), body: t("deleteBody"), confirmLabel: t("softDelete") },
      () => api.del(path, scopeArgs({ reason: "deleted in the console" })), t("deleted"), { kind: "danger" }));
  }
  if (item.status === "deleted") {
    buttons.push(run(t("addAgain"), () => api.post("/v1/memories", scopeArgs({ text: item.text, kind: item.kind,
      ...(item.key ? { key: item.key } : {}) })), t("addedAgain"), {
      after: () => ctx.navigate("#/memories"),
    }));
  }
  buttons.push(guarded(t("purge"), { title: t("purgeTitle"), body: t("purgeBody"), confirmLabel: t("purgeForGood") },
    () => api.post(`${path}/purge`, undefined, scopeArgs()), t("purged"), { after: () => ctx.navigate("#/memories"), kind: "danger" }));
  return h("div", { class: "actions", role: "group", "aria-label": t("actions") }, buttons);
}

export async function render(ctx) {
  const id = ctx.args[0];
  const path = `/v1/memories/${encodeURIComponent(id)}`;
  const view = h("div", {});
  let item;
  try {
    item = await api.get(path, scopeArgs());
  } catch (error) {
    return view.append(pageHeader(t("memory")), errorBox(error)), view;
  }
  const [events, turns] = await Promise.all([
    api.get(`${path}/history`, scopeArgs()).catch(() => []),
    api.get(`/v1/console/memories/${encodeURIComponent(id)}/turns`, scopeArgs()).catch(() => []),
  ]);
  const form = editForm(item, ctx);
  append(view, [
    pageHeader(t("memory")),
    h("blockquote", { class: "memory-body", lang: guessLang(item.text) }, item.text),
    item.status === "superseded" || item.status === "deleted" ? notice(t("notCurrent"), "warn") : null,
    actions(item, ctx, form), form,
    h("div", { class: "columns" },
      h("section", { "aria-labelledby": "h-details" }, h("h2", { id: "h-details" }, t("details")), details(item)),
      h("section", { "aria-labelledby": "h-history" }, h("h2", { id: "h-history" }, t("history")), timeline(events))),
    h("section", { "aria-labelledby": "h-turns" }, h("h2", { id: "h-turns" }, t("provenance")), turnsList(turns)),
  ]);
  return view;
}
