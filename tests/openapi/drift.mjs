// Proves that check.mjs catches a document that drifted from the server: for each of a few
// changes to docs/openapi.yaml (a field of the status object dropped, an error code dropped
// from a route's list, a header's value changed, a status removed from an operation, a
// route removed), check.mjs run over the same recorded answers must fail, naming the
// answer. Usage: node drift.mjs ANSWERS.jsonl; exit 1 if any change goes unnoticed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const answers = process.argv[2];
if (!answers) {
  console.error("usage: node drift.mjs ANSWERS.jsonl");
  process.exit(2);
}
const docFile = fileURLToPath(new URL("../../docs/openapi.yaml", import.meta.url));
const check = fileURLToPath(new URL("check.mjs", import.meta.url));
const original = readFileSync(docFile, "utf8");

const join503 = (d) => d.paths["/v1/rooms/{room}/tickets"].post.responses["503"];
const changes = [
  {
    what: "the status object without its ref field",
    change: (d) => delete d.components.schemas.TicketStatus.properties.ref,
    expect: /must NOT have additional properties.*"ref"/,
  },
  {
    what: "room_full dropped from the join's 503 codes",
    change: (d) => {
      const codes = join503(d).content["application/json"].schema.properties.error.properties.code;
      codes.enum = codes.enum.filter((c) => c !== "room_full");
    },
    expect: /POST \/v1\/rooms\/\{room\}\/tickets -> 503: .*allowed values/,
  },
  {
    what: "the waiting page's X-Frame-Options changed",
    change: (d) => {
      d.paths["/wait/{room}"].get.responses["200"].headers["X-Frame-Options"].schema.const = "SAMEORIGIN";
    },
    expect: /the header X-Frame-Options: "DENY" does not match/,
  },
  {
    what: "201 removed from PUT /v1/rooms/{room}",
    change: (d) => delete d.paths["/v1/rooms/{room}"].put.responses["201"],
    expect: /status 201 is not documented for PUT \/v1\/rooms\/\{room\}/,
  },
  {
    what: "the challenge route removed",
    change: (d) => delete d.paths["/v1/rooms/{room}/challenge"],
    expect: /no path template matches \/v1\/rooms\/[^ ]+\/challenge/,
  },
  {
    what: "the metrics' Content-Type changed",
    change: (d) => {
      const r = d.paths["/metrics"].get.responses["200"];
      r.content = { "text/plain": r.content["text/plain; version=0.0.4"] };
    },
    expect: /GET \/metrics -> 200: Content-Type "text\/plain; version=0.0.4" is not one of/,
  },
];

const dir = mkdtempSync(join(tmpdir(), "anteroom-openapi-drift-"));
let missed = 0;
try {
  for (const { what, change, expect } of changes) {
    const doc = YAML.parse(original);
    change(doc);
    const file = join(dir, "openapi.yaml");
    writeFileSync(file, YAML.stringify(doc));
    const run = spawnSync(process.execPath, [check, answers, file], { encoding: "utf8" });
    if (run.status === 1 && expect.test(run.stderr)) {
      console.log(`caught: ${what}`);
    } else {
      missed++;
      console.error(`MISSED: ${what} (exit ${run.status}); stderr:\n${run.stderr.slice(0, 2000)}`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (missed) process.exit(1);
console.log(`check.mjs caught all ${changes.length} changes to the document`);
