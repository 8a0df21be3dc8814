// Jobs: the background extractions. A failed one shows its error and the model's raw output, and can be
// queued again (its turns were stored first, so nothing was lost).
import { api } from "../api.js";
import { badge, field, formatTime, h, scopeLabel, shortId } from "../dom.js";
import { t } from "../i18n.js";
import { anonymous, hasScope, scopeArgs } from "../state.js";
import { busy, errorBox, needScopeNotice, notice, pageHeader, toast } from "../widgets.js";

const STATUSES = ["failed", "waiting", "queued", "running", "done"];

function jobCard(job, ctx) {
  const retry = job.status === "failed" ? h("button", { type: "button", class: "primary" }, t("retry")) : null;
  if (retry) {
    retry.addEventListener("click", async () => {
      const queued = await busy(retry, () => api.post(`/v1/jobs/${encodeURIComponent(job.id)}/retry`, undefined, scopeArgs()));
      if (queued) {
        toast(t("retried"));
        setTimeout(() => ctx.reload(), 800);  // the worker picks it up at once; show its new state
      }
    });
  }
  return h("li", { class: `card job status-${job.status}`, "data-job": job.id },
    h("div", { class: "hit-head" },
      h("span", {}, badge(t(`job.${job.status}`), `job-${job.status}`), " ", h("code", { title: job.id }, shortId(job.id)),
        " ", h("span", { class: "muted" }, job.kind)), retry),
    h("p", { class: "muted small" },
      `${scopeLabel(job.scope)} · ${t("turnsCount", { n: job.message_ids.length })} · ${t("attempts")} ${job.attempts} · `,
      `${t("updated")} ${formatTime(job.updated_at)}`),
    job.error ? h("div", {}, h("h3", {}, t("jobError")), h("pre", { class: "error-text" }, job.error)) : null,
    job.raw_output ? h("details", { open: true }, h("summary", {}, t("rawOutput")), h("pre", {}, job.raw_output)) : null,
    job.status === "done" && job.result && Object.keys(job.result).length
      ? h("details", {}, h("summary", {}, t("jobResult")), h("pre", {}, JSON.stringify(job.result, null, 2))) : null);
}

export async function render(ctx) {
  const view = h("div", {}, pageHeader(t("nav.jobs"), h("p", { class: "muted" }, t("jobsIntro"))));
  if (!hasScope() && !anonymous()) return view.append(needScopeNotice()), view;
  const status = ctx.params.get("status") || "";
  const select = h("select", { name: "status", onchange: () => ctx.navigate(`#/jobs${select.value ? `?status=${select.value}` : ""}`) },
    h("option", { value: "" }, t("allJobs")),
    STATUSES.map((value) => h("option", { value, selected: value === status }, t(`job.${value}`))));
  const flush = h("button", { type: "button" }, t("runNow"));
  flush.addEventListener("click", async () => {
    const jobs = await busy(flush, () => api.post("/v1/jobs/flush", undefined, scopeArgs()));
    if (jobs) toast(t("flushed"));
    ctx.reload();
  });
  view.append(h("div", { class: "toolbar" }, field(t("statusLabel"), select), flush,
    h("button", { type: "button", onclick: () => ctx.reload() }, t("refresh"))));
  try {
    const jobs = await api.get("/v1/jobs", scopeArgs({ status: status || undefined, limit: 200 }));
    jobs.reverse();  // newest first
    view.append(jobs.length ? h("ul", { class: "cards" }, jobs.map((job) => jobCard(job, ctx))) : notice(t("noJobs")));
  } catch (error) {
    view.append(errorBox(error));
  }
  return view;
}
