#!/usr/bin/env python3
"""Runs anteroom-bench once and writes results/engine.md: every figure of the sharded
engine beside the mutex yardstick's from the same run, with the ratio, the command and
the machine.

usage: bench/report.py [BENCH_BINARY] [OUTPUT]   (defaults: build/bench/anteroom-bench,
                                                    results/engine.md)
       bench/report.py --json RUN.json [OUTPUT]   (render a saved run again)
The raw JSON of each run is kept beside the output as engine.json.
"""
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone

FROM_JSON = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--json" else None
ARGV = sys.argv[3:] if FROM_JSON else sys.argv[1:]
BINARY = "build/bench/anteroom-bench" if FROM_JSON or not ARGV else ARGV[0]
OUTPUT = (ARGV[0] if FROM_JSON and ARGV else ARGV[1] if len(ARGV) > 1 and not FROM_JSON
          else "results/engine.md")
ARGS = ["--benchmark_min_time=0.5", "--benchmark_format=json"]


def machine():
    cpu = "unknown cpu"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    return (f"{cpu}, {os.cpu_count()} cores, {mem_kb / 1024 / 1024:.0f} GiB, "
            f"Linux {platform.release()}")


def rate(b):
    return b.get("items_per_second", 0.0)


def key(b):
    # BM_Status/0/1000/real_time/threads:2 -> (BM_Status, 1000, 2). The token and
    # proof-of-work benchmarks (BM_TokenSign/0, BM_PowCheck) have no size: "" stands for it.
    parts = b["run_name"].split("/") + ["", ""]
    threads = 1
    for p in parts:
        if p.startswith("threads:"):
            threads = int(p.split(":")[1])
    return parts[0], parts[2], threads, parts[1]


def targets(by, data, w):
    """The targets docs/engine.md sets, each checked against this run."""
    def r(name, size, threads, kind="0"):
        b = by.get((name, str(size), threads, kind))
        return rate(b) if b else 0.0

    mem = {b.get("label"): b for b in data["benchmarks"]
           if b["run_name"].startswith("BM_MemoryPerTicket")}
    lat = by.get(("BM_StatusLatency", "1000000", 1, "0"), {})
    rows = []
    for size in (1000, 100000, 1000000):
        rows.append((f"join, 1 thread, room {size:,}", ">= 5 M/s",
                     f"{r('BM_Join', size, 1) / 1e6:.1f} M/s", r("BM_Join", size, 1) >= 5e6))
    for size in (1000, 100000, 1000000):
        rows.append((f"status, 2 threads, room {size:,}", ">= 20 M/s",
                     f"{r('BM_Status', size, 2) / 1e6:.1f} M/s",
                     r("BM_Status", size, 2) >= 20e6))
    for size in (1000, 100000, 1000000):
        s, m = r("BM_JoinStatusMix", size, 2), r("BM_JoinStatusMix", size, 2, "1")
        rows.append((f"50/50 join/status, 2 threads, room {size:,}", ">= 3x mutex",
                     f"{s / m:.1f}x" if m else "-", m > 0 and s / m >= 3))
    anon = mem.get("sharded anonymous", {}).get("resident_bytes_per_ticket", 0)
    named = mem.get("sharded named users", {}).get("resident_bytes_per_ticket", 0)
    rows.append(("memory per waiting ticket at 1M, anonymous", "<= 64 B", f"{anon:.1f} B",
                 0 < anon <= 64))
    rows.append(("memory per waiting ticket at 1M, named users", "<= 64 B", f"{named:.1f} B",
                 0 < named <= 64))
    p99 = lat.get("p99_ns", 0)
    rows.append(("status p99, room of 1M", "< 1 us", f"{p99:.0f} ns", 0 < p99 < 1000))
    through = next((b for b in data["benchmarks"]
                    if b["run_name"].startswith("BM_TicketsPassThrough")), {})
    ratio = through.get("peak_over_live_only", 0)
    rows.append(("10M tickets pass, 10k live: peak memory over a room of 10k", "<= 2x",
                 f"{ratio:.2f}x", 0 < ratio <= 2))
    w("## Targets, checked against this run")
    w("")
    w("| target | goal | measured | met |")
    w("|---|---|---:|---|")
    for what, goal, got, ok in rows:
        w(f"| {what} | {goal} | {got} | {'yes' if ok else '**no**'} |")
    w("")


