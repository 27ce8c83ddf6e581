// anteroom-connector: check anteroom admissions in the protected service (README.md).
export { anteroom, anteroom as default } from "./express.js";
export { admission, check, coreOf, withAnteroom } from "./fetch.js";
export { Core, readOptions } from "./core.js";
