#include "server/app/options.h"

#include "server/app/config_options.h"
#include "server/app/flag_rows.h"
#include "server/app/options_check.h"

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
  if (st.is_ok()) st = check_options(o);
  if (!st.is_ok()) return file ? attribute(st, *file, from_file) : st;
  if (file) {
    if (Status rooms = declare_rooms(*file, &o); !rooms.is_ok()) return rooms;
  }
  return o;
}

}  // namespace anteroom
