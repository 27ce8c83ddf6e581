#include "server/app/redis_url.h"

#include <charconv>

namespace anteroom {
namespace {

Status bad(const std::string& why) { return Status(Code::kInvalidArgument, "--cluster: " + why); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 3986 percent-decoding; false on a broken escape.
bool percent_decode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      *out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    *out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

// HOST:PORT, HOST a name, an IPv4 address or [IPv6]; a port of 1-65535.
Status parse_host_port(std::string_view s, std::pair<std::string, uint16_t>* out) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return bad("each address must be HOST:PORT (e.g. 127.0.0.1:6379)");
  }
  std::string_view host = s.substr(0, colon), port = s.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad("an IPv6 host must be in [brackets]");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 host must be in [brackets]");
  }
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_' || c == ':';
    if (!ok) return bad("a host may hold only letters, digits and . - _ (or [IPv6])");
  }
  unsigned p = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (ec != std::errc() || end != port.data() + port.size() || p == 0 || p > 65535) {
    return bad("a port must be 1-65535");
  }
  *out = {std::string(host), static_cast<uint16_t>(p)};
  return Status::ok();
}

// Comma-separated HOST:PORT items.
Status parse_hosts(std::string_view s, std::vector<std::pair<std::string, uint16_t>>* out) {
  for (;;) {
    const size_t comma = s.find(',');
    std::pair<std::string, uint16_t> hp;
    if (Status st = parse_host_port(s.substr(0, comma), &hp); !st.is_ok()) return st;
    out->push_back(std::move(hp));
    if (comma == std::string_view::npos) return Status::ok();
    s = s.substr(comma + 1);
  }
}

// USER:PASSWORD@, :PASSWORD@ or USER@ (the password given apart, ANTEROOM_REDIS_PASSWORD)
// before the host, if any; *rest is after it.
Status parse_userinfo(std::string_view* rest, RedisTarget* t) {
  const size_t at = rest->rfind('@');
  if (at == std::string_view::npos) return Status::ok();
  const std::string_view info = rest->substr(0, at);
  *rest = rest->substr(at + 1);
  const size_t colon = info.find(':');
  std::string user, password;
  if (!percent_decode(info.substr(0, colon), &user) ||
      (colon != std::string_view::npos && !percent_decode(info.substr(colon + 1), &password))) {
    return bad("a %-escape in the user or password is broken");
  }
  if (user.empty() && password.empty())
    return bad("nothing before '@': give USER, USER:PASSWORD or :PASSWORD");
  if (colon != std::string_view::npos && password.empty()) {
    return bad("the URL names a user and an empty password: leave out the colon to give it apart");
  }
  t->user = std::move(user);
  t->password = std::move(password);
  return Status::ok();
}

// One redis:// or rediss:// item (after its scheme): [userinfo@]HOST:PORT[/DB].
Status parse_url_item(std::string_view s, RedisTarget* t, bool first) {
  RedisTarget item;
  if (Status st = parse_userinfo(&s, &item); !st.is_ok()) return st;
  const size_t slash = s.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view db = s.substr(slash + 1);
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(db.data(), db.data() + db.size(), n);
    if (db.empty() || ec != std::errc() || end != db.data() + db.size() || n > 15) {
      return bad("the database after '/' must be a number from 0 to 15");
    }
    item.db = n;
    s = s.substr(0, slash);
  }
  std::pair<std::string, uint16_t> hp;
  if (Status st = parse_host_port(s, &hp); !st.is_ok()) return st;
  if (first) {
    t->user = item.user;
    t->password = item.password;
    t->db = item.db;
  } else if (item.user != t->user || item.password != t->password || item.db != t->db) {
    return bad("every URL of a Redis Cluster must name the same user, password and database");
  }
  t->hosts.push_back(std::move(hp));
  return Status::ok();
}

}  // namespace

Result<RedisTarget> parse_redis_target(std::string_view text) {
  RedisTarget t;
  if (text.empty()) return bad("empty");
  constexpr std::string_view kSentinel = "redis-sentinel://";
  if (text.starts_with(kSentinel)) {
    t.scheme = RedisTarget::Scheme::kSentinel;
    t.url = true;
    std::string_view rest = text.substr(kSentinel.size());
    if (Status st = parse_userinfo(&rest, &t); !st.is_ok()) return st;
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos || slash + 1 == rest.size()) {
      return bad("redis-sentinel:// needs the master's name: redis-sentinel://HOST:PORT/MASTER");
    }
    t.master = std::string(rest.substr(slash + 1));
    if (t.master.find_first_of("/,@ ") != std::string::npos) {
      return bad("the master's name may not hold / , @ or spaces");
    }
    if (Status st = parse_hosts(rest.substr(0, slash), &t.hosts); !st.is_ok()) return st;
    return t;
  }
  const bool url = text.find("://") != std::string_view::npos;
  if (!url) {
    if (Status st = parse_hosts(text, &t.hosts); !st.is_ok()) return st;
    return t;
  }
  t.url = true;
  bool first = true;
  for (;;) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    RedisTarget::Scheme scheme;
    if (item.starts_with("redis://")) {
      scheme = RedisTarget::Scheme::kPlain;
      item.remove_prefix(8);
    } else if (item.starts_with("rediss://")) {
      scheme = RedisTarget::Scheme::kTls;
      item.remove_prefix(9);
    } else {
      return bad(item.find("://") != std::string_view::npos
                     ? "the scheme must be redis://, rediss:// or redis-sentinel://"
                     : "in a list of URLs every item must be a URL");
    }
    if (!first && scheme != t.scheme) return bad("every URL must have the same scheme");
    t.scheme = scheme;
    if (Status st = parse_url_item(item, &t, first); !st.is_ok()) return st;
    first = false;
    if (comma == std::string_view::npos) return t;
    text = text.substr(comma + 1);
  }
}

}  // namespace anteroom
