#include "server/app/gate_settings.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include "engine/lane_schedule.h"
#include "server/app/route_table.h"

namespace anteroom {
namespace json = boost::json;

namespace {

constexpr std::string_view kGateFields[] = {"match",
                                            "bypass",
                                            "queueing_status_code",
                                            "gate_admits",
                                            "gate_cookies",
                                            "join_requires",
                                            "gate_probation_seconds",
                                            "lanes",
                                            "gate_ip_admits_per_minute"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f;
  });
}

// The reader's state: the first problem found, named by its field.
struct Reader {
  ApiResponse* err;
  bool fail(const std::string& field, const std::string& why) {
    *err = error_response(400, "invalid_field", field + " " + why);
    return false;
  }
  // A string member of a rule: absent is empty; at most `max` printable bytes.
  bool str(const json::object& o, const char* key, const std::string& where, size_t max,
           std::string* out) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr) return true;
    if (!v->is_string() || v->as_string().empty() || v->as_string().size() > max ||
        !printable(v->as_string())) {
      return fail(where + "." + key,
                  "must be a string of 1-" + std::to_string(max) + " printable bytes");
    }
    *out = std::string(v->as_string());
    return true;
  }
  bool keys(const json::object& o, std::initializer_list<std::string_view> allowed,
            const std::string& where) {
    for (const auto& kv : o) {
      if (std::find(allowed.begin(), allowed.end(), kv.key()) == allowed.end()) {
        return fail(where, "has an unknown field '" + std::string(kv.key()) + "'");
      }
    }
    return true;
  }
  // A path prefix as the rules compare it: plain, and ending in a slash only if given so.
  bool prefix(const json::object& o, const char* key, const std::string& where, std::string* out) {
    if (!str(o, key, where, 1024, out) || out->empty()) return true;
    if ((*out)[0] != '/') return fail(where + "." + key, "must start with '/'");
    auto plain = plain_path(*out);
    if (!plain) return fail(where + "." + key, "must decode to UTF-8 without NUL");
    if (out->back() != '/' && plain->size() > 1 && plain->back() == '/') plain->pop_back();
    *out = *plain;
    return true;
  }
  bool match_rule(const json::value& v, const std::string& where, MatchRule* m) {
    if (!v.is_object()) return fail(where, "must be an object {\"host\"?, \"path_prefix\"?}");
    const json::object& o = v.as_object();
    if (!keys(o, {"host", "path_prefix"}, where) || !str(o, "host", where, 255, &m->host) ||
        !prefix(o, "path_prefix", where, &m->path_prefix)) {
      return false;
    }
    m->host = lower(m->host);
    if (m->host.find_first_of("/ ") != std::string::npos) {
      return fail(where + ".host", "must be a host name, with a port if any");
    }
    if (m->host.empty() && m->path_prefix.empty()) {
      return fail(where, "must name a host, a path_prefix or both");
    }
    return true;
  }
  bool methods(const json::object& o, const std::string& where, uint8_t* out) {
    const json::value* v = o.if_contains("methods");
    if (v == nullptr) return true;
    if (!v->is_array() || v->as_array().empty()) return fail(where + ".methods", "must be a list");
    for (const json::value& m : v->as_array()) {
      const uint8_t bit = m.is_string() ? method_bit(m.as_string()) : 0;
      if (bit == 0 || bit == kOther) {
        return fail(where + ".methods", "must name GET, HEAD, POST, PUT or DELETE");
      }
      *out |= bit;
    }
    return true;
  }
  bool cidrs(const json::object& o, const std::string& where, std::vector<Network>* out) {
    const json::value* v = o.if_contains("cidr");
    if (v == nullptr) return true;
    std::vector<std::string_view> texts;
    if (v->is_string()) texts.emplace_back(v->as_string());
    if (v->is_array()) {
      for (const json::value& c : v->as_array()) {
        if (!c.is_string()) return fail(where + ".cidr", "must be a network or a list of them");
        texts.emplace_back(c.as_string());
      }
    }
    if (texts.empty() || texts.size() > 64) {
      return fail(where + ".cidr", "must be a network or a list of 1-64 of them");
    }
    for (std::string_view t : texts) {
      std::string why;
      auto n = parse_network(t, &why);
      if (!n) return fail(where + ".cidr", why);
      out->push_back(*n);
    }
    return true;
  }
  bool bypass_rule(const json::value& v, const std::string& where, BypassRule* b) {
    if (!v.is_object()) return fail(where, "must be an object");
    const json::object& o = v.as_object();
    if (!keys(o,
              {"name", "path_prefix", "path_suffix", "methods", "cidr", "user_agent", "header",
               "cookie"},
              where) ||
        !str(o, "name", where, 64, &b->name) || !prefix(o, "path_prefix", where, &b->path_prefix) ||
        !str(o, "path_suffix", where, 256, &b->path_suffix) || !methods(o, where, &b->methods) ||
        !cidrs(o, where, &b->cidr) || !str(o, "user_agent", where, 256, &b->user_agent) ||
        !str(o, "cookie", where, 128, &b->cookie)) {
      return false;
    }
    b->user_agent = lower(b->user_agent);
    if (const json::value* h = o.if_contains("header")) {
      const bool shape =
          h->is_object() && h->as_object().size() == 2 &&
          str(h->as_object(), "name", where + ".header", 128, &b->header_name) &&
          str(h->as_object(), "contains", where + ".header", 256, &b->header_contains) &&
          !b->header_name.empty() && !b->header_contains.empty();
      if (!shape) return fail(where + ".header", "must be {\"name\": ..., \"contains\": ...}");
    }
    if (b->name.empty()) {  // "bypass[12]": "rule12"
      const size_t open = where.find('[');
      b->name = "rule" + where.substr(open + 1, where.find(']') - open - 1);
    }
    for (char c : b->name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
        return fail(where + ".name", "must be letters, digits, _ and - only");
      }
    }
    if (b->path_prefix.empty() && b->path_suffix.empty() && b->methods == 0 && b->cidr.empty() &&
        b->user_agent.empty() && b->header_name.empty() && b->cookie.empty()) {
      return fail(where, "must set a condition (a rule without one would let everyone by)");
    }
    return true;
  }
};

