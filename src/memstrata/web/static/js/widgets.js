// Pieces several pages share: the confirmation dialog, notices, memory rows, score breakdowns, paging.
import { ApiError } from "./api.js";
import { badge, formatTime, h, shortId } from "./dom.js";
import { t } from "./i18n.js";

/** Ask before a destructive action, saying exactly what will happen. Resolves true on confirm. */
export function confirmAction({ title, body, confirmLabel, danger = true }) {
  return new Promise((resolve) => {
    const dialog = document.getElementById("confirm");
    const titleEl = dialog.querySelector("#confirm-title");
    const bodyEl = dialog.querySelector("#confirm-body");
    const ok = dialog.querySelector("#confirm-ok");
    const cancel = dialog.querySelector("#confirm-cancel");
    titleEl.textContent = title;
    bodyEl.replaceChildren(...[body].flat().map((line) => h("p", {}, line)));
    ok.textContent = confirmLabel;
    ok.className = danger ? "danger" : "primary";
    cancel.textContent = t("cancel");
    const done = (answer) => {
      ok.removeEventListener("click", onOk);
      dialog.removeEventListener("close", onClose);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const onOk = () => done(true);
    const onClose = () => done(false);
    ok.addEventListener("click", onOk);
    dialog.addEventListener("close", onClose);
    dialog.showModal();
    cancel.focus(); // the safe choice has the focus
  });
}

let toastTimer = null;
export function toast(message, kind = "ok") {
  const box = document.getElementById("toast");
  box.textContent = message;
  box.className = `toast ${kind} shown`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove("shown"), 5000);
}

export function errorBox(error) {
  const detail = error instanceof ApiError ? error.message : String(error && error.message ? error.message : error);
  const status = error instanceof ApiError ? `${error.status}${error.code ? ` ${error.code}` : ""}` : "";
  return h("div", { class: "notice error", role: "alert" },
    h("strong", {}, t("error")), status ? ` (${status})` : "", ": ", detail);
}

export function notice(text, kind = "info") {
  return h("div", { class: `notice ${kind}`, role: "status" }, text);
}

export function needScopeNotice() {
  return notice(t("needScope"), "info");
}

/** Run an action from a button: disabled while it runs, errors shown as a toast. */
export async function busy(button, action) {
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    return await action();
  } catch (error) {
    toast(error instanceof ApiError ? error.message : String(error), "error");
    return undefined;
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

export function statusBadge(status) {
  return badge(t(`status.${status}`), `status-${status}`);
}

/** A kind in the interface's language; a kind of the user's own ("routine") as it is. */
export function kindLabel(kind) {
  const label = t(`kind.${kind}`);
  return label === `kind.${kind}` ? kind : label;
}

export function memoryLink(item) {
  return h("a", { href: `#/memory/${encodeURIComponent(item.id)}`, class: "memory-text", lang: guessLang(item.text) },
    item.text);
}

/** zh when the text has Han characters: lets screen readers and fonts treat stored Chinese as Chinese. */
export function guessLang(text) {
  return /[\u3400-\u9fff]/.test(text || "") ? "zh" : "en";
}

export function memoryMeta(item) {
  return h("div", { class: "meta" },
    badge(kindLabel(item.kind), "kind"), " ", statusBadge(item.status),
    item.key ? [" ", h("code", { class: "key" }, item.key)] : null,
    " ", h("span", { class: "muted" }, formatTime(item.created_at)),
    " ", h("span", { class: "muted id", title: item.id }, `#${shortId(item.id)}`));
}

function number(value, digits = 3) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(digits);
}

/** Why a hit ranked where it did: every signal of the score, in a table a person can read. */
export function breakdownTable(breakdown) {
  const rows = [
    [t("bd.final"), number(breakdown.final)],
    [t("bd.fused"), number(breakdown.fused)],
    [t("bd.keyword"), breakdown.keyword_rank ? `#${breakdown.keyword_rank} (${number(breakdown.keyword_score)})` : "—"],
    [t("bd.vector"), breakdown.vector_rank ? `#${breakdown.vector_rank} (${number(breakdown.vector_similarity)})` : "—"],
    [t("bd.keyMatch"), breakdown.key_match ? t("yes") : t("no")],
  ];
  if (breakdown.graph_rank) rows.push([t("bd.graph"), `#${breakdown.graph_rank} · ${breakdown.graph_relation || ""}`]);
  if (breakdown.time_rank) rows.push([t("bd.time"), `#${breakdown.time_rank} ×${number(breakdown.time_boost, 2)}`]);
  const life = breakdown.lifecycle;
  if (life) {
    rows.push([t("bd.lifecycle"), number(life.lifecycle)]);
    rows.push([t("bd.lifeParts"), `${t("bd.decay")} ${number(life.decay, 2)} · ${t("bd.recency")} ${number(life.recency, 2)}` +
      ` · ${t("bd.reinforcement")} ${number(life.reinforcement, 2)} · ${t("bd.confidence")} ${number(life.confidence, 2)}`]);
  }
  return h("table", { class: "breakdown" },
    h("caption", { class: "visually-hidden" }, t("bd.caption")),
    h("tbody", {}, rows.map(([name, value]) => h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, value)))));
}

/** Previous / next page links for offset paging; ``go(offset)`` moves. */
export function pager({ offset, limit, nextOffset, count, go }) {
  const prev = h("button", { type: "button", disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) },
    t("prev"));
  const next = h("button", { type: "button", disabled: nextOffset === null || nextOffset === undefined,
    onclick: () => go(nextOffset) }, t("next"));
  const range = count ? t("showing", { from: offset + 1, to: offset + count }) : t("nothing");
  return h("nav", { class: "pager", "aria-label": t("pages") }, prev, h("span", { class: "muted" }, range), next);
}

export function pageHeader(title, ...extra) {
  return h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, title), ...extra);
}

/** A filter form navigates to ``page`` with its filled fields in the hash: back / forward and links keep them. */
export function submitsToHash(form, page, ctx) {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (value) next.set(name, String(value));
    ctx.navigate(`#/${page}?${next}`);
  });
  return form;
}
