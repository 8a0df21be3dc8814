// What the console knows about the session: who the key is (whoami) and the scope the person chose.
import { api } from "./api.js";

const SCOPE_ITEM = "memstrata.scope";
const FIELDS = ["user_id", "agent_id", "session_id"];

export const session = {
  whoami: null,
  scope: loadScope(),
};

function loadScope() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(SCOPE_ITEM) || "{}");
    return Object.fromEntries(FIELDS.map((name) => [name, saved[name] || ""]));
  } catch {
    return { user_id: "", agent_id: "", session_id: "" };
  }
}

export function setScope(scope) {
  session.scope = Object.fromEntries(FIELDS.map((name) => [name, (scope[name] || "").trim()]));
  sessionStorage.setItem(SCOPE_ITEM, JSON.stringify(session.scope));
}

/** The chosen scope ids that are set, for a query string or a JSON body. */
export function scopeArgs(extra = {}) {
  const args = {};
  for (const name of FIELDS) if (session.scope[name]) args[name] = session.scope[name];
  return { ...args, ...extra };
}

/** True when requests can name whose memories they mean: ids chosen, or a key that fills one in. */
export function hasScope() {
  if (FIELDS.some((name) => session.scope[name])) return true;
  const who = session.whoami;
  return Boolean(who && ((Array.isArray(who.user_ids) && who.user_ids.length === 1) ||
    (Array.isArray(who.agent_ids) && who.agent_ids.length === 1 && who.user_ids === "all")));
}

/** Keyless loopback mode: no key, every scope of the default tenant (store-wide stats and jobs work). */
export function anonymous() {
  return Boolean(session.whoami && session.whoami.key_id === null);
}

export async function loadWhoami() {
  session.whoami = await api.get("/v1/whoami");
  const users = session.whoami.user_ids;
  if (Array.isArray(users) && users.length === 1 && !session.scope.user_id) setScope({ ...session.scope, user_id: users[0] });
  return session.whoami;
}
