// The JSON report: everything in RunResult, with histograms reduced to their percentiles.
// Key names are read by the tests and by scripts/; change them only together.
#include <boost/json.hpp>
#include <charconv>
#include <cmath>

#include "loadgen/report.h"

namespace anteroom::loadgen {
namespace {

namespace json = boost::json;

// Dividing by a power of ten (not multiplying by 0.1) gives the double whose shortest form is
// the rounded decimal: 13434.9, not 13434.900000000001.
double round_to(double v, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

json::object histogram_us(const Histogram& h) {
  return {{"count", h.count()},         {"min", h.min()},          {"mean", round_to(h.mean(), 1)},
          {"p50", h.percentile(50)},    {"p90", h.percentile(90)}, {"p99", h.percentile(99)},
          {"p999", h.percentile(99.9)}, {"max", h.max()}};
}

json::object histogram_ms(const Histogram& h) {
  auto ms = [](double us) { return round_to(us / 1000.0, 1); };
  auto pct = [&](double p) { return ms(static_cast<double>(h.percentile(p))); };
  return {{"count", h.count()},   {"min", ms(static_cast<double>(h.min()))},
          {"mean", ms(h.mean())}, {"p50", pct(50)},
          {"p90", pct(90)},       {"p99", pct(99)},
          {"p999", pct(99.9)},    {"max", ms(static_cast<double>(h.max()))}};
}

json::object phase_json(const Phase& ph) {
  const VisitCounts& v = ph.visits;
  json::object visits{{"planned", v.planned},   {"joined", v.joined},
                      {"admitted", v.admitted}, {"used", v.used},
                      {"left", v.left},         {"abandoned", v.abandoned},
                      {"expired", v.expired},   {"unresolved", v.unresolved},
                      {"failed", v.failed},     {"moved", v.moved}};
  json::object errors;
  for (int k = 0; k < kErrorKinds; ++k) {
    errors[error_kind_name(static_cast<ErrorKind>(k))] = ph.errors[k];
  }
  json::object latency;
  Histogram all;
  for (int k = 0; k < kRequestKinds; ++k) {
    const Histogram& h = ph.latency[k];
    all.merge(h);
    if (h.count() > 0) latency[request_kind_name(static_cast<RequestKind>(k))] = histogram_us(h);
  }
  latency["all"] = histogram_us(all);

  json::array seconds;
  for (size_t t = 0; t < ph.seconds.size(); ++t) {
    const SecondBucket& s = ph.seconds[t];
    seconds.push_back(json::object{{"t", t},
                                   {"requests", s.requests},
                                   {"errors", s.errors},
                                   {"admitted", s.admitted},
                                   {"open_sessions", s.open_sessions},
                                   {"waiting", s.waiting},
                                   {"active", s.active},
                                   {"p50_us", s.latency.percentile(50)},
                                   {"p99_us", s.latency.percentile(99)},
                                   {"p999_us", s.latency.percentile(99.9)}});
  }
  uint64_t requests = ph.requests();
  double rps = ph.duration_s > 0 ? static_cast<double>(requests) / ph.duration_s : 0.0;
  return {{"name", ph.name},
          {"duration_s", ph.duration_s},
          {"visits", std::move(visits)},
          {"max_open_sessions", ph.max_open_sessions},
          {"requests", requests},
          {"throughput_rps", round_to(rps, 2)},
          {"error_rate", ph.error_rate()},
          {"errors", std::move(errors)},
          {"latency_us", std::move(latency)},
          {"time_to_admission_ms", histogram_ms(ph.time_to_admission)},
          {"truth",
           {{"inversions", ph.truth.inversions},
            {"join_order_violations", ph.truth.join_order_violations},
            {"positions_grew", ph.truth.positions_grew},
            {"unresolved", ph.truth.unresolved}}},
          {"seconds", std::move(seconds)}};
}

// Boost.JSON writes doubles as 1.5E0; the shortest round-trip form reads better, and a
// non-finite value (which JSON cannot hold) becomes null.
void write_scalar(const json::value& v, std::string& out) {
  if (v.is_double()) {
    double d = v.get_double();
    if (!std::isfinite(d)) {
      out += "null";
      return;
    }
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, d);
    out.append(buf, res.ptr);
    return;
  }
  out += json::serialize(v);
}

bool is_flat(const json::value& v) {
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) {
      if (kv.value().is_structured()) return false;
    }
    return true;
  }
  if (v.is_array()) {
    for (const auto& e : v.get_array()) {
      if (e.is_structured()) return false;
    }
    return true;
  }
  return true;
}

void write_value(const json::value& v, std::string& out, int indent);

// A container of scalars goes on one line (a per-second record, a histogram); anything else
// gets one member per line, indented by two spaces a level.
void write_compact(const json::value& v, std::string& out) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& kv : v.get_object()) {
      if (!first) out += ", ";
      first = false;
      out += json::serialize(json::string(kv.key()));
      out += ": ";
      write_scalar(kv.value(), out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& e : v.get_array()) {
      if (!first) out += ", ";
      first = false;
      write_scalar(e, out);
    }
    out += ']';
  } else {
    write_scalar(v, out);
  }
}

void write_value(const json::value& v, std::string& out, int indent) {
  if (!v.is_structured() || is_flat(v)) {
    write_compact(v, out);
    return;
  }
  std::string pad(static_cast<size_t>(indent + 2), ' ');
  if (v.is_object()) {
    out += "{\n";
    bool first = true;
    for (const auto& kv : v.get_object()) {
      if (!first) out += ",\n";
      first = false;
      out += pad + json::serialize(json::string(kv.key())) + ": ";
      write_value(kv.value(), out, indent + 2);
    }
    out += "\n" + std::string(static_cast<size_t>(indent), ' ') + "}";
  } else {
    out += "[\n";
    bool first = true;
    for (const auto& e : v.get_array()) {
      if (!first) out += ",\n";
      first = false;
      out += pad;
      write_value(e, out, indent + 2);
    }
    out += "\n" + std::string(static_cast<size_t>(indent), ' ') + "]";
  }
}

}  // namespace

std::string report_json(const RunResult& run) {
  json::object config;
  for (const auto& [key, value] : run.config) config[key] = value;
  json::array metrics;
  for (const Metric& m : run.metrics) {
    metrics.push_back(json::object{{"name", m.name}, {"value", m.value}, {"unit", m.unit}});
  }
  json::array checks;
  for (const Check& c : run.checks) {
    checks.push_back(json::object{{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
  }
  json::array phases;
  for (const Phase& ph : run.phases) phases.push_back(phase_json(ph));

  json::value doc = json::object{{"scenario", run.scenario},
                                 {"command", run.command},
                                 {"machine", run.machine},
                                 {"started_at", run.started_at},
                                 {"passed", run.passed()},
                                 {"processes", run.processes},
                                 {"source_addresses", run.source_addresses},
                                 {"config", std::move(config)},
                                 {"metrics", std::move(metrics)},
                                 {"checks", std::move(checks)},
                                 {"phases", std::move(phases)}};
  std::string out;
  write_value(doc, out, 0);
  out += '\n';
  return out;
}

}  // namespace anteroom::loadgen
