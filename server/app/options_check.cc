// The checks that read several flags together, or a row's bounds and characters
// (options.h's parse_options runs them): endpoints, proxies, origins, the Redis of
// --cluster and its access, the room defaults.
#include "server/app/options_check.h"

#include <arpa/inet.h>

#include <string>
#include <variant>
#include <vector>

#include "server/app/cross_site.h"
#include "server/app/flag_rows.h"
#include "server/app/redis_url.h"
#include "server/app/secrets.h"

namespace anteroom {

namespace {

// "1.2.3.4", "1.2.3.0/24", "::1", "fd00::/8".
bool valid_cidr(const std::string& cidr) {
  const size_t slash = cidr.find('/');
  const std::string address = cidr.substr(0, slash);
  const bool v6 = address.find(':') != std::string::npos;
  unsigned char buf[16];
  if (inet_pton(v6 ? AF_INET6 : AF_INET, address.c_str(), buf) != 1) return false;
  if (slash == std::string::npos) return true;
  const std::string bits = cidr.substr(slash + 1);
  if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos)
    return false;
  return std::stoi(bits) <= (v6 ? 128 : 32);
}

// HOST:PORT with a port of 0-65535; else why not, naming `flag`.
std::string check_endpoint(const char* flag, const std::string& value) {
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == value.size()) {
    return std::string(flag) + " must be HOST:PORT, e.g. 127.0.0.1:8080";
  }
  const std::string port = value.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoul(port) > 65535) {
    return std::string(flag) + " port must be 0-65535";
  }
  return "";
}

// A room default's check ("admit_per_second applies to ...") told with its flag's name.
std::string room_flag_message(const std::string& message) {
  const std::string field = message.substr(0, message.find(' '));
  for (const FlagRow& row : flag_rows()) {
    if (row.room_field != nullptr && field == row.room_field) {
      return "--" + std::string(row.name) + message.substr(field.size());
    }
  }
  return "--room-" + message;
}

// The first row whose value its bounds, its choices or its strength refuse, and why.
struct RowCheck {
  const FlagRow& row;
  std::string flag() const { return "--" + std::string(row.name); }
  std::string operator()(std::monostate) const { return ""; }
  std::string operator()(bool& (*)(Options&)) const { return ""; }
  std::string operator()(std::vector<std::string>& (*)(Options&)) const { return ""; }
  std::string operator()(AdmissionMode& (*)(Options&)) const { return ""; }  // read_passing
  std::string operator()(unsigned& (*get)(Options&)) const { return number(get(o)); }
  std::string operator()(uint64_t& (*get)(Options&)) const { return number(get(o)); }
  std::string operator()(std::string& (*get)(Options&)) const {
    const std::string& v = get(o);
    if (row.choices != nullptr && !is_choice(row.choices, v)) {
      return flag() + " must be " + said_choices(row.choices);
    }
    if (row.charset != nullptr && v.find_first_not_of(row.charset) != std::string::npos) {
      return flag() + ": only " + row.charset_text;
    }
    if (row.min_secret != 0 && !v.empty()) return weak_secret(flag(), v, row.min_secret);
    return "";
  }
  std::string number(uint64_t v) const {
    if (v >= row.min && v <= row.max) return "";
    const std::string unit = *row.unit == '\0' ? "" : std::string(" ") + row.unit;
    if (row.max == UINT64_MAX) return flag() + " must be >= " + std::to_string(row.min) + unit;
    if (row.min == 0) return flag() + " must be at most " + std::to_string(row.max) + unit;
    return flag() + " must be " + std::to_string(row.min) + "-" + std::to_string(row.max) + unit;
  }
  Options& o;
};

std::string check_rows(Options& o) {
  for (const FlagRow& row : flag_rows()) {
    if (std::string why = std::visit(RowCheck{row, o}, row.target); !why.empty()) return why;
  }
  return "";
}

