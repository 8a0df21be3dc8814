// Stats: what the store holds for the scope, what the key grants, and the irreversible erase of a user.
import { api } from "../api.js";
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { anonymous, hasScope, scopeArgs, session } from "../state.js";
import { busy, confirmAction, errorBox, needScopeNotice, pageHeader, toast } from "../widgets.js";

function fill(percent) {
  const bar = h("span", { class: "fill" });
  bar.style.width = `${Math.max(2, Math.round(percent))}%`;  // CSSOM, allowed by the CSP (inline style is not)
  return bar;
}

function bars(title, counts, prefix) {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  const most = Math.max(1, ...entries.map(([, n]) => n));
  return h("section", { class: "card" }, h("h2", {}, title),
    entries.length ? h("ul", { class: "bars" }, entries.map(([name, n]) => h("li", {},
      h("span", { class: "bar-name" }, prefix ? t(`${prefix}.${name}`) : name),
      h("span", { class: "bar", role: "img", "aria-label": `${name}: ${n}` }, fill((100 * n) / most)),
      h("span", { class: "num" }, String(n))))) : h("p", { class: "muted" }, "—"));
}

function eraseUser(userId, ctx) {
  const button = h("button", { type: "button", class: "danger" }, t("eraseUser", { user: userId }));
  button.addEventListener("click", async () => {
    const ok = await confirmAction({ title: t("eraseTitle", { user: userId }), body: t("eraseBody", { user: userId }),
      confirmLabel: t("eraseForGood") });
    if (!ok) return;
    const report = await busy(button, () => api.post(`/v1/users/${encodeURIComponent(userId)}/erase`, undefined, { confirm: true }));
    if (report) {
      const total = Object.values(report.deleted).reduce((a, b) => a + b, 0);
      toast(t("erased", { n: total }));
      ctx.reload();
    }
  });
  return h("section", { class: "card danger-zone" }, h("h2", {}, t("dangerZone")), h("p", {}, t("eraseExplain")), button);
}

export async function render(ctx) {
  const view = h("div", {}, pageHeader(t("nav.stats")));
  const who = session.whoami;
  view.append(h("section", { class: "card" }, h("h2", {}, t("yourKey")),
    h("dl", { class: "facts" },
      h("dt", {}, t("keyId")), h("dd", {}, who.key_id || t("noKeyLocal")),
      h("dt", {}, t("tenant")), h("dd", {}, who.tenant_id || t("defaultTenant")),
      h("dt", {}, t("users")), h("dd", {}, Array.isArray(who.user_ids) ? who.user_ids.join(", ") : t("allIds")),
      h("dt", {}, t("agents")), h("dd", {}, Array.isArray(who.agent_ids) ? who.agent_ids.join(", ") : t("allIds")))));
  if (!hasScope() && !anonymous()) return view.append(needScopeNotice()), view;
  try {
    const stats = await api.get("/v1/stats", scopeArgs());
    view.append(h("div", { class: "stat-grid" },
      ...[["memoriesTotal", Object.values(stats.memories_by_status).reduce((a, b) => a + b, 0)],
        ["turns", stats.messages], ["historyEvents", stats.history_events], ["vectors", stats.vectors]]
        .map(([name, n]) => h("div", { class: "stat card" }, h("span", { class: "big" }, String(n)), h("span", {}, t(name))))),
    h("div", { class: "columns" }, bars(t("byStatus"), stats.memories_by_status, "status"), bars(t("byKind"), stats.memories_by_kind)),
    h("p", { class: "muted small" }, `${t("embedder")}: ${stats.embedding_id || "—"} · ${t("schema")} ${stats.schema_version}`));
  } catch (error) {
    view.append(errorBox(error));
  }
  if (session.scope.user_id && !(Array.isArray(who.agent_ids))) view.append(eraseUser(session.scope.user_id, ctx));
  return view;
}
