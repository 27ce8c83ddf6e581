// The Markdown report: the summary that goes into results/ next to the JSON, short enough
// to read in a terminal or a pull request.
#include <algorithm>
#include <cstdio>

#include "loadgen/report.h"
#include "loadgen/report_format.h"

namespace anteroom::loadgen {
namespace {

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// A fence longer than any run of backticks inside, so the command cannot close it.
std::string fence_for(const std::string& text) {
  size_t longest = 0;
  size_t run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

void latency_table(const Phase& ph, std::string& out) {
  out += "| latency (ms) | count | p50 | p90 | p99 | p99.9 | max |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|\n";
  auto row = [&](const char* name, const Histogram& h) {
    out += std::string("| ") + name + " | " + std::to_string(h.count()) + " | " +
           ms(h.percentile(50)) + " | " + ms(h.percentile(90)) + " | " + ms(h.percentile(99)) +
           " | " + ms(h.percentile(99.9)) + " | " + ms(h.max()) + " |\n";
  };
  latency_rows(ph, row);
}

void phase_section(const Phase& ph, std::string& out) {
  out += "\n## Phase: " + ph.name + " (" + fixed(ph.duration_s, 1) + " s)\n\n";
  const VisitCounts& v = ph.visits;
  out +=
      "| planned | joined | admitted | used | left | abandoned | expired | unresolved | "
      "failed |\n";
  out += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (uint64_t n : {v.planned, v.joined, v.admitted, v.used, v.left, v.abandoned, v.expired,
                     v.unresolved, v.failed}) {
    out += "| " + std::to_string(n) + " ";
  }
  out += "|\n\n";

  uint64_t requests = ph.requests();
  double rps = ph.duration_s > 0 ? static_cast<double>(requests) / ph.duration_s : 0.0;
  out += "- Requests: " + std::to_string(requests) + " (" + fixed(rps, 1) + "/s), error rate " +
         fixed(ph.error_rate() * 100, 2) + " %\n";
  if (v.moved != 0) {
    out += "- Moved to another target (their node went away): " + std::to_string(v.moved) + "\n";
  }
  std::string errors;
  for (int k = 0; k < kErrorKinds; ++k) {
    if (ph.errors[k] == 0) continue;
    if (!errors.empty()) errors += ", ";
    errors += std::string(error_kind_name(static_cast<ErrorKind>(k))) + " " +
              std::to_string(ph.errors[k]);
  }
  out += "- Errors: " + (errors.empty() ? std::string("none") : errors) + "\n";
  for (int k = 0; k < kErrorKinds; ++k) {
    const char* advice = error_kind_advice(static_cast<ErrorKind>(k));
    if (ph.errors[k] != 0 && advice != nullptr) {
      out += "  - " + std::to_string(ph.errors[k]) + " " + advice + "\n";
    }
  }
  out += "- Max open sessions: " + std::to_string(ph.max_open_sessions) + "\n";
  const Histogram& tta = ph.time_to_admission;
  if (tta.count() > 0) {
    out += "- Time to admission: p50 " + secs(tta.percentile(50)) + " s, p99 " +
           secs(tta.percentile(99)) + " s, max " + secs(tta.max()) + " s (" +
           std::to_string(tta.count()) + " visitors)\n";
  } else {
    out += "- Time to admission: no admissions\n";
  }
  const TruthChecks& t = ph.truth;
  out += "- Truth: inversions " + std::to_string(t.inversions) + ", join-order violations " +
         std::to_string(t.join_order_violations) + ", positions grew " +
         std::to_string(t.positions_grew) + ", unresolved " + std::to_string(t.unresolved) + "\n\n";
  if (requests > 0) {
    latency_table(ph, out);
  } else {
    out += "No requests answered.\n";
  }
}

}  // namespace

std::string report_markdown(const RunResult& run) {
  std::string out = "# anteroom-loadgen: " + run.scenario + "\n\n";
  std::string fence = fence_for(run.command);
  out += fence + "\n" + run.command + "\n" + fence + "\n\n";
  out += "- Machine: " + run.machine + "\n";
  out += "- Started: " + run.started_at + "\n";
  out += "- Processes: " + std::to_string(run.processes) +
         ", source addresses: " + std::to_string(run.source_addresses) + "\n\n";

  size_t failed = 0;
  for (const Check& c : run.checks) failed += c.passed ? 0 : 1;
  out += run.passed() ? "**Verdict: PASS**" : "**Verdict: FAIL**";
  if (run.checks.empty()) {
    out += " (no checks)";
  } else {
    out += " (" + std::to_string(failed) + " of " + std::to_string(run.checks.size()) +
           " checks failed)";
  }
  out += "\n";

  if (!run.checks.empty()) {
    out += "\n## Checks\n\n| check | result | detail |\n|---|---|---|\n";
    for (const Check& c : run.checks) {
      out += "| " + cell(c.name) + " | " + (c.passed ? "PASS" : "**FAIL**") + " | " +
             cell(c.detail) + " |\n";
    }
  }
  if (!run.metrics.empty()) {
    out += "\n## Metrics\n\n| metric | value | unit |\n|---|---:|---|\n";
    for (const Metric& m : run.metrics) {
      out += "| " + cell(m.name) + " | " + metric_value(m.value) + " | " + cell(m.unit) + " |\n";
    }
  }
  if (!run.config.empty()) {
    out += "\n## Configuration\n\n| setting | value |\n|---|---|\n";
    for (const auto& [key, value] : run.config) {
      out += "| " + cell(key) + " | " + cell(value) + " |\n";
    }
  }
  for (const Phase& ph : run.phases) phase_section(ph, out);
  return out;
}

}  // namespace anteroom::loadgen