template <typename T, typename F>
bool read_list(const json::object& o, const char* key, size_t max, Reader& r, std::vector<T>* out,
               F&& read_one) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return true;
  if (!v->is_array() || v->as_array().size() > max) {
    return r.fail(key, "must be a list of at most " + std::to_string(max));
  }
  out->clear();  // a list given replaces the room's
  for (size_t i = 0; i < v->as_array().size(); ++i) {
    T item;
    if (!read_one(v->as_array()[i], std::string(key) + "[" + std::to_string(i) + "]", &item)) {
      return false;
    }
    out->push_back(std::move(item));
  }
  return true;
}

}  // namespace

bool is_gate_field(std::string_view key) {
  return std::find(std::begin(kGateFields), std::end(kGateFields), key) != std::end(kGateFields);
}

namespace {

// The fields of a PUT body (or of what to_stored wrote) into *g and the lanes' weights.
bool read_gate(const json::object& o, GateSettings& g, std::vector<uint32_t>& weights,
               ApiResponse* err) {
  Reader r{err};
  if (!read_list(o, "match", GateSettings::kMaxMatch, r, &g.match,
                 [&](const json::value& v, const std::string& w, MatchRule* m) {
                   return r.match_rule(v, w, m);
                 }) ||
      !read_list(o, "bypass", GateSettings::kMaxBypass, r, &g.bypass,
                 [&](const json::value& v, const std::string& w, BypassRule* b) {
                   return r.bypass_rule(v, w, b);
                 })) {
    return false;
  }
  if (const json::value* v = o.if_contains("queueing_status_code")) {
    const int64_t code = v->is_int64() ? v->as_int64() : 0;
    if (code != 200 && code != 202 && code != 429 && code != 503) {
      return r.fail("queueing_status_code", "must be 200, 202, 429 or 503");
    }
    g.queueing_status_code = static_cast<unsigned>(code);
  }
  if (const json::value* v = o.if_contains("gate_admits")) {
    if (!v->is_bool()) return r.fail("gate_admits", "must be true or false");
    g.gate_admits = v->as_bool();
  }
  if (const json::value* v = o.if_contains("gate_probation_seconds")) {
    const int64_t s = v->is_int64() ? v->as_int64() : 0;
    if (s < 1 || s > JoinRequest::kMaxProbation) {
      return r.fail("gate_probation_seconds", "must be an integer from 1 to 4095");
    }
    g.gate_probation_seconds = static_cast<uint16_t>(s);
  }
  if (const json::value* v = o.if_contains("gate_ip_admits_per_minute")) {
    const int64_t n = v->is_int64() ? v->as_int64() : -1;
    if (n < 0 || n > 1'000'000) {
      return r.fail("gate_ip_admits_per_minute", "must be an integer from 0 to 1000000");
    }
    g.gate_ip_admits_per_minute = static_cast<uint32_t>(n);
  }
  if (const json::value* v = o.if_contains("gate_cookies")) {
    if (!v->is_string() || (v->as_string() != "redirect" && v->as_string() != "pass")) {
      return r.fail("gate_cookies", "must be \"redirect\" or \"pass\"");
    }
    g.gate_cookies_pass = v->as_string() == "pass";
  }
  if (const json::value* v = o.if_contains("join_requires")) {
    if (!v->is_string() || (v->as_string() != "none" && v->as_string() != "invite")) {
      return r.fail("join_requires", "must be \"none\" or \"invite\"");
    }
    g.invite_only = v->as_string() == "invite";
  }
  if (const json::value* v = o.if_contains("lanes")) {
    const bool list = v->is_array() && (v->as_array().empty() ||
                                        (v->as_array().size() >= 2 && v->as_array().size() <= 8));
    if (!list) return r.fail("lanes", "must be a list of 2 to 8 lanes (or empty: none)");
    g.lane_names.clear();
    weights.clear();
    for (size_t i = 0; i < v->as_array().size(); ++i) {
      const std::string w = "lanes[" + std::to_string(i) + "]";
      const json::value& lane = v->as_array()[i];
      std::string name;
      if (!lane.is_object() || !r.keys(lane.as_object(), {"name", "weight"}, w) ||
          !r.str(lane.as_object(), "name", w, 64, &name) || name.empty()) {
        return r.fail(w, "must be {\"name\": ..., \"weight\": 1-1000}");
      }
      const json::value* weight = lane.as_object().if_contains("weight");
      const int64_t n = weight != nullptr && weight->is_int64() ? weight->as_int64() : 0;
      if (n < 1 || n > 1000) return r.fail(w + ".weight", "must be an integer from 1 to 1000");
      if (std::find(g.lane_names.begin(), g.lane_names.end(), name) != g.lane_names.end()) {
        return r.fail(w + ".name", "is the name of another lane");
      }
      g.lane_names.push_back(name);
      weights.push_back(static_cast<uint32_t>(n));
    }
  }
  return true;
}

json::array rules_json(const GateSettings& g) {
  json::array bypass;
  for (const BypassRule& b : g.bypass) {
    json::object o;
    o["name"] = b.name;
    if (!b.path_prefix.empty()) o["path_prefix"] = b.path_prefix;
    if (!b.path_suffix.empty()) o["path_suffix"] = b.path_suffix;
    if (b.methods != 0) {
      json::array m;
      for (uint8_t bit : {kGet, kHead, kPost, kPut, kDelete}) {
        if ((b.methods & bit) != 0) m.emplace_back(allow_header(bit));
      }
      o["methods"] = std::move(m);
    }
    if (!b.cidr.empty()) {
      json::array c;
      for (const Network& n : b.cidr) c.emplace_back(n.text());
      o["cidr"] = std::move(c);
    }
    if (!b.user_agent.empty()) o["user_agent"] = b.user_agent;
    if (!b.header_name.empty()) {
      o["header"] = json::object{{"name", b.header_name}, {"contains", b.header_contains}};
    }
    if (!b.cookie.empty()) o["cookie"] = b.cookie;
    bypass.emplace_back(std::move(o));
  }
  return bypass;
}

void put_common(const GateSettings& g, json::object& o) {
  json::array match;
  for (const MatchRule& m : g.match) {
    json::object r;
    if (!m.host.empty()) r["host"] = m.host;
    if (!m.path_prefix.empty()) r["path_prefix"] = m.path_prefix;
    match.emplace_back(std::move(r));
  }
  o["match"] = std::move(match);
  o["bypass"] = rules_json(g);
  o["queueing_status_code"] = g.queueing_status_code;
  o["gate_admits"] = g.gate_admits;
  o["gate_probation_seconds"] = g.gate_probation_seconds;
  o["gate_ip_admits_per_minute"] = g.gate_ip_admits_per_minute;
  o["gate_cookies"] = g.gate_cookies_pass ? "pass" : "redirect";
  o["join_requires"] = g.invite_only ? "invite" : "none";
}

}  // namespace