def main():
    if FROM_JSON:
        with open(FROM_JSON) as f:
            data = json.load(f)
    else:
        cmd = [BINARY] + ARGS
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        data = json.loads(out)
        data["anteroom_machine"] = machine()
        data["anteroom_date"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        with open(os.path.join(os.path.dirname(OUTPUT), "engine.json"), "w") as f:
            json.dump(data, f, indent=1)
    by = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name, size, threads, kind = key(b)
        by[(name, size, threads, kind)] = b

    lines = []
    w = lines.append
    w("# Engine benchmarks")
    w("")
    w(f"- Command: `{' '.join([BINARY, '--benchmark_min_time=0.5'])}` "
      "(via `bench/report.py`, which writes this file)")
    w(f"- Machine: {data['anteroom_machine']}")
    w(f"- Date: {data['anteroom_date']}; raw numbers in `results/engine.json`")
    w("- Build: CMake Release (`-O3 -DNDEBUG`), GCC 12, one run; `sharded` is anteroom's "
      "engine, `mutex` the obvious one-mutex implementation of the same interface, measured "
      "in the same process. Ratio = sharded / mutex. The machine is shared and noisy: read "
      "the ratios, not the absolute numbers.")
    w("- Rooms are in manual admission with no capacity limit (nothing is admitted behind a "
      "benchmark's back); 'room' is how many tickets are already waiting; ids are read in a "
      "random order, as from a real crowd.")
    w("")
    targets(by, data, w)
    w("## Throughput (operations per second, all threads together)")
    w("")
    w("| operation | room | threads | sharded | mutex | ratio |")
    w("|---|---:|---:|---:|---:|---:|")
    names = ["BM_Join", "BM_Status", "BM_Peek", "BM_Heartbeat", "BM_JoinStatusMix",
             "BM_Leave", "BM_Admit"]
    for name in names:
        rows = sorted({(int(k[1]), k[2]) for k in by if k[0] == name})
        for size, threads in rows:
            s = by.get((name, str(size), threads, "0"))
            m = by.get((name, str(size), threads, "1"))
            if not s or not m:
                continue
            w(f"| {name[3:]} | {size:,} | {threads} | {rate(s) / 1e6:.2f} M/s | "
              f"{rate(m) / 1e6:.2f} M/s | {rate(s) / rate(m):.1f}x |")
    w("")
    w("## Status latency in a room of 1,000,000 waiting tickets (one thread, each call timed)")
    w("")
    w("| engine | p50 | p99 | p99.9 |")
    w("|---|---:|---:|---:|")
    for kind, label in (("0", "sharded"), ("1", "mutex")):
        b = by.get(("BM_StatusLatency", "1000000", 1, kind))
        if b:
            w(f"| {label} | {b['p50_ns']:.0f} ns | {b['p99_ns']:.0f} ns | {b['p999_ns']:.0f} ns |")
    w("")
    w("## Memory per waiting ticket, room of 1,000,000")
    w("")
    w("Resident-set growth of the process while one fresh engine fills the room, divided by "
      "the tickets (measured first in the run). 'Allocated' is the sharded engine's own count "
      "of what it reserved for slots, hole trees and users. A Redis sorted set needs about "
      "141 bytes per member.")
    w("")
    w("| engine | joins | resident bytes / ticket | allocated bytes / ticket |")
    w("|---|---|---:|---:|")
    for b in data["benchmarks"]:
        if not b["run_name"].startswith("BM_MemoryPerTicket"):
            continue
        alloc = b.get("allocated_bytes_per_ticket")
        label = b.get("label", "")
        engine, _, joins = label.partition(" ")
        w(f"| {engine} | {joins} | {b['resident_bytes_per_ticket']:.1f} | "
          f"{f'{alloc:.1f}' if alloc else '-'} |")
    w("")
    w("## Memory that follows the live tickets")
    w("")
    w("`BM_TicketsPassThrough`: 10,000,000 anonymous tickets join one room and the oldest "
      "leaves whenever more than 10,000 are live, the owner's pass running as the server's "
      "pump runs it; the room's peak allocation is set against a room that simply holds "
      "10,000 tickets. `BM_RoomsWithOneNamedVisitor`: 10,000 rooms with one named join each, "
      "resident-set growth per room.")
    w("")
    w("| benchmark | figure |")
    w("|---|---|")
    for b in data["benchmarks"]:
        if b["run_name"].startswith("BM_TicketsPassThrough"):
            w(f"| 10M through, 10k live: peak allocated | {b['peak_bytes'] / 1e3:.0f} kB "
              f"({b['peak_over_live_only']:.2f}x the {b['live_only_bytes'] / 1e3:.0f} kB of "
              f"10k held) |")
            w(f"| 10M through, 10k live: process RSS growth | {b['rss_growth_bytes'] / 1e6:.1f} MB |")
        if b["run_name"].startswith("BM_RoomsWithOneNamedVisitor"):
            w(f"| a room with one named visitor (10,000 rooms) | "
              f"{b['resident_bytes_per_room'] / 1024:.1f} KiB resident per room |")
    w("")
    with open(OUTPUT, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
