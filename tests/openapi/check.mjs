// Checks answers recorded by the server tests (tests/server/harness.cc, ANTEROOM_ANSWER_LOG)
// against docs/openapi.yaml: each answer's path must match a path template of the document,
// its method an operation of that path, its status a response of that operation (or one of
// the answers the document says any route may get, `x-anteroom-any-route`), its
// Content-Type a media type of that response, and a JSON body the media type's schema
// (JSON Schema 2020-12, ajv); its headers must include those the response marks required,
// each matching its schema. A body that is not JSON is checked by its Content-Type only,
// and only where the document says it is not JSON (HTML, SSE, metrics text). Prints how many
// answers were checked per route, the operations no answer reached, and every failure.
// Usage: node check.mjs ANSWERS.jsonl [OPENAPI.yaml]; exit 1 on any failure.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import YAML from "yaml";

const [answersFile, docFile = fileURLToPath(new URL("../../docs/openapi.yaml", import.meta.url))] =
  process.argv.slice(2);
if (!answersFile) {
  console.error("usage: node check.mjs ANSWERS.jsonl [OPENAPI.yaml]");
  process.exit(2);
}
const doc = YAML.parse(readFileSync(docFile, "utf8"));

// OpenAPI 3.1 schemas are JSON Schema 2020-12; the document itself is added whole so that
// response schemas are compiled by reference to where they are, with their $refs resolved.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
ajv.addSchema(doc, "openapi");
const compiled = new Map();
const validatorAt = (pointer) => {
  if (!compiled.has(pointer)) compiled.set(pointer, ajv.getSchema(`openapi#${pointer}`));
  return compiled.get(pointer);
};
const escape = (token) => encodeURIComponent(String(token).replaceAll("~", "~0").replaceAll("/", "~1"));
const pointerOf = (...tokens) => tokens.map((t) => "/" + escape(t)).join("");

// A response object, with the pointer of where it is (through one $ref).
function response(pointer, r) {
  if (r && r.$ref) {
    const name = r.$ref.replace("#/components/responses/", "");
    return { pointer: pointerOf("components", "responses", name), r: doc.components.responses[name] };
  }
  return { pointer, r };
}

const templates = Object.keys(doc.paths).map((t) => ({ template: t, parts: t.split("/") }));
// The template a path matches: same number of segments, every literal segment equal;
// literal segments win over parameters (OpenAPI's rule for concrete paths). A `{path}` last
// in a template takes the rest of the path, slashes and all (/v1/authz/{path}).
function matchPath(path) {
  const parts = path.split("/");
  let best = null;
  let bestLiterals = -1;
  for (const t of templates) {
    const rest = t.parts[t.parts.length - 1] === "{path}";
    if (rest ? parts.length < t.parts.length : t.parts.length !== parts.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < t.parts.length && ok; i++) {
      if (/^\{[^}]+\}$/.test(t.parts[i])) continue;
      if (t.parts[i] === parts[i]) literals++;
      else ok = false;
    }
    if (ok && literals > bestLiterals) {
      best = t.template;
      bestLiterals = literals;
    }
  }
  return best;
}

const isJson = (type) => /^application\/([a-z0-9.+-]*\+)?json$/.test(type);
const baseType = (t) => t.split(";").map((s) => s.trim().toLowerCase()).join("; ");

// Why the answer's headers do not fit the response's: a header the document marks required
// is missing, or one it gives a schema for has a value (each line of a repeated one) that
// does not match. Answers recorded without headers are not held to this.
function headerMismatch(a, pointer, r) {
  if (!a.headers || !r.headers) return null;
  for (const [name, h0] of Object.entries(r.headers)) {
    const ref = h0.$ref?.replace("#/components/headers/", "");
    const h = ref ? doc.components.headers[ref] : h0;
    const at = ref ? pointerOf("components", "headers", ref) : pointer + pointerOf("headers", name);
    const value = a.headers[name.toLowerCase()];
    if (value === undefined) {
      if (h.required) return `the header ${name} is missing`;
      continue;
    }
    if (!h.schema) continue;
    const validate = validatorAt(at + pointerOf("schema"));
    for (const line of value.split("\n")) {
      const typed = h.schema.type === "integer" && /^-?\d+$/.test(line) ? Number(line) : line;
      if (!validate(typed)) return `the header ${name}: "${line}" does not match its schema`;
    }
  }
  return null;
}

