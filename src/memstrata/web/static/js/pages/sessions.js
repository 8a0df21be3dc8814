// Sessions and the raw turns: what was actually said, verbatim, before any model touched it.
import { api } from "../api.js";
import { badge, formatTime, h } from "../dom.js";
import { t } from "../i18n.js";
import { hasScope, scopeArgs, session } from "../state.js";
import { busy, errorBox, guessLang, needScopeNotice, notice, pageHeader, toast } from "../widgets.js";

async function list(view) {
  const found = await api.get("/v1/console/sessions", scopeArgs());
  if (!found.sessions.length) return view.append(notice(t("noSessions")));
  if (found.truncated) view.append(notice(t("sessionsTruncated", { n: found.turns_scanned }), "warn"));
  const rows = found.sessions.map((one) => h("tr", {},
    h("th", { scope: "row" }, one.session_id
      ? h("a", { href: `#/sessions/${encodeURIComponent(one.session_id)}` }, one.session_id)
      : h("span", { class: "muted" }, t("noSession"))),
    h("td", {}, one.user_id || "—"), h("td", {}, one.agent_id || "—"), h("td", { class: "num" }, String(one.turns)),
    h("td", {}, formatTime(one.last_at)), h("td", { class: "preview", lang: guessLang(one.preview) }, one.preview)));
  return view.append(h("div", { class: "table-wrap" }, h("table", {},
    h("caption", { class: "visually-hidden" }, t("nav.sessions")),
    h("thead", {}, h("tr", {}, [t("session"), t("user"), t("agent"), t("turns"), t("lastTurn"), t("firstTurn")]
      .map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows))));
}

async function turns(view, sessionId, ctx) {
  // The session comes from the path; the chosen user / agent still apply (a key may be limited to them).
  const args = scopeArgs({ session_id: sessionId });
  const found = await api.get("/v1/messages", { ...args, limit: 2000 });
  const end = h("button", { type: "button" }, t("endSession"));
  end.addEventListener("click", async () => {
    const jobs = await busy(end, () => api.post(`/v1/sessions/${encodeURIComponent(sessionId)}/end`, undefined,
      { user_id: session.scope.user_id || undefined, agent_id: session.scope.agent_id || undefined }));
    if (jobs) {
      toast(t("sessionEnded", { n: jobs.length }));
      ctx.reload();
    }
  });
  view.append(h("div", { class: "toolbar" }, h("a", { href: "#/sessions" }, `← ${t("nav.sessions")}`), end));
  if (!found.length) return view.append(notice(t("noTurns")));
  return view.append(h("ol", { class: "turns" }, found.map((turn) => h("li", { class: `turn role-${turn.message.role}` },
    h("div", { class: "meta" }, badge(t(`role.${turn.message.role}`), "role"), " ",
      h("span", { class: "muted" }, formatTime(turn.message.timestamp)),
      turn.message.name ? h("span", { class: "muted" }, ` · ${turn.message.name}`) : null),
    h("p", { lang: guessLang(turn.message.content) }, turn.message.content)))));
}

export async function render(ctx) {
  const sessionId = ctx.args[0];
  const view = h("div", {}, sessionId
    ? pageHeader(`${t("session")} ${sessionId}`)
    : pageHeader(t("nav.sessions"), h("p", { class: "muted" }, t("sessionsIntro"))));
  if (!sessionId && !hasScope()) return view.append(needScopeNotice()), view;
  try {
    await (sessionId ? turns(view, sessionId, ctx) : list(view));
  } catch (error) {
    view.append(errorBox(error));
  }
  return view;
}
