// The HTML report: the Markdown summary as tables plus SVG charts per phase, in one file that
// opens anywhere offline (inline style only; no scripts, fonts, images or links elsewhere).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "loadgen/report.h"
#include "loadgen/report_format.h"
#include "loadgen/svg_chart.h"

namespace anteroom::loadgen {
namespace {

constexpr int kAdmissionBins = 24;

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 980px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
pre { background: #f4f4f4; padding: 0.6em; overflow-x: auto; white-space: pre-wrap; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #17692d; font-weight: bold; }
.fail { color: #b00020; font-weight: bold; }
.verdict { font-size: 1.3em; }
svg.chart { display: block; margin: 0.8em 0; max-width: 100%; height: auto; }
)";

std::string esc(const std::string& s) { return xml_escape(s); }

std::string td(const std::string& escaped_text, bool numeric = false) {
  return numeric ? "<td class=\"n\">" + escaped_text + "</td>" : "<td>" + escaped_text + "</td>";
}

std::string header_row(const std::vector<std::string>& names) {
  std::string out = "<tr>";
  for (const std::string& n : names) out += "<th>" + esc(n) + "</th>";
  return out + "</tr>\n";
}

std::string pass_fail(bool passed) {
  return passed ? "<span class=\"pass\">PASS</span>" : "<span class=\"fail\">FAIL</span>";
}

void summary(const RunResult& run, std::string& out) {
  out += "<pre><code>" + esc(run.command) + "</code></pre>\n<table>\n";
  out += "<tr><th>machine</th>" + td(esc(run.machine)) + "</tr>\n";
  out += "<tr><th>started</th>" + td(esc(run.started_at)) + "</tr>\n";
  out += "<tr><th>processes</th>" + td(std::to_string(run.processes)) + "</tr>\n";
  out += "<tr><th>source addresses</th>" + td(std::to_string(run.source_addresses)) + "</tr>\n";
  out += "</table>\n";

  size_t failed = 0;
  for (const Check& c : run.checks) failed += c.passed ? 0 : 1;
  out += "<p class=\"verdict\">Verdict: " + pass_fail(run.passed());
  out += run.checks.empty() ? std::string(" (no checks)")
                            : " (" + std::to_string(failed) + " of " +
                                  std::to_string(run.checks.size()) + " checks failed)";
  out += "</p>\n";

  if (!run.checks.empty()) {
    out += "<h2>Checks</h2>\n<table>\n" + header_row({"check", "result", "detail"});
    for (const Check& c : run.checks) {
      out += "<tr>" + td(esc(c.name)) + td(pass_fail(c.passed)) + td(esc(c.detail)) + "</tr>\n";
    }
    out += "</table>\n";
  }
  if (!run.metrics.empty()) {
    out += "<h2>Metrics</h2>\n<table>\n" + header_row({"metric", "value", "unit"});
    for (const Metric& m : run.metrics) {
      out +=
          "<tr>" + td(esc(m.name)) + td(metric_value(m.value), true) + td(esc(m.unit)) + "</tr>\n";
    }
    out += "</table>\n";
  }
  if (!run.config.empty()) {
    out += "<h2>Configuration</h2>\n<table>\n" + header_row({"setting", "value"});
    for (const auto& [key, value] : run.config) {
      out += "<tr>" + td(esc(key)) + td(esc(value)) + "</tr>\n";
    }
    out += "</table>\n";
  }
}

void phase_tables(const Phase& ph, std::string& out) {
  const VisitCounts& v = ph.visits;
  out += "<table>\n" + header_row({"planned", "joined", "admitted", "used", "left", "abandoned",
                                   "expired", "unresolved", "failed"});
  out += "<tr>";
  for (uint64_t n : {v.planned, v.joined, v.admitted, v.used, v.left, v.abandoned, v.expired,
                     v.unresolved, v.failed}) {
    out += td(std::to_string(n), true);
  }
  out += "</tr>\n</table>\n";

  uint64_t requests = ph.requests();
  double rps = ph.duration_s > 0 ? static_cast<double>(requests) / ph.duration_s : 0.0;
  const Histogram& tta = ph.time_to_admission;
  const TruthChecks& t = ph.truth;
  out += "<table>\n";
  auto row = [&](const std::string& name, const std::string& value) {
    out += "<tr><th>" + esc(name) + "</th>" + td(value, true) + "</tr>\n";
  };
  row("requests", std::to_string(requests));
  row("throughput (requests/s)", fixed(rps, 1));
  row("error rate", fixed(ph.error_rate() * 100, 2) + " %");
  row("max open sessions", std::to_string(ph.max_open_sessions));
  if (tta.count() > 0) {
    row("time to admission p50 / p99 / max (s)",
        secs(tta.percentile(50)) + " / " + secs(tta.percentile(99)) + " / " + secs(tta.max()));
  } else {
    row("time to admission", "no admissions");
  }
  row("truth: inversions", std::to_string(t.inversions));
  row("truth: join-order violations", std::to_string(t.join_order_violations));
  row("truth: positions grew", std::to_string(t.positions_grew));
  row("truth: unresolved", std::to_string(t.unresolved));
  out += "</table>\n";

  out += "<table>\n<tr><th>errors</th>";
  for (int k = 0; k < kErrorKinds; ++k) {
    out += "<th>" + esc(error_kind_name(static_cast<ErrorKind>(k))) + "</th>";
  }
  out += "</tr>\n<tr><th>count</th>";
  for (int k = 0; k < kErrorKinds; ++k) out += td(std::to_string(ph.errors[k]), true);
  out += "</tr>\n</table>\n";

  if (requests == 0) return;
  out += "<table>\n" + header_row({"latency (ms)", "count", "p50", "p90", "p99", "p99.9", "max"});
  auto latency_row = [&](const char* name, const Histogram& h) {
    out += "<tr>" + td(esc(name)) + td(std::to_string(h.count()), true) +
           td(ms(h.percentile(50)), true) + td(ms(h.percentile(90)), true) +
           td(ms(h.percentile(99)), true) + td(ms(h.percentile(99.9)), true) +
           td(ms(h.max()), true) + "</tr>\n";
  };
  latency_rows(ph, latency_row);
  out += "</table>\n";
}

// The time-to-admission histogram as kAdmissionBins equal bins from min to max (seconds).
// Each histogram bucket's count goes to the bin holding the bucket's midpoint (clamped to
// the exact min and max), so the shape is exact to within a bucket (under 1.6% of the value).
std::string admission_chart(const Histogram& h) {
  std::vector<double> bins(kAdmissionBins, 0.0);
  double low = static_cast<double>(h.min());
  double high = static_cast<double>(h.max());
  for (const auto& [index, count] : h.nonzero()) {
    uint64_t mid = Histogram::bucket_low(index) +
                   (Histogram::bucket_high(index) - Histogram::bucket_low(index)) / 2;
    double v = std::clamp(static_cast<double>(mid), low, high);
    size_t bin = 0;
    if (high > low) {
      double pos = (v - low) / (high - low) * kAdmissionBins;
      bin = std::min(static_cast<size_t>(pos), static_cast<size_t>(kAdmissionBins - 1));
    }
    bins[bin] += static_cast<double>(count);
  }
  if (!(high > low)) bins.resize(1);  // every visitor waited the same time
  return bar_chart("Time to admission", "seconds from arrival to ALLOWED", "visitors", low / 1e6,
                   high / 1e6, bins);
}

void phase_charts(const Phase& ph, std::string& out) {
  size_t n = ph.seconds.size();
  const double gap = std::numeric_limits<double>::quiet_NaN();
  Series requests{"requests/s", "#1f77b4", {}};
  Series errors{"errors/s", "#d62728", {}};
  Series p50{"p50", "#2ca02c", {}};
  Series p99{"p99", "#ff7f0e", {}};
  Series p999{"p99.9", "#d62728", {}};
  Series waiting{"waiting", "#9467bd", {}};
  Series active{"active", "#2ca02c", {}};
  Series open{"open sessions", "#1f77b4", {}};
  for (Series* s : {&requests, &errors, &p50, &p99, &p999, &waiting, &active, &open}) {
    s->y.reserve(n);
  }
  for (const SecondBucket& b : ph.seconds) {
    requests.y.push_back(static_cast<double>(b.requests));
    errors.y.push_back(static_cast<double>(b.errors));
    // A second without answers has no latency; a gap says so better than a drop to 0.
    bool any = b.latency.count() > 0;
    p50.y.push_back(any ? static_cast<double>(b.latency.percentile(50)) / 1000.0 : gap);
    p99.y.push_back(any ? static_cast<double>(b.latency.percentile(99)) / 1000.0 : gap);
    p999.y.push_back(any ? static_cast<double>(b.latency.percentile(99.9)) / 1000.0 : gap);
    waiting.y.push_back(static_cast<double>(b.waiting));
    active.y.push_back(static_cast<double>(b.active));
    open.y.push_back(static_cast<double>(b.open_sessions));
  }
  out += line_chart("Requests and errors per second", "seconds", "per second", {requests, errors});
  out += line_chart("Latency percentiles per second", "seconds", "ms", {p50, p99, p999});
  out += line_chart("Visitors and sessions", "seconds", "count", {waiting, active, open});
  out += admission_chart(ph.time_to_admission);
}

}  // namespace

std::string report_html(const RunResult& run) {
  std::string title = "anteroom-loadgen: " + run.scenario;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + esc(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>" + esc(title) + "</h1>\n";
  summary(run, out);
  for (const Phase& ph : run.phases) {
    out += "<h2>Phase: " + esc(ph.name) + " (" + fixed(ph.duration_s, 1) + " s)</h2>\n";
    phase_tables(ph, out);
    phase_charts(ph, out);
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace anteroom::loadgen
