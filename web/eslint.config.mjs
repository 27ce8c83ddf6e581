// scripts/lint web: the browser code anteroom serves, under ESLint's recommended rules. The
// pages' scripts are classic scripts (one per page, in a nonce'd <script>); the proof-of-work
// worker runs in a Web Worker.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["wait/page.js", "dashboard/dashboard.js", "dashboard/chart.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: globals.browser },
  },
  {
    files: ["wait/pow_worker.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: globals.worker },
  },
];
