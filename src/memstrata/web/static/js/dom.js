// Small DOM helpers. Data from the API is always inserted as text (never as HTML), so stored memories
// cannot inject markup or script into the console.
import { lang } from "./i18n.js";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

export function setAttrs(el, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "class") el.setAttribute("class", value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
}

export function append(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

let counter = 0;
/** A unique id for label/aria wiring. */
export function uid(prefix = "f") {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** A labelled form field: <div class="field"><label for=id>label</label><input id=id ...></div>. */
export function field(label, control, hint) {
  if (!control.id) control.id = uid();
  const parts = [h("label", { for: control.id }, label), control];
  if (hint) {
    const hintId = uid("hint");
    control.setAttribute("aria-describedby", hintId);
    parts.push(h("small", { id: hintId, class: "hint" }, hint));
  }
  return h("div", { class: "field" }, parts);
}

export function formatTime(value) {
  if (!value) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(lang() === "zh" ? "zh-CN" : "en-GB", {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
  });
}

export function shortId(id) {
  return id ? String(id).slice(0, 8) : "";
}

export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}`.trim() }, text);
}

/** "2024-05-01" (a date input) -> ISO string at local midnight; "" -> undefined. */
export function dateToIso(value, { endOfDay = false } = {}) {
  if (!value) return undefined;
  const date = new Date(`${value}T00:00:00`);
  if (endOfDay) date.setDate(date.getDate() + 1);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A datetime-local value -> ISO string. */
export function localToIso(value) {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function scopeLabel(scope) {
  if (!scope) return "";
  return ["user_id", "agent_id", "session_id"]
    .filter((name) => scope[name])
    .map((name) => `${name.replace("_id", "")}=${scope[name]}`)
    .join(" · ");
}