bool read_gate_fields(const json::object& o, RoomConfig* c, ApiResponse* err) {
  // The room's as they are: a PUT changes the fields it names and keeps the others.
  GateSettings g = GateSettings::from_stored(c->gate);
  std::vector<uint32_t> weights = c->lanes;
  if (!read_gate(o, g, weights, err)) return false;
  c->gate = g.to_stored();
  c->lanes = std::move(weights);
  return true;
}

std::string GateSettings::to_stored() const {
  const GateSettings defaults;
  if (match.empty() && bypass.empty() && queueing_status_code == defaults.queueing_status_code &&
      gate_admits == defaults.gate_admits &&
      gate_probation_seconds == defaults.gate_probation_seconds &&
      gate_ip_admits_per_minute == defaults.gate_ip_admits_per_minute &&
      gate_cookies_pass == defaults.gate_cookies_pass && invite_only == defaults.invite_only &&
      lane_names.empty()) {
    return {};
  }
  json::object o;
  put_common(*this, o);
  json::array names;
  for (const std::string& n : lane_names) names.emplace_back(n);
  o["lane_names"] = std::move(names);
  return json::serialize(o);
}

GateSettings GateSettings::from_stored(std::string_view stored) {
  GateSettings g;
  if (stored.empty()) return g;
  boost::system::error_code ec;
  json::value v = json::parse(stored, ec);
  if (ec || !v.is_object()) return g;  // written by to_stored: never
  json::object& o = v.as_object();
  if (const json::value* names = o.if_contains("lane_names"); names && names->is_array()) {
    for (const json::value& n : names->as_array()) {
      if (n.is_string()) g.lane_names.emplace_back(n.as_string());
    }
  }
  o.erase("lane_names");
  std::vector<std::string> names = g.lane_names;
  std::vector<uint32_t> weights;
  ApiResponse ignored;
  read_gate(o, g, weights, &ignored);
  g.lane_names = std::move(names);
  return g;
}

void GateSettings::put_fields(json::object& o, const std::vector<uint32_t>& weights) const {
  put_common(*this, o);
  json::array lanes;
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string name = i < lane_names.size() ? lane_names[i] : "lane" + std::to_string(i);
    lanes.emplace_back(json::object{{"name", name}, {"weight", weights[i]}});
  }
  o["lanes"] = std::move(lanes);
}

uint8_t GateSettings::lane_index(std::string_view name) const {
  for (size_t i = 0; i < lane_names.size(); ++i) {
    if (lane_names[i] == name) return static_cast<uint8_t>(i);
  }
  return JoinRequest::kLastLane;
}

}  // namespace anteroom
