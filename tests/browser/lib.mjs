// What the browser tests share: an anteroom on a port of the kernel's choosing, and Debian's
// chromium, headless, launched by playwright-core (never a downloaded browser).
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

// Starts `binary` in memory (no persistence) with the admin key `key` and `extra` flags;
// resolves once it listens, with the process, its base URL and its data folder.
export async function startServer(binary, key, extra = []) {
  const dataDir = mkdtempSync(join(tmpdir(), "anteroom-browser-"));
  const server = spawn(binary, ["--listen", "127.0.0.1:0", "--data-dir", dataDir, "--no-persistence",
    "--admin-key", key, "--token-secret", "browser-test-token-secret-0123456789", ...extra],
    { stdio: ["ignore", "pipe", "inherit"] });
  const firstLine = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once("line", resolve);
    server.once("exit", () => reject(new Error("anteroom exited")));
    setTimeout(() => reject(new Error("anteroom did not start")), 10000);
  });
  const base = firstLine.match(/^anteroom listening on (http:\/\/[\d.]+:\d+)$/)[1];
  return { server, base, dataDir };
}

export function launchChromium() {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
