// Holds the server's route table (print_route_table's JSON) and docs/openapi.yaml to each
// other, both ways: every row's methods (HEAD aside: the document describes GET) are
// operations of its path in the document, every operation of the document is a row's, and
// each operation's `security` names the keys its row asks for. Then the same check must fail
// against a table and a document changed on purpose, so that it has teeth.
// Usage: node routes.mjs TABLE.json; exit 1 on any difference.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const tableFile = process.argv[2];
if (!tableFile) {
  console.error("usage: node routes.mjs TABLE.json");
  process.exit(2);
}
const table = JSON.parse(readFileSync(tableFile, "utf8"));
const docFile = fileURLToPath(new URL("../../docs/openapi.yaml", import.meta.url));
const doc = YAML.parse(readFileSync(docFile, "utf8"));

const verbs = ["get", "put", "post", "delete", "patch", "head", "options"];
// The keys of each Auth, as the document's security schemes; "" is anonymous ({}).
const keysOf = {
  none: [],
  admin: ["adminKey"],
  verify: ["adminKey", "verifyKey"],
  scrape: ["", "adminKey", "metricsKey", "verifyKey"],
};

function securityKeys(op) {
  if (!op.security) return [];
  return op.security.map((s) => Object.keys(s)[0] ?? "").sort();
}

// Every difference between the table and the document, as sentences.
function differences(rows, paths) {
  const problems = [];
  const inTable = new Map();
  for (const row of rows) {
    for (const m of row.methods) {
      if (m === "HEAD") continue;
      const key = `${m} ${row.pattern}`;
      inTable.set(key, row);
      const op = paths[row.pattern]?.[m.toLowerCase()];
      if (!op) {
        problems.push(`${key} (route ${row.name}) is in the table, not in docs/openapi.yaml`);
        continue;
      }
      const want = JSON.stringify([...keysOf[row.auth]].sort());
      const got = JSON.stringify(securityKeys(op));
      if (want !== got) problems.push(`${key}: the table asks for ${want}, the document says ${got}`);
    }
  }
  for (const [path, item] of Object.entries(paths)) {
    for (const verb of verbs) {
      if (!item[verb]) continue;
      const key = `${verb.toUpperCase()} ${path}`;
      if (!inTable.has(key)) problems.push(`${key} is in docs/openapi.yaml, not in the table`);
    }
  }
  return problems;
}

const found = differences(table, doc.paths);
if (found.length > 0) {
  for (const p of found) console.error(`FAIL: ${p}`);
  process.exit(1);
}
console.log(`the route table's ${table.length} rows and docs/openapi.yaml agree`);

// Teeth: each of these changes must be caught.
const clone = (v) => JSON.parse(JSON.stringify(v));
const drifts = [
  ["a row dropped from the table", (t, d) => [t.filter((r) => r.name !== "clear"), d]],
  ["a path dropped from the document", (t, d) => (delete d["/v1/rooms/{room}/admit"], [t, d])],
  ["a row's key changed", (t, d) => (t.find((r) => r.name === "get_room").auth = "none", [t, d])],
  ["a method added to a row", (t, d) => (t.find((r) => r.name === "join").methods.push("PUT"), [t, d])],
];
let blunt = 0;
for (const [what, change] of drifts) {
  const [t, d] = change(clone(table), clone(doc.paths));
  if (differences(t, d).length === 0) {
    console.error(`FAIL: the check let ${what} pass`);
    blunt++;
  }
}
if (blunt > 0) process.exit(1);
console.log(`and it catches each of ${drifts.length} changes made on purpose`);
