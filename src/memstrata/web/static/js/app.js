// The console's shell: login, the scope bar, language, navigation and the hash router.
import { ApiError, credentials } from "./api.js";
import { h } from "./dom.js";
import { applyStatic, initialLang, lang, setLang, t } from "./i18n.js";
import * as graph from "./pages/graph.js";
import * as jobs from "./pages/jobs.js";
import * as memories from "./pages/memories.js";
import * as memory from "./pages/memory.js";
import * as review from "./pages/review.js";
import * as sessions from "./pages/sessions.js";
import * as stats from "./pages/stats.js";
import * as timetravel from "./pages/timetravel.js";
import * as vault from "./pages/vault.js";
import { loadWhoami, session, setScope } from "./state.js";
import { errorBox } from "./widgets.js";

const PAGES = { memories, memory, review, time: timetravel, graph, jobs, sessions, vault, stats };
const main = document.getElementById("main");
let renderToken = 0;

function parseHash() {
  const raw = window.location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = raw.split("?");
  const [name = "memories", ...args] = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { name, args, params: new URLSearchParams(query) };
}

function navigate(hash) {
  if (window.location.hash === hash) route();
  else window.location.hash = hash;
}

async function route() {
  if (!session.whoami) return;
  const { name, args, params } = parseHash();
  const page = PAGES[name] || memories;
  const token = ++renderToken;
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.page === (PAGES[name] ? name : "memories")) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.getElementById("nav").classList.remove("open");
  main.setAttribute("aria-busy", "true");
  let view;
  try {
    view = await page.render({ args, params, navigate, reload: route });
  } catch (error) {
    view = errorBox(error);
  }
  if (token !== renderToken) return;  // a newer navigation won
  main.replaceChildren(view);
  main.removeAttribute("aria-busy");
  const heading = main.querySelector("h1");
  document.title = `${heading ? heading.textContent : ""} · memstrata`;
  if (heading && document.activeElement === document.body) heading.focus({ preventScroll: true });
}

function fillScopeBar() {
  const form = document.getElementById("scope-form");
  const who = session.whoami;
  for (const name of ["user_id", "agent_id", "session_id"]) {
    const input = form.elements[name];
    input.value = session.scope[name] || "";
    const allowed = who && who[`${name.replace("_id", "")}_ids`];
    const list = document.getElementById(`${name}-allowed`);
    if (list) list.replaceChildren(...(Array.isArray(allowed) ? allowed.map((value) => h("option", { value })) : []));
  }
  document.getElementById("who").textContent = who
    ? (who.key_id ? `${t("tenant")}: ${who.tenant_id}` : t("keyless"))
    : "";
}

function showLogin(message) {
  document.body.classList.add("logged-out");
  const key = h("input", { type: "password", id: "login-key", name: "key", autocomplete: "off", required: true,
    placeholder: "msk_…" });
  const form = h("form", { class: "login card", "aria-labelledby": "login-title" },
    h("h1", { id: "login-title", tabindex: "-1" }, t("loginTitle")),
    h("p", {}, t("loginIntro")),
    message ? h("div", { class: "notice error", role: "alert" }, message) : null,
    h("div", { class: "field" }, h("label", { for: "login-key" }, t("apiKey")), key,
      h("small", { class: "hint" }, t("loginHint"))),
    h("button", { type: "submit", class: "primary" }, t("login")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    credentials.set(key.value.trim());
    await start();
  });
  main.replaceChildren(form);
  key.focus();
}

async function start() {
  try {
    await loadWhoami();
  } catch (error) {
    const hadKey = Boolean(credentials.key);
    credentials.clear();
    if (error instanceof ApiError && error.status === 401) return showLogin(hadKey ? error.message : null);
    return main.replaceChildren(errorBox(error));
  }
  document.body.classList.remove("logged-out");
  document.getElementById("logout").hidden = !credentials.key;
  fillScopeBar();
  return route();
}

function wire() {
  const picker = document.getElementById("lang");
  picker.value = lang();
  picker.addEventListener("change", () => {
    setLang(picker.value);
    fillScopeBar();
    if (session.whoami) route();
    else showLogin();
  });
  document.getElementById("scope-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    setScope({ user_id: form.elements.user_id.value, agent_id: form.elements.agent_id.value,
      session_id: form.elements.session_id.value });
    route();
  });
  document.getElementById("logout").addEventListener("click", () => {
    credentials.clear();
    session.whoami = null;
    setScope({});
    showLogin();
  });
  document.getElementById("nav-toggle").addEventListener("click", (event) => {
    const nav = document.getElementById("nav");
    nav.classList.toggle("open");
    event.currentTarget.setAttribute("aria-expanded", String(nav.classList.contains("open")));
  });
  window.addEventListener("hashchange", route);
  document.addEventListener("keydown", (event) => {  // "/" jumps to the search field, as in many web apps
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName || "");
    if (event.key === "/" && !typing) {
      const search = main.querySelector("[data-shortcut=search]") || document.getElementById("scope-user");
      if (search) {
        event.preventDefault();
        search.focus();
      }
    }
  });
}

setLang(initialLang());
applyStatic();
wire();
start();