// The first --allow-origin that is not an origin, and why; empty if all are.
std::string check_origins(const std::vector<std::string>& origins) {
  for (const std::string& origin : origins) {
    if (std::string why = check_origin(origin); !why.empty()) {
      std::string m = "--allow-origin '";
      m += origin;
      m += "' ";
      m += why;
      return m;
    }
  }
  return "";
}

}  // namespace

Status check_options(Options& o) {
  auto bad = [](const std::string& m) { return Status(Code::kInvalidArgument, m); };
  if (std::string why = check_rows(o); !why.empty()) return bad(why);
  if (std::string why = check_endpoint("--listen", o.listen); !why.empty()) return bad(why);
  if (!o.admin_listen.empty()) {
    if (std::string why = check_endpoint("--admin-listen", o.admin_listen); !why.empty())
      return bad(why);
    // The same address twice cannot both bind, unless the port is 0 (each gets its own).
    if (o.admin_listen == o.listen && o.port() != 0) {
      return bad("--admin-listen must differ from --listen");
    }
  }
  if (!o.public_url.empty() && !o.public_url.starts_with("https://") &&
      !o.public_url.starts_with("http://")) {
    return bad("--public-url must start with https:// or http://");
  }
  if (o.operator_reserve >= o.max_connections)
    return bad("--operator-reserve must be smaller than --max-connections");
  if (o.token_alg != "ES256" && (!o.token_key.empty() || !o.token_key_previous.empty())) {
    return bad("--token-key and --token-key-previous need --token-alg ES256");
  }
  if (std::string why = check_origins(o.allow_origins); !why.empty()) return bad(why);
  // A value may list several, comma-separated, spaces around each ignored (one
  // ANTEROOM_TRUSTED_PROXY gives them all).
  std::vector<std::string> proxies;
  for (const std::string& value : o.trusted_proxies) {
    for (size_t at = 0; at <= value.size();) {
      size_t comma = value.find(',', at);
      if (comma == std::string::npos) comma = value.size();
      std::string item = value.substr(at, comma - at);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      proxies.push_back(std::move(item));
      at = comma + 1;
    }
  }
  o.trusted_proxies = std::move(proxies);
  for (const std::string& cidr : o.trusted_proxies) {
    if (!valid_cidr(cidr)) return bad("--trusted-proxy '" + cidr + "' is not an address or a CIDR");
  }
  if (!o.cluster.empty()) {
    auto target = parse_redis_target(o.cluster);
    if (!target.is_ok()) return target.status();
    if (target->db != 0) {
      return bad(
          "--cluster: anteroom keeps its keys in database 0 (Pub/Sub is shared by all "
          "databases); leave /DB out of the URL");
    }
    if (!target->password.empty() && !o.redis_password.empty()) {
      return bad(
          "--cluster: the password is given twice (in the URL and by --redis-password "
          "or ANTEROOM_REDIS_PASSWORD)");
    }
    const bool tls_file =
        !o.redis_tls_ca.empty() || !o.redis_tls_cert.empty() || !o.redis_tls_key.empty();
    // Through Sentinel, a TLS option is what says TLS (to the Sentinels and the master).
    if (tls_file && target->scheme == RedisTarget::Scheme::kPlain) {
      return bad(
          "--redis-tls-ca, --redis-tls-cert and --redis-tls-key need a rediss:// or "
          "redis-sentinel:// --cluster");
    }
  } else if (!o.redis_password.empty() || !o.redis_tls_ca.empty() || !o.redis_tls_cert.empty() ||
             !o.redis_tls_key.empty()) {
    return bad("--redis-password and --redis-tls-* need --cluster");
  }
  if (!o.demo_room.empty() && !valid_room_name(o.demo_room)) {
    return bad("--demo-room: room names are 1-64 characters of A-Z a-z 0-9 _ -");
  }
  if (Status st = o.room.validate(); !st.is_ok()) return bad(room_flag_message(st.message()));
  return Status::ok();
}

}  // namespace anteroom