// Why `a` does not fit the response at `pointer`, or null if it does.
function mismatch(a, pointer, r) {
  const headers = headerMismatch(a, pointer, r);
  if (headers) return headers;
  if (!r.content) {
    if (a.body !== null && a.body !== "") return `the document says no body, got ${a.body.length} bytes`;
    if (a.content_type !== "") return `the document says no Content-Type, got "${a.content_type}"`;
    return null;
  }
  const types = Object.keys(r.content);
  const type = types.find((t) => baseType(t) === baseType(a.content_type));
  if (type === undefined) return `Content-Type "${a.content_type}" is not one of ${JSON.stringify(types)}`;
  if (!isJson(type.split(";")[0])) return null; // HTML, SSE, metrics text: the type is the check
  if (a.body === null) return `a ${type} answer was recorded without its body`;
  if (a.method === "HEAD") return a.body === "" ? null : "a HEAD answer with a body";
  let body;
  try {
    body = JSON.parse(a.body);
  } catch (e) {
    return `the body is not JSON (${e.message}): ${a.body.slice(0, 200)}`;
  }
  if (!r.content[type].schema) return null;
  const validate = validatorAt(pointer + pointerOf("content", type, "schema"));
  if (validate(body)) return null;
  const errors = validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`);
  return `the body does not match the schema: ${errors.join("; ")}`;
}

// Checks one answer; returns [route label, null] or [route label, why it fails].
function check(a) {
  const path = a.target.startsWith("/") ? a.target.split("?")[0] : null;
  const template = path === null ? null : matchPath(path);
  const anyRoute = (status) => {
    const ref = doc["x-anteroom-any-route"]?.[String(status)];
    return ref ? response(null, ref) : null;
  };
  const candidates = [];
  let label;
  let op = null;
  if (template === null) {
    label = `(no route) ${a.method}`;
  } else {
    const item = doc.paths[template];
    const method = a.method.toLowerCase();
    const opMethod = item[method] ? method : method === "head" && item.get ? "get" : null;
    op = opMethod ? item[opMethod] : null;
    label = `${a.method} ${template}`;
    if (op) {
      const r = op.responses[String(a.status)];
      if (r) candidates.push(response(pointerOf("paths", template, opMethod, "responses", String(a.status)), r));
    }
  }
  const fallback = anyRoute(a.status);
  if (fallback) candidates.push(fallback);
  if (candidates.length === 0) {
    if (template === null) return [label, `no path template matches ${a.target}`];
    if (!op) return [label, `${a.method} is not an operation of ${template} (and ${a.status} is not an any-route answer)`];
    return [label, `status ${a.status} is not documented for ${a.method} ${template}`];
  }
  const whys = candidates.map((c) => mismatch(a, c.pointer, c.r));
  if (whys.includes(null)) return [label, null];
  return [label, whys.join(" | also, as an any-route answer: ")];
}

const lines = readFileSync(answersFile, "utf8").split("\n").filter((l) => l.trim() !== "");
if (lines.length === 0) {
  console.error(`${answersFile}: no answers were recorded`);
  process.exit(1);
}
const perRoute = new Map();
const failures = new Map(); // route, status and reason -> how many, and the first such answer
let failed = 0;
for (const line of lines) {
  const a = JSON.parse(line);
  const [label, why] = check(a);
  const key = `${label} -> ${a.status}`;
  perRoute.set(key, (perRoute.get(key) ?? 0) + 1);
  if (!why) continue;
  failed++;
  const f = failures.get(`${key}: ${why}`) ?? { count: 0, example: a };
  f.count++;
  failures.set(`${key}: ${why}`, f);
}

console.log(`checked ${lines.length} answers against ${docFile}:`);
for (const key of [...perRoute.keys()].sort()) console.log(`  ${String(perRoute.get(key)).padStart(6)}  ${key}`);
const reached = new Set([...perRoute.keys()].map((k) => k.split(" -> ")[0]));
const unreached = [];
for (const [template, item] of Object.entries(doc.paths)) {
  for (const m of Object.keys(item)) {
    if (m === "parameters") continue;
    const label = `${m.toUpperCase()} ${template}`;
    if (!reached.has(label)) unreached.push(label);
  }
}
if (unreached.length) console.log(`operations no recorded answer reached: ${unreached.join(", ")}`);
if (failed) {
  console.error(`FAIL: ${failed} of ${lines.length} answers do not match the document:`);
  for (const [why, { count, example: a }] of failures) {
    const body = a.body === null ? "(not recorded)" : a.body.slice(0, 300);
    console.error(`  ${count} x ${why}\n      e.g. ${a.method} ${a.target} -> ${a.status} ${a.content_type}: ${body}`);
  }
  process.exit(1);
}
console.log(`all ${lines.length} answers match the document`);
