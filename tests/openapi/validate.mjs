// Validates docs/openapi.yaml against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator,
// which picks the schema by the document's `openapi` field: it must come out as 3.1), its $refs
// resolved (one that does not is an error). Usage: node validate.mjs [FILE]; exit 1 on any error.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import YAML from "yaml";

const file = process.argv[2] ?? fileURLToPath(new URL("../../docs/openapi.yaml", import.meta.url));
const doc = YAML.parse(readFileSync(file, "utf8"));
const validator = new Validator();
const res = await validator.validate(doc);
if (validator.version !== "3.1") {
  console.error(`${file}: validated as OpenAPI ${validator.version}, not 3.1`);
  process.exit(1);
}
if (!res.valid) {
  console.error(`${file}: not a valid OpenAPI 3.1 document:`);
  console.error(JSON.stringify(res.errors, null, 2));
  process.exit(1);
}
const paths = Object.keys(doc.paths);
const ops = paths.flatMap((p) => Object.keys(doc.paths[p]).filter((m) => m !== "parameters"));
console.log(`${file}: valid OpenAPI ${doc.openapi} (${paths.length} paths, ${ops.length} operations)`);
