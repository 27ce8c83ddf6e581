// scripts/lint web: every language's strings (web/i18n/PAGE/LANG.json) are a JSON object of
// non-empty strings with exactly the keys of that page's English file, each holding the same
// {placeholders} as the English one. Prints each problem
// and exits 1 if there is any.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("i18n/", import.meta.url).pathname;
const problems = [];
for (const page of readdirSync(root)) {
  const dir = join(root, page);
  const read = (file) => {
    try {
      const v = JSON.parse(readFileSync(join(dir, file), "utf8"));
      if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
      for (const [k, s] of Object.entries(v)) {
        if (typeof s !== "string" || s === "") problems.push(`${page}/${file}: "${k}" is not a non-empty string`);
      }
      return v;
    } catch (e) {
      problems.push(`${page}/${file}: ${e.message}`);
      return {};
    }
  };
  const en = read("en.json");
  const english = Object.keys(en);
  const holes = (s) => (s.match(/\{[a-z_]+\}/g) || []).sort().join(" ");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json") && f !== "en.json")) {
    const strings = read(file);
    const keys = Object.keys(strings);
    for (const k of keys) {
      if (k in en && typeof strings[k] === "string" && holes(strings[k]) !== holes(en[k])) {
        problems.push(`${page}/${file}: "${k}" has placeholders "${holes(strings[k])}", en.json "${holes(en[k])}"`);
      }
    }
    for (const k of english) if (!keys.includes(k)) problems.push(`${page}/${file}: "${k}" is missing`);
    for (const k of keys) if (!english.includes(k)) problems.push(`${page}/${file}: "${k}" is not in en.json`);
  }
}
for (const p of problems) console.error("web/i18n/" + p);
if (problems.length) process.exit(1);
console.log("web/i18n: every language has every string");
