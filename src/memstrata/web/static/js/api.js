// Every byte the console shows comes through here: the documented REST API, same origin, JSON only.
// The key lives in sessionStorage (gone when the tab closes), never in localStorage or a cookie.
const KEY_ITEM = "memstrata.key";

export class ApiError extends Error {
  constructor(status, code, detail, errors) {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.errors = errors;
  }
}

export const credentials = {
  get key() {
    return sessionStorage.getItem(KEY_ITEM);
  },
  set(key) {
    sessionStorage.setItem(KEY_ITEM, key);
  },
  clear() {
    sessionStorage.removeItem(KEY_ITEM);
  },
};

function urlOf(path, query) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(one));
  }
  return url;
}

export async function request(method, path, { query, body } = {}) {
  // The custom headers mark every call as the console's own: a web page of another site cannot send them
  // without a preflight, which is what the keyless server's CSRF check (X-Memstrata-Client) relies on.
  const headers = {
    Accept: "application/json",
    "X-Requested-With": "memstrata-console",
    "X-Memstrata-Client": "console",
  };
  const key = credentials.key;
  if (key) headers.Authorization = `Bearer ${key}`;
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(urlOf(path, query), init);
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) {
    const problem = data && typeof data === "object" ? data : {};
    throw new ApiError(response.status, problem.code, problem.detail || problem.title || text, problem.errors);
  }
  return data;
}

export const api = {
  get: (path, query) => request("GET", path, { query }),
  post: (path, body, query) => request("POST", path, { body, query }),
  patch: (path, body, query) => request("PATCH", path, { body, query }),
  del: (path, query) => request("DELETE", path, { query }),
};
