"""results/integrations.md from bench/gate_bench.sh's rows: each subject beside the anchor run
just before it, the ratio taken pair by pair."""
import statistics
import sys

rows_file, rounds, duration, machine, nginx_version, caddy_version = sys.argv[1:7]
rows = [line.split() for line in open(rows_file) if line.strip()]

WHAT = {
    "gate_traefik": ("gate decision, asked Traefik's way (X-Forwarded-*)", "nginx `return 200`", "1.0"),
    "gate_nginx": ("gate decision, asked nginx's way (a fresh cookie on each 200)", "nginx `return 200`", "1.0"),
    "page_gate": ("2 KB page through nginx, anteroom.conf (a gate subrequest each)", "nginx serving the page", "0.8"),
    "page_fast": ("2 KB page through nginx, anteroom-fast-pass.conf, valid fast pass", "nginx serving the page", "0.8"),
    "asset_bypass": ("stylesheet on a bypass rule, no cookie, anteroom.conf", "nginx serving it", "0.95"),
    "asset_fast": ("stylesheet with a fast pass, anteroom-fast-pass.conf", "nginx serving it", "0.95"),
    "caddy_gate": ("2 KB page through Caddy, deploy/caddy/Caddyfile", "Caddy serving the page", "-"),
}
def met(ratio, target):
    return "-" if target == "-" else ("yes" if ratio >= float(target) else "no")


pairs = {}
errors = {}
for i in range(1, len(rows)):
    name, rps, errs = rows[i]
    if name in WHAT:
        anchor = rows[i - 1]
        pairs.setdefault(name, []).append((float(rps), float(anchor[1])))
        errors[name] = errors.get(name, 0) + int(errs) + int(anchor[2])

print("# The gate in front of a site: benchmarks\n")
print(f"Command: `bench/gate_bench.sh {rounds} {duration}` (wrk -t2 -c100, {duration} s per run, "
      f"each subject run right after its anchor, {rounds} rounds). Machine: {machine}; "
      f"nginx {nginx_version}, Caddy {caddy_version}, all on loopback, anteroom with 2 I/O "
      "threads, sharing the 2 cores with the proxy and wrk.\n")
print("The ratio is the subject's requests per second over its anchor's in the same round; "
      "the range is over the rounds. Each anchor is sent what its subject is sent (Host, and "
      "the visitor's cookies: about 500 bytes). Configuration: one room (`shop`) with 20 "
      "bypass rules, nine more rooms, 100 `match` rules in all.\n")
print("| subject | anchor | subject req/s (median) | anchor req/s (median) | ratio (median) | ratio range | target | met | errors |")
print("|---|---|---:|---:|---:|---|---:|---|---:|")
for name, (what, anchor, target) in WHAT.items():
    if name not in pairs:
        continue
    ratios = [s / a for s, a in pairs[name]]
    subj = statistics.median(s for s, _ in pairs[name])
    anch = statistics.median(a for _, a in pairs[name])
    print(f"| {what} | {anchor} | {subj:,.0f} | {anch:,.0f} | {statistics.median(ratios):.2f}x | "
          f"{min(ratios):.2f}-{max(ratios):.2f}x | {target} | {met(statistics.median(ratios), target)} | "
          f"{errors[name]} |")
print("""
Errors are socket errors and answers that are not 2xx, of both runs in each pair.

What the figures say:
- **The gate decision** answers a returning visitor from the thread's memo of cookies it has
  read through (server/app/admission_memo.h): no decode, no signature check, no key hash;
  what remains is the HTTP exchange, the rule lookup and the ticket's check in the engine.
  Asked nginx's way, each 200 also signs a fresh token.
- **A page through nginx with a gate subrequest each** pays a second HTTP exchange per
  request on the same two cores. The fast pass (deploy/nginx/anteroom-fast-pass.conf,
  docs/integrations.md "nginx's fast pass") takes that exchange away for
  `--fast-pass-seconds` after each admitted request; its cost is that a ticket that ends
  still passes nginx that long.
- **Assets**: a bypass rule still costs the subrequest (the gate decides it); with a fast
  pass, which a browsing visitor has, assets cost what the page does. A path that must never
  be asked about at all can be left out of `auth_request` in nginx's own config
  (`auth_request off;` in its location): nginx then serves it exactly as without anteroom.
- **Caddy** asks the gate on every request (`forward_auth` has no local check).
""")
# What the round that wrote this script found behind the missed targets (2026-12-04).
print("""Where the targets are not met (left open in the issue):
- The gate decision is about half of nginx's `return 200`. On this machine anteroom's own
  status route, the cheapest it has, was 0.72x of nginx the same day
  (`bench/server_bench.sh build/server/anteroom 3`), and in one run by hand the gate's
  decision (about 101k req/s) was no slower than that route (about 86k) under the same load.
  What is left is HTTP parsing, writing the answer and the engine's ticket check on two
  cores shared with wrk. A profile (perf, `wrk -t1 -c100`) shows no single cost above 9%.
  Two costs were taken out: the memo of verified cookies (50k to about 95k req/s) and waking
  a room on every use of a session.
- The fast pass costs nginx itself about a fifth of a static page: the `map`'s regular
  expression on the cookie, the MD5 of `secure_link` and the internal rewrite. Checked by
  hand with nginx alone (no anteroom): the check without the rewrite was 0.8-0.9x of the
  static page, within this machine's noise of about 15% between runs. The page's target
  (0.8x) is met in some rounds and missed by a little in the median; the asset's (0.95x) is
  not met. An asset folder that must cost nothing can be left out of `auth_request` in nginx
  itself.
- Caddy has no local check: every request costs a `forward_auth` round trip, 0.29x of
  Caddy serving the page alone.
""")
