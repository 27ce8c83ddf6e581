#include "server/app/options.h"

#include <arpa/inet.h>

#include "server/app/config_options.h"
#include "server/app/cross_site.h"
#include "server/app/flag_rows.h"
#include "server/app/redis_url.h"
#include "server/app/secrets.h"

#include <boost/program_options.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <sstream>
#include <variant>

namespace anteroom {
namespace po = boost::program_options;

namespace {

// HOST of HOST:PORT, without the brackets of an [IPv6] host.
std::string host_of(const std::string& endpoint) {
  std::string h = endpoint.substr(0, endpoint.rfind(':'));
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return h;
}

}  // namespace

std::string Options::host() const { return host_of(listen); }
std::string Options::admin_host() const { return host_of(admin_listen); }
uint16_t Options::admin_port() const {
  return static_cast<uint16_t>(std::stoul(admin_listen.substr(admin_listen.rfind(':') + 1)));
}

uint16_t Options::port() const {
  return static_cast<uint16_t>(std::stoul(listen.substr(listen.rfind(':') + 1)));
}

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

Status check(Options& o) {
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

}  // namespace

namespace {

// The flag an ANTEROOM_* variable gives (variable_of); "" for any other variable.
std::string flag_of_variable(const std::string& env) {
  if (!env.starts_with("ANTEROOM_")) return "";
  for (const FlagRow& row : flag_rows()) {
    if (env == variable_of(row)) return row.name;
  }
  return "";
}

// Boost's what() fills the %placeholders% of its message with the flag and the value as
// typed, and loops for ever, growing the message, when what it fills in holds a placeholder
// itself (`--x%canonical_option%`; found by fuzz/options_fuzz.cc). Where a flag or an
// ANTEROOM_* variable holds a '%', the error is told without what(). What it fills in may
// also be a credential (`--admin-ky=SECRET`, a misspelling; a bad --cluster URL with its
// password), and errors end up in logs: an unknown flag is named without its value, and a
// credential's value is never shown (value_may_be_shown, config_options.h).
std::string describe(const po::error_with_option_name& e, const po::options_description& d,
                     int argc, char** argv) {
  std::string name = e.get_option_name();
  name = name.substr(0, name.find('='));
  if (dynamic_cast<const po::unknown_option*>(&e) != nullptr) {
    return "unrecognised option '" + name + "'";
  }
  const size_t dashes = name.find_first_not_of('-');
  const std::string flag = dashes == std::string::npos ? name : name.substr(dashes);
  if (dynamic_cast<const po::invalid_option_value*>(&e) != nullptr &&
      !value_may_be_shown(flag, d)) {
    return "the value given for " + name + " is not valid";
  }
  bool percent = false;
  for (int i = 1; i < argc; ++i) percent = percent || std::strchr(argv[i], '%') != nullptr;
  for (char** v = environ; v != nullptr && *v != nullptr; ++v) {
    percent = percent || (std::strncmp(*v, "ANTEROOM_", 9) == 0 && std::strchr(*v, '%') != nullptr);
  }
  if (!percent) return e.what();
  return "the flag " + name + " or its value is not valid";
}

// Values on their way from Boost to Options: a switch's (read as a boolean, so that a file's
// `no-persistence = true` reads) and an admission mode's (read as its name). Deques: Boost
// holds pointers into them.
struct Passing {
  std::deque<bool> switches;
  std::deque<std::string> modes;
};

// Each row as a Boost option bound to its Options field (or to `passing`), its default the
// field's value now.
struct AddRow {
  po::options_description& d;
  const FlagRow& row;
  Options& o;
  Passing& passing;
  void operator()(std::monostate) const { d.add_options()("help,h", row.help); }
  void operator()(std::string& (*get)(Options&)) const {
    auto* v = po::value(&get(o));
    if (!get(o).empty()) v->default_value(get(o));
    d.add_options()(row.name, v, row.help);
  }
  template <typename T>
  void operator()(T& (*get)(Options&)) const {
    d.add_options()(row.name, po::value(&get(o))->default_value(get(o)), row.help);
  }
  void operator()(std::vector<std::string>& (*get)(Options&)) const {
    d.add_options()(row.name, po::value(&get(o))->composing(), row.help);
  }
  void operator()(bool& (*)(Options&)) const {
    d.add_options()(row.name, po::bool_switch(&passing.switches.emplace_back(false)), row.help);
  }
  void operator()(AdmissionMode& (*get)(Options&)) const {
    const std::string now = admission_name(get(o));
    d.add_options()(row.name, po::value(&passing.modes.emplace_back(now))->default_value(now),
                    row.help);
  }
};

void add_flags(po::options_description& d, Options& o, Passing& passing) {
  for (const FlagRow& row : flag_rows()) std::visit(AddRow{d, row, o, passing}, row.target);
}

// The switches and modes `passing` holds into their fields, in the rows' order.
Status read_passing(Options& o, const Passing& passing) {
  size_t switches = 0, modes = 0;
  for (const FlagRow& row : flag_rows()) {
    if (auto* get = std::get_if<bool& (*)(Options&)>(&row.target)) {
      const bool on = passing.switches.at(switches++);
      (*get)(o) = row.negated ? !on : on;
    } else if (auto* mode = std::get_if<AdmissionMode& (*)(Options&)>(&row.target)) {
      const std::string& name = passing.modes.at(modes++);
      if (!is_choice(row.choices, name)) {
        return Status(Code::kInvalidArgument,
                      "--" + std::string(row.name) + " must be " + said_choices(row.choices));
      }
      (*mode)(o) = name == "manual" ? AdmissionMode::kManual : AdmissionMode::kAuto;
    }
  }
  return Status::ok();
}

// The first lines of --help: where flags come from besides the command line.
std::string help_caption() {
  std::vector<std::string> words;
  for (const char* w : {"Flags",
                        "(every",
                        "one",
                        "but",
                        "--help",
                        "also",
                        "from",
                        "its",
                        "ANTEROOM_*",
                        "variable,",
                        "the",
                        "name",
                        "in",
                        "capitals",
                        "with",
                        "_",
                        "for",
                        "-",
                        "(--room-capacity:",
                        "ANTEROOM_ROOM_CAPACITY);",
                        "any",
                        "but",
                        "--help",
                        "and",
                        "--config",
                        "also",
                        "as",
                        "`name",
                        "=",
                        "value`",
                        "in",
                        "the",
                        "--config",
                        "file,",
                        "which",
                        "both",
                        "win",
                        "over)"}) {
    words.emplace_back(w);
  }
  std::string caption = "anteroom: a virtual waiting room\n\nusage: anteroom [flags]\n\n";
  size_t line = 0;
  for (const std::string& w : words) {  // lines of at most 90 characters
    if (line != 0 && line + 1 + w.size() > 90) {
      caption += '\n';
      line = 0;
    } else if (line != 0) {
      caption += ' ';
      ++line;
    }
    caption += w;
    line += w.size();
  }
  return caption;
}

}  // namespace

namespace {

// A flag taking an unsigned number given a negative one, on the command line or in the
// environment, is refused as the file refuses it (store_config_flags). A variable the
// command line overrides is not looked at, as Boost does not read it either.
Status refuse_negative(const po::parsed_options& given, const po::options_description& d,
                       const po::variables_map& before, bool environment) {
  for (const po::option& opt : given.options) {
    const po::option_description* option = d.find_nothrow(opt.string_key, false);
    if (option == nullptr) continue;
    if (auto it = before.find(opt.string_key);
        environment && it != before.end() && !it->second.defaulted()) {
      continue;
    }
    std::string source = "option '--" + opt.string_key + "'";
    if (environment) {
      std::string var = "ANTEROOM_" + opt.string_key;
      for (char& c : var) c = c == '-' ? '_' : static_cast<char>(std::toupper(c));
      source = var + " (--" + opt.string_key + ")";
    }
    for (const std::string& value : opt.value) {
      if (negative_for_unsigned(*option, value)) {
        std::string why = "the argument ('";
        why += value;
        why += "') for ";
        why += source;
        why += " is invalid";
        return Status(Code::kInvalidArgument, why);
      }
    }
  }
  return Status::ok();
}

}  // namespace

Result<Options> parse_options(int argc, char** argv, std::string* exit_now) {
  Options o;
  Passing passing;
  po::options_description d(help_caption());
  add_flags(d, o, passing);
  po::variables_map vm;
  std::optional<ConfigFile> file;
  FileFlags from_file;  // the flags the file set, and where
  try {
    // Whole flag names only: a guessed abbreviation (--thr for --threads) would start
    // meaning another flag the day one with the same beginning is added.
    namespace style = po::command_line_style;
    const po::parsed_options command_line =
        po::command_line_parser(argc, argv)
            .options(d)
            .style(style::default_style & ~style::allow_guessing)
            .run();
    if (Status st = refuse_negative(command_line, d, vm, false); !st.is_ok()) return st;
    po::store(command_line, vm);
    const po::parsed_options environment = po::parse_environment(d, flag_of_variable);
    if (Status st = refuse_negative(environment, d, vm, true); !st.is_ok()) return st;
    po::store(environment, vm);
    if (vm.count("help") == 0 && vm.count("config") != 0) {
      auto read = read_config_file(vm["config"].as<std::string>());
      if (!read.is_ok()) return read.status();
      file = std::move(read).value();
      if (Status st = store_config_flags(*file, d, &vm, &from_file); !st.is_ok()) return st;
    }
    po::notify(vm);
  } catch (const po::error_with_option_name& e) {
    return Status(Code::kInvalidArgument, describe(e, d, argc, argv));
  } catch (const po::error& e) {
    return Status(Code::kInvalidArgument, e.what());
  }
  if (vm.count("help") != 0) {
    std::ostringstream s;
    s << d;
    *exit_now = s.str();
    return o;
  }
  Status st = read_passing(o, passing);
  if (st.is_ok()) st = check(o);
  if (!st.is_ok()) return file ? attribute(st, *file, from_file) : st;
  if (file) {
    if (Status rooms = declare_rooms(*file, &o); !rooms.is_ok()) return rooms;
  }
  return o;
}

}  // namespace anteroom
