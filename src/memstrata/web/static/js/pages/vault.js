// The Markdown vault: notes (read) and the rules layer (read-only: rules are edited in their files).
import { api } from "../api.js";
import { append, badge, formatTime, h } from "../dom.js";
import { t } from "../i18n.js";
import { session } from "../state.js";

// The vault is indexed under a scope of its own (vault.user_id / agent_id): the chosen user is not passed on,
// only the agent, whose rules are added to everyone's.
const vaultArgs = (extra = {}) => ({ ...(session.scope.agent_id ? { agent_id: session.scope.agent_id } : {}), ...extra });
import { errorBox, guessLang, notice, pageHeader } from "../widgets.js";

async function notes(view) {
  const found = await api.get("/v1/vault/notes", vaultArgs());
  if (!found.length) return view.append(notice(t("noNotes")));
  return view.append(h("div", { class: "table-wrap" }, h("table", {},
    h("caption", { class: "visually-hidden" }, t("notes")),
    h("thead", {}, h("tr", {}, [t("note"), t("domain"), t("layer"), t("tags"), t("uses"), t("updated")]
      .map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, found.map((note) => h("tr", {},
      h("th", { scope: "row" }, h("a", { href: `#/vault/note?path=${encodeURIComponent(note.path)}`, lang: guessLang(note.title) },
        note.title), h("div", { class: "muted small" }, note.path)),
      h("td", {}, note.domain), h("td", {}, note.layer), h("td", {}, note.tags.join(", ")),
      h("td", { class: "num" }, String(note.uses)), h("td", {}, formatTime(note.updated_at))))))));
}

// With no agent chosen a person reviews every agent's rules, each file marked with whom it applies to; with one,
// exactly what that agent reads.
async function rules(view) {
  const block = await api.get("/v1/vault/rules", session.scope.agent_id ? vaultArgs() : { every_agent: true });
  view.append(h("h2", {}, t("rules"), " ", badge(t("readOnly"), "readonly")), h("p", { class: "muted" }, t("rulesIntro")));
  if (!block.files.length) return view.append(notice(t("noRules")));
  return view.append(...block.files.map((file) => h("section", { class: "card" },
    h("h3", {}, file.path, " ", h("span", { class: "muted small" }, file.applies_to)),
    h("pre", { class: "note-text", lang: guessLang(file.text) }, file.text))));
}

async function note(view, path) {
  const shown = await api.get("/v1/vault/note", vaultArgs({ path }));
  append(view, [h("p", {}, h("a", { href: "#/vault" }, `← ${t("nav.vault")}`)),
    h("h2", { lang: guessLang(shown.title) }, shown.title),
    h("p", { class: "muted" }, `${shown.path} · ${shown.domain} · ${shown.layer} · ${t("tokens", { n: shown.tokens })}`),
    Object.keys(shown.frontmatter).length ? h("pre", { class: "frontmatter" }, JSON.stringify(shown.frontmatter, null, 2)) : null,
    h("pre", { class: "note-text", lang: guessLang(shown.text) }, shown.text)]);
}

export async function render(ctx) {
  const view = h("div", {}, pageHeader(t("nav.vault"), h("p", { class: "muted" }, t("vaultIntro"))));
  const path = ctx.args[0] === "note" ? ctx.params.get("path") : null;
  const shown = new Set();  // one notice per distinct problem (an unconfigured vault fails both calls alike)
  const report = (error) => {
    if (!shown.has(error.message)) view.append(errorBox(error));
    shown.add(error.message);
  };
  if (path) {
    await note(view, path).catch(report);
    return view;
  }
  view.append(h("h2", {}, t("notes")));
  await notes(view).catch(report);
  await rules(view).catch(report);
  return view;
}
