#include "server/app/config_options.h"

#include <boost/json/parse.hpp>

#include "server/app/declared_rooms.h"
#include "server/app/flag_rows.h"
#include "server/app/json_text.h"

namespace anteroom {
namespace po = boost::program_options;
namespace json = boost::json;

namespace {

Status bad(const std::string& message) { return Status(Code::kInvalidArgument, message); }

// Keys the file may not hold: --help prints and exits, and a file cannot name another; a
// key is a flag's long name ("-h" would otherwise find help's short one).
bool command_line_only(const std::string& key) {
  return key == "help" || key == "h" || key == "config" || key.starts_with('-');
}

// A room setting's value as JSON: numbers, true and false as themselves, anything else
// (auto, manual, fifo, anything quoted) as a string, so that PUT's checks tell what is wrong.
json::value setting_value(const ConfigEntry& e) {
  if (!e.quoted) {
    boost::system::error_code ec;
    json::value v = json::parse(e.value, ec);
    if (!ec && (v.is_number() || v.is_bool())) return v;
  }
  return json::value(e.value);
}

// The first word of an engine check's message ("admit_per_second applies to ..."): the field.
std::string first_word(const std::string& message) { return message.substr(0, message.find(' ')); }

}  // namespace

bool negative_for_unsigned(const po::option_description& option, const std::string& value) {
  const po::value_semantic* v = option.semantic().get();
  const bool is_unsigned = dynamic_cast<const po::typed_value<unsigned>*>(v) != nullptr ||
                           dynamic_cast<const po::typed_value<unsigned long>*>(v) != nullptr ||
                           dynamic_cast<const po::typed_value<unsigned long long>*>(v) != nullptr;
  return is_unsigned && value.find('-') != std::string::npos;
}

Status store_config_flags(const ConfigFile& file, const po::options_description& d,
                          po::variables_map* vm, FileFlags* used) {
  std::map<std::string, bool> given_before;  // by the command line or the environment
  for (const auto& [key, value] : *vm) given_before[key] = !value.defaulted();
  std::map<std::string, unsigned> seen;
  for (const ConfigEntry& e : file.flags) {
    const po::option_description* option = d.find_nothrow(e.key, false);
    if (option == nullptr || command_line_only(e.key)) {
      return bad(file.where(e.line) + "unknown key \"" + e.key + "\"");
    }
    const bool repeatable = option->semantic()->is_composing();
    if (negative_for_unsigned(*option, e.value)) {
      return bad(file.where(e.line) + "\"" + shown_value(e.key, e.value, d) +
                 "\" is not a valid value for " + e.key);
    }
    if (auto first = seen.find(e.key); first != seen.end() && !repeatable) {
      return bad(file.where(e.line) + e.key + " is set twice (first on line " +
                 std::to_string(first->second) + ")");
    }
    seen.emplace(e.key, e.line);
    po::parsed_options one(&d);
    one.options.emplace_back(e.key, std::vector<std::string>{e.value});
    po::variables_map scratch;  // a value the command line overrides is checked here
    const bool overridden = given_before[e.key];
    try {
      po::store(one, overridden ? scratch : *vm);
    } catch (const po::error&) {  // its what() may loop on '%' (see options.cc describe())
      return bad(file.where(e.line) + "\"" + shown_value(e.key, e.value, d) +
                 "\" is not a valid value for " + e.key);
    }
    if (!overridden) used->emplace(e.key, std::make_pair(e.line, e.value));
  }
  return Status::ok();
}

bool value_may_be_shown(std::string_view flag, const po::options_description& d) {
  const FlagRow* row = find_flag(flag);
  return row != nullptr && !row->secret && d.find_nothrow(std::string(flag), false) != nullptr;
}

std::string shown_value(std::string_view flag, const std::string& value,
                        const po::options_description& d) {
  return value_may_be_shown(flag, d) ? value : "(hidden)";
}

Status attribute(const Status& st, const ConfigFile& file, const FileFlags& used) {
  const std::string& m = st.message();
  for (size_t at = m.find("--"); at != std::string::npos; at = m.find("--", at + 2)) {
    const size_t end = m.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-", at + 2);
    const auto [first, last] =
        used.equal_range(m.substr(at + 2, end == std::string::npos ? end : end - at - 2));
    if (first == last) continue;
    auto it = first;  // a repeated flag: the line whose value the message quotes
    for (auto i = first; i != last; ++i) {
      if (m.find("'" + i->second.second + "'") != std::string::npos) it = i;
    }
    return Status(st.code(), file.where(it->second.first) + m);
  }
  return st;
}

Status declare_rooms(const ConfigFile& file, Options* o) {
  for (const ConfigRoom& room : file.rooms) {
    const std::string name = "room " + room.name + ": ";
    json::object settings;
    std::map<std::string, unsigned> lines;
    for (const ConfigEntry& e : room.settings) {
      if (auto first = lines.find(e.key); first != lines.end()) {
        return bad(file.where(e.line) + name + e.key + " is set twice (first on line " +
                   std::to_string(first->second) + ")");
      }
      json::object one;
      one[e.key] = setting_value(e);
      RoomConfig scratch = o->room;  // each setting read alone first, to tell its line
      if (Status st = read_room_settings(one, &scratch); !st.is_ok()) {
        return bad(file.where(e.line) + name + st.message());
      }
      lines.emplace(e.key, e.line);
      settings[e.key] = one[e.key];
    }
    // Then together, as one PUT body (admission: manual alone also sets admit_per_second 0).
    RoomConfig c = o->room;
    Status st = read_room_settings(settings, &c);
    if (st.is_ok()) st = c.validate();
    if (!st.is_ok()) {  // a check across fields: told at the line of the field it names
      auto it = lines.find(first_word(st.message()));
      return bad(file.where(it != lines.end() ? it->second : room.line) + name + st.message());
    }
    o->rooms.push_back({room.name, file.where(room.line), to_json(settings)});
  }
  return Status::ok();
}

}  // namespace anteroom
