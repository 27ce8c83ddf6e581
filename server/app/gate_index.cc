#include "server/app/gate_index.h"

#include <algorithm>
#include <cctype>

#include "server/app/route_table.h"

namespace anteroom {

GateIndex::GateIndex(const std::vector<RoomInfo>& rooms) {
  for (const RoomInfo& r : rooms) {
    if (r.config.gate.empty() && r.config.passes.empty()) continue;
    rooms_.push_back(
        Room{r.name, GateSettings::from_stored(r.config.gate), r.config.lanes, r.config.passes});
  }
  for (size_t i = 0; i < rooms_.size(); ++i) {
    by_name_.emplace(rooms_[i].name, i);
    for (const MatchRule& m : rooms_[i].settings.match) {
      entries_.push_back(Entry{m.host, m.path_prefix, i});
    }
  }
  std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    if (a.prefix.size() != b.prefix.size()) return a.prefix.size() > b.prefix.size();
    return !a.host.empty() && b.host.empty();
  });
}

bool host_fits(std::string_view rule_host, std::string_view host) {
  if (rule_host.empty()) return true;
  if (host.size() < rule_host.size()) return false;
  for (size_t i = 0; i < rule_host.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(host[i])) != rule_host[i]) return false;
  }
  // The same host, or the same with a port the rule does not name.
  return host.size() == rule_host.size() ||
         (host[rule_host.size()] == ':' && rule_host.find(':') == std::string_view::npos);
}

namespace {

// "%2F", "%3F", "%23" (any case): "/secret%3f.css" ends in ".css" only to an origin that
// does not decode before it splits off the query.
bool has_encoded_separator(std::string_view raw) {
  for (size_t i = raw.find('%'); i != std::string_view::npos; i = raw.find('%', i + 1)) {
    const std::string_view code = raw.substr(i + 1, 2);
    if (code == "2F" || code == "2f" || code == "3F" || code == "3f" || code == "23") return true;
  }
  return false;
}

bool starts_with_any_case(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

const GateIndex::Room* GateIndex::find(std::string_view host, std::string_view path,
                                       std::string_view raw) const {
  // Each rule in its order, fitting any form of the path: the gate protects what an origin
  // might read as the rule's prefix (raw, or in another case), never less.
  for (const Entry& e : entries_) {
    if (!host_fits(e.host, host)) continue;
    if (path.starts_with(e.prefix) || (!raw.empty() && raw.starts_with(e.prefix)) ||
        starts_with_any_case(path, e.prefix)) {
      return &rooms_[e.room];
    }
  }
  return nullptr;
}

std::string gate_host(std::string_view host) {
  std::string h(host);
  for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // "shop.example." is shop.example (nginx routes it so); a port stays.
  if (const size_t dot = h.find_last_not_of("0123456789:");
      dot != std::string::npos && h[dot] == '.' && (dot + 1 == h.size() || h[dot + 1] == ':')) {
    h.erase(dot, 1);
  }
  return h;
}

bool GateIndex::sole_room(std::string_view host, const Room* room) const {
  for (const Entry& e : entries_) {
    const std::string_view named = std::string_view(e.host).substr(0, e.host.find(':'));
    if ((named.empty() || named == host) && &rooms_[e.room] != room) return false;
  }
  return true;
}

const GateIndex::Room* GateIndex::room(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &rooms_[it->second];
}

bool has_cookie(std::string_view cookies, std::string_view name) {
  for (size_t i = 0; i < cookies.size();) {
    while (i < cookies.size() && (cookies[i] == ' ' || cookies[i] == ';')) ++i;
    const size_t end = std::min(cookies.find(';', i), cookies.size());
    const std::string_view pair = cookies.substr(i, end - i);
    if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=') {
      return true;
    }
    i = end;
  }
  return false;
}

namespace {

bool contains_any_case(std::string_view haystack, std::string_view lowered_needle) {
  if (lowered_needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + lowered_needle.size() <= haystack.size(); ++i) {
    size_t k = 0;
    while (k < lowered_needle.size() &&
           std::tolower(static_cast<unsigned char>(haystack[i + k])) == lowered_needle[k]) {
      ++k;
    }
    if (k == lowered_needle.size()) return true;
  }
  return false;
}

}  // namespace

bool bypasses(const BypassRule& rule, const GateRequest& r) {
  const std::string_view raw = r.raw.empty() ? r.path : r.raw;
  if (!rule.path_prefix.empty() &&
      !(r.path.starts_with(rule.path_prefix) && raw.starts_with(rule.path_prefix))) {
    return false;
  }
  if (!rule.path_suffix.empty() &&
      (!(r.path.ends_with(rule.path_suffix) && raw.ends_with(rule.path_suffix)) ||
       has_encoded_separator(raw))) {
    return false;
  }
  if (rule.methods != 0 && (rule.methods & method_bit(r.method)) == 0) return false;
  if (!rule.cidr.empty() && std::none_of(rule.cidr.begin(), rule.cidr.end(),
                                         [&](const Network& n) { return n.contains(r.client); })) {
    return false;
  }
  if (!rule.user_agent.empty() && !contains_any_case(r.user_agent, rule.user_agent)) return false;
  if (!rule.header_name.empty()) {
    const std::string_view value =
        r.headers != nullptr ? r.headers->get(rule.header_name) : std::string_view{};
    if (value.find(rule.header_contains) == std::string_view::npos) return false;
  }
  return rule.cookie.empty() || has_cookie(r.cookies, rule.cookie);
}

}  // namespace anteroom
