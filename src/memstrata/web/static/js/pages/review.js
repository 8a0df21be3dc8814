// Review queue: pending (low-confidence) facts wait for a person: confirm or reject, one by one or in bulk.
import { api } from "../api.js";
import { h, uid } from "../dom.js";
import { t } from "../i18n.js";
import { hasScope, scopeArgs } from "../state.js";
import {
  busy, confirmAction, errorBox, memoryLink, memoryMeta, needScopeNotice, notice, pageHeader, toast,
} from "../widgets.js";

async function decide(ids, verb) {
  const failed = [];
  for (const id of ids) {  // one request each: a failure names its memory and leaves the others decided
    try {
      await api.post(`/v1/memories/${encodeURIComponent(id)}/${verb}`, undefined, scopeArgs());
    } catch (error) {
      failed.push(`${id.slice(0, 8)}: ${error.message}`);
    }
  }
  return failed;
}

async function run(ids, verb, ctx) {
  if (!ids.length) return toast(t("selectFirst"), "error");
  if (verb === "reject") {
    const ok = await confirmAction({ title: t("rejectTitle"), body: [t("rejectBody"), t("rejectCount", { n: ids.length })],
      confirmLabel: t("reject") });
    if (!ok) return undefined;
  }
  const failed = await decide(ids, verb);
  const done = ids.length - failed.length;
  toast(t(verb === "confirm" ? "confirmedN" : "rejectedN", { n: done }) + (failed.length ? ` — ${failed.join("; ")}` : ""),
    failed.length ? "error" : "ok");
  ctx.reload();
  return done;
}

export async function render(ctx) {
  const view = h("div", {}, pageHeader(t("nav.review"), h("p", { class: "muted" }, t("reviewIntro"))));
  if (!hasScope()) return view.append(needScopeNotice()), view;
  let pending;
  try {
    pending = await api.get("/v1/review", scopeArgs({ limit: 500 }));
  } catch (error) {
    return view.append(errorBox(error)), view;
  }
  if (!pending.length) return view.append(notice(t("reviewEmpty"))), view;
  const boxes = [];
  const selected = () => boxes.filter((box) => box.checked).map((box) => box.value);
  const all = h("input", { type: "checkbox", id: uid("all"),
    onchange: () => boxes.forEach((box) => { box.checked = all.checked; }) });
  const confirmSelected = h("button", { type: "button", class: "primary" }, t("confirmSelected"));
  confirmSelected.addEventListener("click", () => busy(confirmSelected, () => run(selected(), "confirm", ctx)));
  const rejectSelected = h("button", { type: "button", class: "danger" }, t("rejectSelected"));
  rejectSelected.addEventListener("click", () => busy(rejectSelected, () => run(selected(), "reject", ctx)));
  const rows = pending.map((item) => {
    const box = h("input", { type: "checkbox", value: item.id, id: uid("sel"), "aria-label": `${t("select")}: ${item.text}` });
    boxes.push(box);
    const yes = h("button", { type: "button", class: "primary" }, t("confirm"));
    yes.addEventListener("click", () => busy(yes, () => run([item.id], "confirm", ctx)));
    const no = h("button", { type: "button" }, t("reject"));
    no.addEventListener("click", () => busy(no, () => run([item.id], "reject", ctx)));
    return h("li", { class: "card review-item" }, box,
      h("div", { class: "grow" }, memoryLink(item), memoryMeta(item),
        h("span", { class: "muted" }, `${t("confidence")} ${item.confidence.toFixed(2)}`)),
      h("div", { class: "actions" }, yes, no));
  });
  view.append(
    h("div", { class: "actions bulk", role: "group", "aria-label": t("bulk") },
      h("label", { for: all.id, class: "check" }, all, t("selectAll")), confirmSelected, rejectSelected),
    h("ul", { class: "cards" }, rows));
  return view;
}
